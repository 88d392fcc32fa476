"""Word by word highlighting in a read-aloud EPUB, where a sentence's word times are exact.

A sentence found in a page (`overlay_align`) is wrapped word by word instead of whole when its
chunk's word times are known (`export.timeline`) and the page holds exactly its letters where
it was found: then each word's letters lie, in order, inside the sentence's span of the page's
skeleton, and each word gets its own `<span>` and its own `<par>`, from when it starts to when
the next one does (the last to where the sentence's clip ends). A sentence matched inexactly
(a range "1914–1918" narrated as "1914 to 1918") is highlighted whole, as without word times.
"""

from __future__ import annotations

from collections.abc import Sequence

from audiopub.book.words import text_words
from audiopub.export.overlay_docs import Par
from audiopub.export.overlay_text import Fragment, Page, skeleton


def word_fragments(page: Page, base: int, span: tuple[int, int], text: str,
                   starts_s: Sequence[float] | None, book_skeleton: str,
                   id_: str) -> list[list[Fragment]] | None:
    """Each word's fragments (ids `id_w1`, `id_w2`…) for the sentence `text` found at `span`
    of the book's skeleton, on `page` (whose skeleton starts at `base`); None where it is to
    be highlighted whole."""
    words = text_words(text)
    keys = [skeleton(word) for word in words]
    if starts_s is None or len(starts_s) != len(words) or not all(keys) \
            or book_skeleton[span[0]:span[1]] != "".join(keys) \
            or span[1] > base + len(page.skeleton) or not _each_lasts_a_millisecond(starts_s):
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


def word_pars(words: list[list[Fragment]], starts_s: Sequence[float], audio: str,
              begin_ms: int, end_ms: int) -> list[Par]:
    """A par per word fragment: a word from its start to the next word's (the first from
    `begin_ms`, the last to `end_ms`), shared among its fragments by their letters."""
    bounds = [begin_ms] + [min(max(round(s * 1000), begin_ms), end_ms) for s in starts_s[1:]]
    bounds.append(end_ms)
    return [par for fragments, start, stop in zip(words, bounds, bounds[1:])
            for par in clip_pars(fragments, audio, start, stop)]


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
