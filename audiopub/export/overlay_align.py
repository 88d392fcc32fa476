"""Where each narrated piece of text lies in the book's pages: an alignment in reading order.

The pieces (the subtitle cues of every chapter, as the engine's text was cut) and the pages'
skeleton (`overlay_text.skeleton`: letters and digits only) are compared skeleton to skeleton,
so what normalisation changed (quotes, dashes, ligatures, footnote marks) does not matter.

1. Anchors: each piece is looked for after the previous one, together with the pieces that
   follow it (at least `PROBE_CHARS` letters), so a short piece ("I.", "Yes.") is only found
   where the text around it is the same too: not in a printed table of contents, not in a
   chapter that was not narrated.
2. The pieces still missing (a range "1914–1918" narrated as "1914 to 1918", a word the page
   splits with markup the reader left out) are matched inexactly, by `difflib`, in the page
   text between the anchors around them.
A piece found nowhere has no place in the text: its audio plays with the piece before it.
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


def align(pieces: Sequence[str], text: str) -> list[Span | None]:
    """For each piece, in reading order, its span in `text` (a skeleton), or None."""
    keys = [skeleton(piece) for piece in pieces]
    spans: list[Span | None] = [None] * len(keys)
    cursor = 0
    for i, key in enumerate(keys):
        if not key:
            continue
        probe, j = key, i + 1
        while len(probe) < PROBE_CHARS and j < len(keys):
            probe += keys[j]
            j += 1
        at = text.find(probe, cursor)
        if at < 0 and len(key) >= ALONE_CHARS:
            at = text.find(key, cursor, cursor + NEAR_CHARS + len(key))
        if at >= 0:
            spans[i] = (at, at + len(key))
            cursor = at + len(key)
    _fill_gaps(keys, spans, text)
    return spans


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
        previous = next((s for s in reversed(spans[:i]) if s is not None), None)
        low = previous[1] if previous else 0
        high = spans[end][0] if end < len(keys) else len(text)  # type: ignore[index]
        _fill_run(keys, spans, text, i, end, low, high)
        i = end


def _fill_run(keys: list[str], spans: list[Span | None], text: str, first: int, end: int,
              low: int, high: int) -> None:
    joined = "".join(keys[first:end])
    if not joined or len(joined) > FUZZY_MAX_CHARS or high <= low:
        return
    reach = 2 * len(joined) + 64
    if high - low > reach:
        # Right before the next anchor (or right after the last one, at the end).
        low, high = (high - reach, high) if end < len(keys) else (low, low + reach)
    window = text[low:high]
    blocks = SequenceMatcher(None, joined, window, autojunk=False).get_matching_blocks()
    at = 0
    for index in range(first, end):
        key_start, key_end = at, at + len(keys[index])
        at = key_end
        found = [b + (k - a) for a, b, size in blocks
                 for k in range(max(a, key_start), min(a + size, key_end))]
        if found and len(found) >= FUZZY_MIN_SHARE * len(keys[index]):
            spans[index] = (low + found[0], low + found[-1] + 1)
