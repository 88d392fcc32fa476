"""Where each narrated piece of text lies in the book's pages: an alignment in reading order.

The pieces (the subtitle cues of every chapter, as the engine's text was cut) and the pages'
skeleton (`overlay_text.skeleton`: letters and digits only) are compared skeleton to skeleton,
so what normalisation changed (quotes, dashes, ligatures, footnote marks) does not matter.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Final

from audiopub.export.overlay_text import skeleton

PROBE_CHARS: Final = 40
ALONE_CHARS: Final = 12  # a piece this long may be looked for on its own, near the last one
NEAR_CHARS: Final = 2_000
FUZZY_MAX_CHARS: Final = 4_000  # longer runs of missing pieces stay missing (quadratic cost)
FUZZY_MIN_SHARE: Final = 0.6  # of a piece's letters that must be found for it to be placed

Span = tuple[int, int]


def align(pieces: Sequence[str], text: str,
          chapters: Sequence[int] | None = None) -> list[Span | None]:
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
    following = next((s for s in spans[i + 1:] if s is not None), None)
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


def _fill_run(keys: list[str], spans: list[Span | None], text: str, first: int, end: int,
              low: int, high: int) -> None:
    joined = "".join(keys[first:end])
    if not joined or len(joined) > FUZZY_MAX_CHARS or high <= low:
        return
    reach = 2 * len(joined) + 64
    # Right after the anchor before, or right before the anchor after: whichever holds more of
    # the pieces (the text between may be long, e.g. a licence nobody hears).
    windows = {(low, min(high, low + reach)), (max(low, high - reach), high)}
    best: tuple[int, int, list[tuple[int, int, int]]] | None = None
    for start, stop in windows:
        blocks = SequenceMatcher(None, joined, text[start:stop],
                                 autojunk=False).get_matching_blocks()
        matched = sum(size for _, _, size in blocks)
        if best is None or matched > best[0]:
            best = (matched, start, blocks)
    assert best is not None
    _, start, blocks = best
    at = 0
    for index in range(first, end):
        key_start, key_end = at, at + len(keys[index])
        at = key_end
        found = [b + (k - a) for a, b, size in blocks
                 for k in range(max(a, key_start), min(a + size, key_end))]
        if found and len(found) >= FUZZY_MIN_SHARE * len(keys[index]):
            spans[index] = (start + found[0], start + found[-1] + 1)
