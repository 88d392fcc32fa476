"""The book's pages as text: which pages are read, where each narrated piece of text lies in
them, and the spans that wrap it.

The pages are the reading order's XHTML documents, parsed as a reader would (the nav document
and what can't be read are left out); their skeletons, one after another, make the book's,
which the narrated sentences are found in (`alignment`).

A page's text is a sequence of *runs*: an element's `text` or `tail`, in document order. The
runs are reduced to a *skeleton*, their letters and digits only, case-folded and without
accents, each character remembering the run and offset it came from. Matching against the
skeleton makes the normalised text the engine was given (typographic quotes made straight,
dashes made commas, footnote marks dropped) findable in the page as written.

A piece of text found in the page becomes one or more *fragments*: a fragment never crosses
the start or end of a block element (a paragraph, a heading, a list item), so it can be
wrapped in one `<span>`. Inline elements it crosses (`<em>`, `<a>`) are split in two where it
starts or ends inside them, the second copy without the id, so the span encloses whole elements.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Final

from lxml import etree

from audiopub.book.epub.archive import EpubArchive
from audiopub.book.epub.package import Item, Package
from audiopub.book.markup import local_name
from audiopub.book.safe_xml import parse_markup
from audiopub.errors import AudiopubError
from audiopub.settings import EPUB_MAX_DOCUMENT_BYTES

# Elements whose content is phrasing in HTML: a span may enclose them. Any other element starts
# and ends a segment of the page, and no fragment crosses a segment's edge.
PHRASING: Final = frozenset(
    "a abbr acronym b bdi bdo big br cite code data del dfn em font i img ins kbd label mark "
    "q ruby s samp small span strike strong sub sup time tt u var wbr".split()
)
# Never shown as text, or not XHTML (SVG, MathML): nothing inside is searched or wrapped.
OPAQUE: Final = frozenset(
    "head script style template noscript svg math rt rp object iframe video audio canvas "
    "textarea select button title".split()
)
_MARK: Final = "audiopub-overlay-mark"  # a temporary element where a fragment starts or ends
# Attributes a split element's second half must not repeat: an id (or an EPUB 2 anchor name)
# names one place in the book.
_UNIQUE: Final = frozenset({"id", "name", "{http://www.w3.org/XML/1998/namespace}id"})


@dataclass(frozen=True)
class Run:
    element: etree._Element
    tail: bool  # the element's tail (else its text)
    segment: int  # runs with the same segment have no block edge between them

    @property
    def value(self) -> str:
        return (self.element.tail if self.tail else self.element.text) or ""


@dataclass(frozen=True)
class Fragment:
    """A stretch of page text to wrap: from `start` to `end` (run index, offset in the run)."""

    id: str
    start: tuple[int, int]
    end: tuple[int, int]
    weight: int = 1  # its letters and digits: a piece's time is shared among its fragments so


@dataclass(frozen=True)
class Par:
    """One piece of text and the clip of audio that reads it (milliseconds in its file)."""

    fragment: str  # the id of its span in the page
    audio: str  # the audio file's path in the book
    begin_ms: int
    end_ms: int


_FOLDED: dict[str, str] = {}


def fold(char: str) -> str:
    """What one character adds to the skeleton: its letters and digits, case-folded, without
    accents ("É" → "e", "ﬁ" → "fi", "½" → "12", "’" → "")."""
    found = _FOLDED.get(char)
    if found is None:
        decomposed = unicodedata.normalize("NFKD", char).casefold()
        found = "".join(c for c in decomposed if c.isalnum())
        _FOLDED[char] = found
    return found


def skeleton(text: str) -> str:
    return "".join(fold(char) for char in text)


@dataclass
class BookPage:
    """A page of the reading order, and what the read-aloud book adds to it."""

    item: Item
    path: str  # the item's in the archive (an item without one is not read)
    root: etree._Element
    text: Page
    base: int  # where its skeleton starts in the book's
    fragments: list[Fragment]  # to wrap in spans, in page order
    pars: list[Par]  # the clips that read them


def read_pages(archive: EpubArchive, package: Package) -> list[BookPage]:
    """The reading order's pages that can be read, parsed (the nav document is not one)."""
    pages, base, seen = [], 0, set()
    for idref, linear in package.spine:
        item = package.items.get(idref)
        if (
            item is None
            or not linear
            or item.is_nav
            or not item.is_html
            or item.path is None
            or idref in seen
        ):
            continue
        seen.add(idref)
        root = parse_item(archive, item)
        if root is None:
            continue
        text = Page(root)
        pages.append(BookPage(item, item.path, root, text, base, [], []))
        base += len(text.skeleton)
    return pages


