"""Where each narrated sentence lies in the book's pages, and which clip of its chapter's audio
reads it: the text and the audio of a read-aloud book aligned.

The sentences are made of the subtitles' cues (`export.subtitles`: a long sentence has several,
and is highlighted whole, as one thing to follow while reading, unless its words are timed).

In the text. The pieces (the subtitle cues of every chapter, as the engine's text was cut) and
the pages' skeleton (`pages.skeleton`: letters and digits only) are compared skeleton to
skeleton, so what normalisation changed (quotes, dashes, ligatures, footnote marks) does not
matter.

1. Anchors: each piece is looked for after the previous one, together with the pieces of its
   chapter that follow it (at least `PROBE_CHARS` letters), so a short piece ("I.", "Yes.") is
   only found where the text around it is the same too: not in a printed table of contents,
   not in a chapter that was not narrated. Between chapters the pages may hold text nobody
   hears (an imprint, a licence), so a probe stays inside its chapter.
2. A piece whose probe is short (the end of a chapter) is looked for between the anchors
   around it.
3. The pieces still missing (a range "1914–1918" narrated as "1914 to 1918", a word the page
   splits with markup the reader left out) are matched inexactly, by `difflib`, next to the
   anchors around them.
A piece found nowhere has no place in the text: its audio plays with the piece before it.
A piece with no letters or digits ("...") has no place either, and needs none.

In the audio:
  exact      where each chunk's speech starts and ends in its chapter's audio;
  exact      where each word starts, in a chunk whose words' times are known: its sentences
             start at their first word, and are highlighted word by word;
  estimated  where a sentence starts and ends inside any other chunk of several sentences:
             the chunk's time shared among them in proportion to their characters.
A clip runs on to where the next sentence (or word) starts, so the pauses between sentences and
paragraphs are heard as recorded (reading systems skip what lies between two clips). A chapter
may cover several pages, or a page several chapters: each clip names its chapter's audio file
and is timed from that file's start.

Word by word: a sentence is wrapped word by word instead of whole when its chunk's word times
are known (`export.timeline`) and the page holds exactly its letters where it was found: then
each word's letters lie, in order, inside the sentence's span of the page's skeleton, and each
word gets its own `<span>` and its own `<par>`, from when it starts to when the next one does
(the last to where the sentence's clip ends). A sentence matched inexactly (a range
"1914–1918" narrated as "1914 to 1918") is highlighted whole, as without word times.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from difflib import Match, SequenceMatcher
from typing import Final

from audiopub.book.chunks.words import text_words
from audiopub.export.read_aloud.pages import BookPage, Fragment, Page, Par, ids_in, skeleton
from audiopub.export.subtitles import Cue, sentence_cues
from audiopub.export.timeline import ChapterTimeline

PROBE_CHARS: Final = 40
ALONE_CHARS: Final = 12  # a piece this long may be looked for on its own, near the last one
NEAR_CHARS: Final = 2_000
FUZZY_MAX_CHARS: Final = 4_000  # longer runs of missing pieces stay missing (quadratic cost)
FUZZY_MIN_SHARE: Final = 0.6  # of a piece's letters that must be found for it to be placed

Span = tuple[int, int]


def place(
    chapters: list[ChapterTimeline], pages: list[BookPage], audio_paths: list[str]
) -> tuple[int, int, int]:
    """Find every sentence in the pages; give each page its fragments and their clips.
    Returns (sentences placed, sentences with words: "..." has no place and needs none,
    sentences placed word by word)."""
    # A sentence is highlighted whole, from its first cue's start: a long one has several
    # subtitle cues (the lines a player shows), but it is one thing to follow while reading.
    # Or word by word, where its words' times are exact (every cue of it has them).
    sentences = [
        (
            number,
            cues[0].start_s,
            " ".join(" ".join(cue.text.split()) for cue in cues),
            _word_starts(cues),
        )
        for number, chapter in enumerate(chapters)
        for cues in sentence_cues(chapter)
    ]
    book_skeleton = "".join(page.text.skeleton for page in pages)
    spans = align(
        [text for _, _, text, _ in sentences],
        book_skeleton,
        [number for number, _, _, _ in sentences],
    )
    starts = [page.base for page in pages]
    prefix = _id_prefix(pages)
    found: list[
        tuple[
            int,
            float,
            list[Fragment],
            BookPage,
            tuple[list[list[Fragment]], tuple[float, ...]] | None,
        ]
    ] = []
    for index, ((chapter, start_s, text, words_s), span) in enumerate(zip(sentences, spans)):
        if span is None:
            continue
        page = pages[bisect.bisect_right(starts, span[0]) - 1]
        words = word_fragments(
            page.text, page.base, span, text, words_s, book_skeleton, f"{prefix}{index + 1}"
        )
        if words is not None and words_s is not None:
            found.append(
                (chapter, start_s, [f for word in words for f in word], page, (words, words_s))
            )
            continue
        end = min(span[1], page.base + len(page.text.skeleton))
        fragments = page.text.fragments(
            span[0] - page.base, end - page.base, f"{prefix}{index + 1}"
        )
        if fragments:
            found.append((chapter, start_s, fragments, page, None))
    first_start = {}
    for chapter, start_s, _, _ in reversed(sentences):
        first_start[chapter] = start_s
    for i, (chapter, start_s, fragments, page, by_word) in enumerate(found):
        following = found[i + 1] if i + 1 < len(found) else None
        first_of_chapter = i == 0 or found[i - 1][0] != chapter
        # The first clip of a chapter starts with its first sentence, found or not; every clip
        # runs on to the next found sentence (the pause after it, and any sentence not found).
        begin = first_start[chapter] if first_of_chapter else start_s
        end_s = (
            following[1] if following and following[0] == chapter else chapters[chapter].duration_s
        )
        page.fragments.extend(fragments)
        if by_word is not None:
            page.pars.extend(
                word_pars(
                    by_word[0],
                    by_word[1],
                    audio_paths[chapter],
                    round(begin * 1000),
                    round(end_s * 1000),
                )
            )
        else:
            page.pars.extend(
                clip_pars(fragments, audio_paths[chapter], round(begin * 1000), round(end_s * 1000))
            )
    return (
        len(found),
        sum(1 for _, _, text, _ in sentences if skeleton(text)),
        sum(1 for entry in found if entry[4] is not None),
    )


def _word_starts(cues: list[Cue]) -> tuple[float, ...] | None:
    """The sentence's word times, where every cue of it has them."""
    if any(cue.word_starts_s is None for cue in cues):
        return None
    return tuple(start for cue in cues for start in cue.word_starts_s or ())


