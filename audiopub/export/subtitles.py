"""Subtitles from a book's timeline: SRT and WebVTT, one cue per sentence, in the book's text.

A cue is one sentence, or a piece of one: a sentence longer than a player shows comfortably
(two lines of 42 characters, the usual broadcast limit) is cut at clause boundaries, then
between words, as chunks are cut (`book.chunks.chunking.cut_sentence`).

Timing: a chunk's start and end are exact (`export.timeline`). Inside a chunk of several
sentences a cue starts where its first word starts, *exactly*, where the chunk's word times are
known (the engine's own durations); elsewhere the boundaries are *estimated*: the chunk's time
is shared among its cues in proportion to their characters, which tracks speech closely within
one voice and one speed. Either way a cue ends where the next one starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from audiopub.book.chunks.chunking import cut_sentence
from audiopub.book.chunks.words import text_words
from audiopub.book.text import split_sentences
from audiopub.export.timeline import ChapterTimeline, Passage

LINE_CHARS: Final = 42
CUE_CHARS: Final = 2 * LINE_CHARS


@dataclass(frozen=True)
class Cue:
    start_s: float
    end_s: float
    text: str  # one or two lines, joined by "\n"
    # When each of its words (`book.chunks.words.text_words`) starts, on the cue's clock, where
    # known.
    word_starts_s: tuple[float, ...] | None = None


def chapter_cues(chapter: ChapterTimeline, offset_s: float = 0.0) -> list[Cue]:
    """The chapter's cues, on its own clock plus `offset_s` (its start, for a whole book)."""
    return [cue for sentence in sentence_cues(chapter, offset_s) for cue in sentence]


def sentence_cues(chapter: ChapterTimeline, offset_s: float = 0.0) -> list[list[Cue]]:
    """The chapter's cues grouped by sentence: one cue each, or the pieces of a long one."""
    sentences = []
    for passage in chapter.passages:
        pieces = [cut_sentence(sentence, CUE_CHARS) for sentence in split_sentences(passage.text)]
        cues = _exact_cues(passage, pieces, offset_s) or _estimated_cues(passage, pieces, offset_s)
        for sentence in pieces:
            sentences.append(cues[: len(sentence)])
            cues = cues[len(sentence) :]
    return sentences


def _exact_cues(passage: Passage, pieces: list[list[str]], offset_s: float) -> list[Cue]:
    """Cues that start at their first word's time; none where the passage's words are not
    known, or its pieces do not hold exactly its words."""
    starts = passage.word_starts_s
    flat = [piece for sentence in pieces for piece in sentence]
    counts = [len(text_words(piece)) for piece in flat]
    if starts is None or sum(counts) != len(starts):
        return []
    firsts = [sum(counts[:i]) for i in range(len(flat))]
    # The first cue starts with the passage's clip, a few milliseconds before its first word.
    begins = [passage.start_s] + [
        starts[i] if i < len(starts) else passage.end_s for i in firsts[1:]
    ]
    ends = begins[1:] + [passage.end_s]
    return [
        Cue(
            offset_s + begin,
            offset_s + end,
            _two_lines(piece),
            tuple(offset_s + s for s in starts[first : first + count]),
        )
        for piece, begin, end, first, count in zip(flat, begins, ends, firsts, counts)
    ]


def _estimated_cues(passage: Passage, pieces: list[list[str]], offset_s: float) -> list[Cue]:
    """Cues sharing the passage's time in proportion to their characters."""
    flat = [piece for sentence in pieces for piece in sentence]
    total = sum(len(piece) for piece in flat) or 1
    start, done, cues = passage.start_s, 0, []
    span = passage.end_s - passage.start_s
    for piece in flat:
        done += len(piece)
        end = passage.start_s + span * done / total
        cues.append(Cue(offset_s + start, offset_s + end, _two_lines(piece)))
        start = end
    return cues


def book_cues(chapters: Sequence[ChapterTimeline]) -> list[Cue]:
    return [cue for chapter in chapters for cue in chapter_cues(chapter, chapter.start_s)]


def to_srt(cues: Iterable[Cue]) -> str:
    """SubRip: numbered from 1, `HH:MM:SS,mmm`, hours past 99 as they come, blank-line separated."""
    blocks = []
    for number, cue in enumerate(_in_milliseconds(cues), start=1):
        start, end, text = cue
        # A blank line ends a cue in SRT, and an arrow in the text would read as a timing line.
        text = "\n".join(line for line in text.splitlines() if line.strip()).replace("-->", "->")
        blocks.append(f"{number}\n{_clock(start, ',')} --> {_clock(end, ',')}\n{text}\n")
    return "\n".join(blocks)


def to_webvtt(cues: Iterable[Cue]) -> str:
    """WebVTT: the header, then cues with `HH:MM:SS.mmm`; text escaped as the format asks."""
    blocks = ["WEBVTT\n"]
    for start, end, text in _in_milliseconds(cues):
        escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        blocks.append(f"{_clock(start, '.')} --> {_clock(end, '.')}\n{escaped}\n")
    return "\n".join(blocks)


def _in_milliseconds(cues: Iterable[Cue]) -> Iterable[tuple[int, int, str]]:
    """Cues with whole-millisecond times that never overlap and never run backwards."""
    previous_end = 0
    for cue in cues:
        start = max(round(cue.start_s * 1000), previous_end)
        end = max(round(cue.end_s * 1000), start)
        previous_end = end
        yield start, end, cue.text


def _clock(milliseconds: int, separator: str) -> str:
    """`HH:MM:SS,mmm`: hours are not bounded (10:00:00,000, 123:04:05,678)."""
    seconds, millis = divmod(milliseconds, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}{separator}{millis:03d}"


def _two_lines(text: str) -> str:
    """At most two lines, split at the space nearest the middle when the cue is long."""
    text = " ".join(text.split())
    if len(text) <= LINE_CHARS or " " not in text:
        return text
    middle = len(text) // 2
    spaces = [i for i, char in enumerate(text) if char == " "]
    cut = min(spaces, key=lambda i: abs(i - middle))
    return f"{text[:cut]}\n{text[cut + 1 :]}"