def parse_item(archive: EpubArchive, item: Item) -> etree._Element | None:
    """An XHTML item's tree, or None where the reader could not have read it either."""
    try:
        if item.path is None or archive.size(item.path) > EPUB_MAX_DOCUMENT_BYTES:
            return None
        return parse_markup(archive.read(item.path))
    except (KeyError, AudiopubError):
        return None


def ids_in(root: etree._Element) -> set[str]:
    return {id_ for el in root.iter() if isinstance(el.tag, str) and (id_ := el.get("id"))}


class Page:
    """One XHTML document's body as runs, and its skeleton with where each character is."""

    def __init__(self, root: etree._Element) -> None:
        self.root = root
        self.runs: list[Run] = []
        self._segment = 0
        body = next((el for el in root.iter() if local_name(el) == "body"), None)
        if body is not None:
            self._walk(body)
        chars: list[str] = []
        self.where: list[tuple[int, int]] = []  # skeleton index → (run index, offset)
        for index, run in enumerate(self.runs):
            for offset, char in enumerate(run.value):
                for folded in fold(char):
                    chars.append(folded)
                    self.where.append((index, offset))
        self.skeleton = "".join(chars)

    def _walk(self, el: etree._Element) -> None:
        name = local_name(el)
        if name:
            edge = name not in PHRASING
            self._segment += edge
            if name not in OPAQUE:
                if el.text:
                    self.runs.append(Run(el, False, self._segment))
                for child in el:
                    self._walk(child)
            self._segment += edge
        if el.tail and el.getparent() is not None and local_name(el) != "body":
            self.runs.append(Run(el, True, self._segment))

    def fragments(self, first: int, end: int, id_: str) -> list[Fragment]:
        """The fragments covering skeleton[first:end], split at segment edges; ids `id_`,
        then `id_-2`, `id_-3`… for a piece of text that crosses blocks."""
        pieces: list[list[int]] = []
        for index in range(first, end):
            run, _ = self.where[index]
            if (
                pieces
                and self.runs[self.where[pieces[-1][-1]][0]].segment == self.runs[run].segment
            ):
                pieces[-1].append(index)
            else:
                pieces.append([index])
        out = []
        for number, piece in enumerate(pieces, start=1):
            start_run, start_offset = self.where[piece[0]]
            end_run, end_offset = self.where[piece[-1]]
            out.append(
                Fragment(
                    id_ if number == 1 else f"{id_}-{number}",
                    (start_run, start_offset),
                    (end_run, end_offset + 1),
                    len(piece),
                )
            )
        return out

    def widen(self, fragments: list[Fragment]) -> list[Fragment]:
        """Fragments (in page order) widened over the punctuation glued to their words in the
        same run (an opening quote before, a full stop and closing quote after), never into a
        neighbour."""
        out = []
        for i, frag in enumerate(fragments):
            (start_run, start), (end_run, end) = frag.start, frag.end
            before = fragments[i - 1].end if i else None
            after = fragments[i + 1].start if i + 1 < len(fragments) else None
            text = self.runs[start_run].value
            floor = before[1] if before and before[0] == start_run else 0
            while start > floor and not text[start - 1].isspace():
                start -= 1
            text = self.runs[end_run].value
            ceiling = after[1] if after and after[0] == end_run else len(text)
            while end < ceiling and not text[end].isspace():
                end += 1
            out.append(Fragment(frag.id, (start_run, start), (end_run, end), frag.weight))
        return out

    def wrap(self, fragments: list[Fragment], span_tag: str, class_name: str = "") -> None:
        """Wrap each fragment (in page order, not overlapping) in a `span_tag` with its id."""
        marks = []
        for order, frag in enumerate(fragments):
            marks.append((frag.start, 2 * order, frag, True))
            marks.append((frag.end, 2 * order + 1, frag, False))
        starts: dict[str, etree._Element] = {}
        ends: dict[str, etree._Element] = {}
        # From the last position back, so every position still to come stays where it was.
        for (run_index, offset), _, frag, is_start in sorted(
            marks, key=lambda m: (m[0], m[1]), reverse=True
        ):
            mark = self._insert_mark(self.runs[run_index], offset)
            (starts if is_start else ends)[frag.id] = mark
        for frag in fragments:
            _surround(starts[frag.id], ends[frag.id], span_tag, frag.id, class_name)

    @staticmethod
    def _insert_mark(run: Run, offset: int) -> etree._Element:
        mark = etree.Element(_MARK)
        el = run.element
        if run.tail:
            mark.tail, el.tail = (el.tail or "")[offset:] or None, (el.tail or "")[:offset] or None
            parent = _parent(el)
            parent.insert(parent.index(el) + 1, mark)
        else:
            mark.tail, el.text = (el.text or "")[offset:] or None, (el.text or "")[:offset] or None
            el.insert(0, mark)
        return mark