def _id_prefix(pages: list[BookPage]) -> str:
    """An id prefix no page uses yet, so the sentences' ids are new in every page."""
    taken = set().union(*(ids_in(page.root) for page in pages)) if pages else set()
    prefix = "ap-s"
    while any(name.startswith(prefix) for name in taken):
        prefix = f"a{prefix}"
    return prefix


def align(
    pieces: Sequence[str], text: str, chapters: Sequence[int] | None = None
) -> list[Span | None]:
    """For each piece, in reading order, its span in `text` (a skeleton), or None.
    `chapters` numbers each piece's chapter (default: all in one)."""
    keys = [skeleton(piece) for piece in pieces]
    groups = list(chapters) if chapters is not None else [0] * len(keys)
    spans: list[Span | None] = [None] * len(keys)
    probes = [_probe(keys, groups, i) for i in range(len(keys))]
    cursor = 0
    for i, key in enumerate(keys):
        if not key or len(probes[i]) < PROBE_CHARS:
            continue
        at = text.find(probes[i], cursor)
        if at < 0 and len(key) >= ALONE_CHARS:
            at = text.find(key, cursor, cursor + NEAR_CHARS + len(key))
        if at >= 0:
            spans[i] = (at, at + len(key))
            cursor = at + len(key)
    for i, key in enumerate(keys):  # short probes, between the anchors around them
        if key and spans[i] is None:
            low, high = _between(spans, i, len(text))
            at = text.find(probes[i], low, high)
            if at >= 0:
                spans[i] = (at, at + len(key))
    _fill_gaps(keys, spans, text)
    return spans


def _probe(keys: list[str], groups: list[int], i: int) -> str:
    probe, j = keys[i], i + 1
    while len(probe) < PROBE_CHARS and j < len(keys) and groups[j] == groups[i]:
        probe += keys[j]
        j += 1
    return probe


def _between(spans: list[Span | None], i: int, size: int) -> Span:
    """The end of the last span placed before piece i, and the start of the next after it."""
    previous = next((s for s in reversed(spans[:i]) if s is not None), None)
    following = next((s for s in spans[i + 1 :] if s is not None), None)
    return (previous[1] if previous else 0), (following[0] if following else size)


def _fill_gaps(keys: list[str], spans: list[Span | None], text: str) -> None:
    """Place the runs of missing pieces inexactly between the anchors around them."""
    i = 0
    while i < len(keys):
        if spans[i] is not None or not keys[i]:
            i += 1
            continue
        end = i
        while end < len(keys) and spans[end] is None:
            end += 1
        low, high = _between(spans, i, len(text))
        _fill_run(keys, spans, text, i, end, low, high)
        i = end


def _fill_run(
    keys: list[str], spans: list[Span | None], text: str, first: int, end: int, low: int, high: int
) -> None:
    joined = "".join(keys[first:end])
    if not joined or len(joined) > FUZZY_MAX_CHARS or high <= low:
        return
    reach = 2 * len(joined) + 64
    # Right after the anchor before, or right before the anchor after: whichever holds more of
    # the pieces (the text between may be long, e.g. a licence nobody hears).
    windows = {(low, min(high, low + reach)), (max(low, high - reach), high)}
    best: tuple[int, int, list[Match]] | None = None
    for start, stop in windows:
        blocks = SequenceMatcher(
            None, joined, text[start:stop], autojunk=False
        ).get_matching_blocks()
        matched = sum(size for _, _, size in blocks)
        if best is None or matched > best[0]:
            best = (matched, start, blocks)
    assert best is not None
    _, start, blocks = best
    at = 0
    for index in range(first, end):
        key_start, key_end = at, at + len(keys[index])
        at = key_end
        found = [
            b + (k - a)
            for a, b, size in blocks
            for k in range(max(a, key_start), min(a + size, key_end))
        ]
        if found and len(found) >= FUZZY_MIN_SHARE * len(keys[index]):
            spans[index] = (start + found[0], start + found[-1] + 1)


def word_fragments(
    page: Page,
    base: int,
    span: tuple[int, int],
    text: str,
    starts_s: Sequence[float] | None,
    book_skeleton: str,
    id_: str,
) -> list[list[Fragment]] | None:
    """Each word's fragments (ids `id_w1`, `id_w2`…) for the sentence `text` found at `span`
    of the book's skeleton, on `page` (whose skeleton starts at `base`); None where it is to
    be highlighted whole."""
    words = text_words(text)
    keys = [skeleton(word) for word in words]
    if (
        starts_s is None
        or len(starts_s) != len(words)
        or not all(keys)
        or book_skeleton[span[0] : span[1]] != "".join(keys)
        or span[1] > base + len(page.skeleton)
        or not _each_lasts_a_millisecond(starts_s)
    ):
        return None
    out, at = [], span[0] - base
    for number, key in enumerate(keys, start=1):
        out.append(page.fragments(at, at + len(key), f"{id_}w{number}"))
        at += len(key)
    return out


def _each_lasts_a_millisecond(starts_s: Sequence[float]) -> bool:
    """Whether every word starts on a later millisecond than the one before: SMIL clips are
    written in milliseconds, and a clip that ends where it begins is invalid (EPUBCheck
    MED-009). A voice's words last tens of milliseconds; only a model that is no voice (a
    test's) gives words shorter than one."""
    whole_ms = [round(start * 1000) for start in starts_s]
    return all(a < b for a, b in zip(whole_ms, whole_ms[1:]))


def word_pars(
    words: list[list[Fragment]], starts_s: Sequence[float], audio: str, begin_ms: int, end_ms: int
) -> list[Par]:
    """A par per word fragment: a word from its start to the next word's (the first from
    `begin_ms`, the last to `end_ms`), shared among its fragments by their letters."""
    bounds = [begin_ms] + [min(max(round(s * 1000), begin_ms), end_ms) for s in starts_s[1:]]
    bounds.append(end_ms)
    return [
        par
        for fragments, start, stop in zip(words, bounds, bounds[1:])
        for par in clip_pars(fragments, audio, start, stop)
    ]


def clip_pars(fragments: list[Fragment], audio: str, begin_ms: int, end_ms: int) -> list[Par]:
    """A clip shared among the fragments of one sentence or word (one, unless it crosses
    blocks or inline markup) by their letters."""
    total = sum(f.weight for f in fragments) or 1
    pars, done, start = [], 0, begin_ms
    for fragment in fragments:
        done += fragment.weight
        stop = begin_ms + round((end_ms - begin_ms) * done / total)
        pars.append(Par(fragment.id, audio, start, stop))
        start = stop
    return pars