def _surround(
    start: etree._Element, end: etree._Element, tag: str, id_: str, class_name: str
) -> None:
    """Put everything between the marks `start` and `end` in one new element, splitting the
    inline elements either mark is inside up to their closest common ancestor."""
    start_chain = list(start.iterancestors())
    common = next(el for el in end.iterancestors() if el in start_chain)
    while start.getparent() is not common:
        _lift_start(start)
    while end.getparent() is not common:
        _lift_end(end)
    span = etree.Element(tag, {"id": id_, **({"class": class_name} if class_name else {})})
    span.text, start.tail = start.tail, None
    node = start.getnext()
    while node is not end:
        if node is None:
            raise ValueError("the end of a span is not after its start in the page")
        following = node.getnext()
        span.append(node)  # its tail comes with it
        node = following
    span.tail, end.tail = end.tail, None
    common.replace(start, span)
    common.remove(end)


def _lift_start(mark: etree._Element) -> None:
    """Move a start mark out of its parent, to just before it (or before the part of it that
    follows the mark, split off as a copy)."""
    parent = _parent(mark)
    if parent.text or parent.index(mark) != 0:
        parent = _split_before(parent, mark)
    parent.text, mark.tail = mark.tail, None
    parent.addprevious(mark)


def _lift_end(mark: etree._Element) -> None:
    """Move an end mark out of its parent, to just after it (splitting the parent if anything
    follows the mark inside it)."""
    parent = _parent(mark)
    if mark.tail or mark.getnext() is not None:
        _split_before(parent, mark, after=True)
    grand = _parent(parent)
    mark.tail, parent.tail = parent.tail, None
    grand.insert(grand.index(parent) + 1, mark)


def _split_before(el: etree._Element, mark: etree._Element, after: bool = False) -> etree._Element:
    """Cut `el` in two at `mark`: a copy of `el` (without its id, so ids stay unique) after it
    takes what follows the mark (`after`), or the mark and what follows. Returns the copy."""
    copy = etree.Element(el.tag, {k: v for k, v in el.attrib.items() if k not in _UNIQUE})
    index = el.index(mark) + (1 if after else 0)
    if after:
        copy.text, mark.tail = mark.tail, None
    for child in list(el)[index:]:
        copy.append(child)
    copy.tail, el.tail = el.tail, None
    parent = _parent(el)
    parent.insert(parent.index(el) + 1, copy)
    return copy


def _parent(el: etree._Element) -> etree._Element:
    """The element `el` is in. Every element moved here (a mark, a run's element, what a mark
    is lifted out of) lies inside the page's body, so one without a parent is a bug here."""
    parent = el.getparent()
    if parent is None:
        raise ValueError(f"<{local_name(el)}> has no parent element to move it in")
    return parent
