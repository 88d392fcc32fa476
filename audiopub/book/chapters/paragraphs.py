"""The spine's XHTML documents as one stream of paragraphs, with marks where chapters start.

Each document is walked into `Block`s, one per paragraph; where a TOC entry points, a `Mark`
goes between them (`toc.cut_chapters` later cuts the stream there). Project Gutenberg's header
and licence are marked skipped (`cut_gutenberg_boilerplate`).

Never narrated: printed tables of contents, Standard Ebooks' imprint, colophon, uncopyright and
endnotes, half-title pages, note references, page numbers, images, scripts. Kept: title pages
(the book opens with its title and author) and dedications, marked as front matter (not
narrated unless chosen, see `front_matter`), epigraphs, headings, and the text an SVG picture
holds (`svg_text`: the prose of fixed-layout books).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from lxml import etree

from audiopub.book.chapters import toc
from audiopub.book.chapters.front_matter import FRONT_MATTER_ROLES, FRONT_MATTER_TYPES
from audiopub.book.chapters.svg_text import svg_paragraphs
from audiopub.book.chapters.toc import Block, Mark, epub_types
from audiopub.book.markup import clean_label, local_name
from audiopub.book.pronunciation import Pronunciation, from_markup
from audiopub.book.safe_xml import parse_markup

_BLOCK_TAGS = frozenset(
    "address article aside blockquote body caption center dd details div dl dt figcaption "
    "figure footer header hgroup h1 h2 h3 h4 h5 h6 hr li main nav ol p pre section summary table "
    "tbody td tfoot th thead tr ul".split()
)
_HEADINGS = frozenset("h1 h2 h3 h4 h5 h6 hgroup".split())
# Never spoken, and nothing inside them is either.
_DROP_TAGS = frozenset(
    "head script style img image rt rp object embed audio video iframe canvas map math "
    "noscript template input button select textarea".split()
)
_DROP_TYPES = frozenset({"noteref", "pagebreak"})
_DROP_ROLES = frozenset({"doc-noteref", "doc-pagebreak", "doc-backlink"})
# Whole sections a listener does not want (front/back matter of Standard Ebooks and others).
_SKIP_TYPES = frozenset(
    "toc landmarks page-list loi lot index imprint colophon copyright-page endnotes footnotes "
    "rearnotes footnote endnote rearnote halftitlepage".split()
)
_SKIP_ROLES = frozenset(
    "doc-toc doc-index doc-pagelist doc-colophon doc-endnotes doc-footnote doc-endnote".split()
)
# PG's own markup: its header/licence boxes, and footnote bodies gathered at a chapter's end.
_SKIP_CLASSES = frozenset({"pg-boilerplate", "footnote", "footnotes"})
_PAGE_NUMBER_CLASS = re.compile(r"page-?num|pageno|page-?number", re.I)
# Link text of a note reference: "12", "[3]", "(4)", "*", "†".
_NOTE_MARKER = re.compile(r"^(?:\[[^\]]{1,6}\]|\(\d{1,3}\)|\d{1,3}|[*†‡§¶‖]{1,3})$")
_CONTENTS_HEADING = re.compile(r"^(?:table of )?contents?\W*$", re.I)

_PG_START = re.compile(r"\*\*\*\s*START OF (?:THE|THIS) PROJECT GUTENBERG", re.I)
_PG_END = re.compile(
    r"\*\*\*\s*END OF (?:THE|THIS) PROJECT GUTENBERG|^\W*End of (?:the |this )?Project Gutenberg",
    re.I,
)
_PG_CREDITS = re.compile(r"^\W*(?:produced by|e-?text prepared by|transcribed (?:from|by))", re.I)

_BR = "\x00"  # a <br/> while a paragraph is collected; two in a row end the paragraph
_PART = "\x01"  # a boundary between the parts of an <hgroup>


@dataclass
class Document:
    """A spine document: its manifest path and its bytes, not yet parsed."""

    path: str
    data: bytes  # parsed only when its turn comes, so one tree is in memory at a time


class Reading(NamedTuple):
    """The spine's documents read: their paragraphs, and what a book without text needs to be
    told apart by."""

    stream: list[Block | Mark]
    parsed: int  # documents that could be parsed
    picture_pages: int  # parsed documents with pictures and no text at all


def read_documents(
    docs: list[Document],
    targets: dict[str, dict[str, list[int]]],
    notes: list[str],
    hints: list[Pronunciation] | None = None,
) -> Reading:
    """The paragraphs of all documents in order, with marks where chapters start. The pages'
    `ssml:ph` hints go into `hints`."""
    stream: list[Block | Mark] = []
    parsed = picture_pages = 0
    for doc in docs:
        problems: list[str] = []
        root = parse_markup(doc.data, deep=True, problems=problems)
        for problem in problems:  # libxml2 gave up part-way: what came after is not in `root`
            notes.append(
                f"{doc.path}: {problem}, far beyond any real book; its text from "
                "there on was left out."
            )
        if root is None:
            if not problems:
                notes.append(f"{doc.path} could not be parsed; its text was left out.")
            continue
        parsed += 1
        if hints is not None:
            hints.extend(from_markup(root, doc.path, notes))
        begin = len(stream)
        pictures = read_tree(root, targets.get(doc.path, {}), stream)
        if pictures and not any(isinstance(b, Block) and b.text for b in stream[begin:]):
            picture_pages += 1
    return Reading(stream, parsed, picture_pages)


def read_tree(
    root: etree._Element, targets: dict[str, list[int]], stream: list[Block | Mark]
) -> int:
    """One parsed (X)HTML tree's paragraphs onto `stream`, with a mark where an element with a
    target id (`targets`: id → entries, "" = top of the tree) starts; the pictures it holds."""
    begin = len(stream)
    walker = _Walker(targets, stream)
    walker.walk(root)
    walker.flush()
    # Entries for the whole file, or whose id is missing, start at the top of the file.
    unplaced = [Mark(i) for key, found in targets.items() if key not in walker.hit for i in found]
    unplaced.sort(key=lambda mark: mark.entry)
    stream[begin:begin] = unplaced
    return walker.pictures


class _Open(NamedTuple):
    """An element being read: what its end undoes."""

    block: bool
    heading: int
    hgroup: int
    pre: int
    front: int


class _Walker:
    """Turns one XHTML tree into blocks (one per paragraph) and marks where TOC targets sit."""

    def __init__(self, targets: dict[str, list[int]], out: list[Block | Mark]) -> None:
        self.targets = targets
        self.out = out
        self.hit: set[str] = set()
        self._buf: list[str] = []
        self._has_text = False
        self._deferred: list[Mark] = []  # targets met mid-paragraph: placed after it
        self._boilerplate = False  # the paragraph links to gutenberg.org
        self._heading = 0
        self._hgroup = 0
        self._pre = 0
        self._front = 0  # inside a title page or dedication
        self.pictures = 0  # <img> and SVG <image> elements seen

    def walk(self, root: etree._Element) -> None:
        """Walk the tree in document order. A stack, not recursion: pages may nest up to
        `DEEP_MARKUP_LEVELS`, past Python's recursion limit."""
        stack: list[tuple[etree._Element, _Open | None]] = [(root, None)]
        while stack:
            el, opened = stack.pop()
            if opened is not None:  # all its children are done
                self._leave(opened)
                self._add(el.tail)
                continue
            opened = self._visit(el)
            if opened is None:
                self._add(el.tail)
                continue
            stack.append((el, opened))
            stack.extend((child, None) for child in reversed(el))

    def _visit(self, el: etree._Element) -> _Open | None:
        """Take in the element itself; what to undo after its children, if they are read."""
        name = local_name(el)
        if not name:  # comment, processing instruction, unknown entity
            return None
        if name == "br":
            self._add(_BR)
        block = name in _BLOCK_TAGS
        if block:
            self._boundary()
        self._mark(el)
        if name in ("img", "image"):
            self.pictures += 1
        if block and _is_skipped_section(el, name):
            self._skip(el)
        elif name == "svg":
            self._svg(el)
        elif _is_dropped(el, name):
            for inner in el.iterdescendants():
                self._mark(inner)  # a TOC target inside a page number still counts
        else:
            return self._enter(el, name)
        return None

    def _enter(self, el: etree._Element, name: str) -> _Open:
        if name == "a" and "gutenberg.org" in (el.get("href") or ""):
            self._boilerplate = True  # e.g. PG's "an illustrated edition is at gutenberg.org/…"
        opened = _Open(
            name in _BLOCK_TAGS,
            int(name in _HEADINGS),
            int(name == "hgroup"),
            int(name == "pre"),
            int(_is_front_matter(el)),
        )
        self._heading += opened.heading
        self._hgroup += opened.hgroup
        self._pre += opened.pre
        self._front += opened.front
        self._add(el.text)
        return opened

    def _leave(self, opened: _Open) -> None:
        # The hgroup ends here: its end is a real paragraph boundary.
        self._hgroup -= opened.hgroup
        if opened.block:
            self._boundary()
        self._heading -= opened.heading
        self._pre -= opened.pre
        self._front -= opened.front

    def _svg(self, el: etree._Element) -> None:
        """A picture: its `<text>` is read (fixed-layout pages set their prose in it), each of
        its paragraphs a block of its own, or in the sentence around it."""
        for inner in el.iterdescendants():
            self._mark(inner)
            if local_name(inner) == "image":
                self.pictures += 1
        paragraphs = svg_paragraphs(el)
        if self._has_text:  # a picture inside a sentence: its words are read in their place
            self._add(f" {' '.join(paragraphs)} " if paragraphs else None)
        elif paragraphs:
            self.flush()
            self.out.extend(
                Block(text, self._heading > 0, front=self._front > 0) for text in paragraphs
            )

    def _skip(self, el: etree._Element) -> None:
        for inner in el.iterdescendants():
            self._mark(inner)
        if _is_printed_toc(el):
            # The "Contents" heading just above a printed TOC goes with it.
            last = next((b for b in reversed(self.out) if isinstance(b, Block)), None)
            if last and last.heading and _CONTENTS_HEADING.match(last.text):
                last.skipped = True
        self.out.append(Block("", skipped=True))

    def _add(self, text: str | None) -> None:
        if not text:
            return
        if self._pre:
            text = text.replace("\n", _BR)
        self._buf.append(text)
        if not self._has_text and text.strip(_BR + " \t\r\n\xa0"):
            self._has_text = True

    def _boundary(self) -> None:
        if self._hgroup:
            self._buf.append(_PART)
        else:
            self.flush()

    def _mark(self, el: etree._Element) -> None:
        keys = (el.get("id"), el.get("name") if local_name(el) == "a" else None)
        for key in keys:
            if key and key in self.targets and key not in self.hit:
                self.hit.add(key)
                marks = [Mark(i) for i in self.targets[key]]
                (self._deferred if self._has_text else self.out).extend(marks)

    def flush(self) -> None:
        text = "".join(self._buf)
        for paragraph in _split_paragraphs(text):
            self.out.append(
                Block(paragraph, self._heading > 0, self._boilerplate, front=self._front > 0)
            )
        self.out.extend(self._deferred)
        self._buf.clear()
        self._deferred.clear()
        self._has_text = self._boilerplate = False


_PARAGRAPH_BREAK = re.compile(rf"{_BR}\s*{_BR}[\s{_BR}]*")
# A line holding only a number ("1" above a section of Song of Myself) is a paragraph of its own.
_NUMBER_LINE = re.compile(rf"(?:(?<={_BR})|^)\s*(\d{{1,3}}\.?)\s*(?={_BR}|$)")


def _split_paragraphs(text: str) -> list[str]:
    """Two or more <br/> in a row end a paragraph; one is a line break inside it (a verse line
    in a stanza), read on with a space."""
    if _BR in text:
        text = _NUMBER_LINE.sub(rf"{_BR}{_BR}\1{_BR}{_BR}", text)
    paragraphs = []
    for part in _PARAGRAPH_BREAK.split(text):
        pieces = [clean_label(piece.replace(_BR, " ")) for piece in part.split(_PART)]
        joined: list[str] = []
        for piece in filter(None, pieces):
            if joined:
                # hgroup parts ("I" + "The Eve of the War") read as "I: The Eve of the War".
                joined.append(" " if joined[-1][-1] in ".:;!?" else ": ")
            joined.append(piece)
        if joined:
            paragraphs.append("".join(joined))
    return paragraphs


def _attr_tokens(el: etree._Element, name: str) -> set[str]:
    return set((el.get(name) or "").split())


def _is_skipped_section(el: etree._Element, name: str) -> bool:
    if name == "nav" or epub_types(el) & _SKIP_TYPES or _attr_tokens(el, "role") & _SKIP_ROLES:
        return True
    if _attr_tokens(el, "class") & _SKIP_CLASSES:
        return True
    return name not in _HEADINGS and _is_printed_toc(el)


def _is_front_matter(el: etree._Element) -> bool:
    """A title page or dedication (epub:type or role): read, but not narrated by default."""
    return bool(
        epub_types(el) & FRONT_MATTER_TYPES or _attr_tokens(el, "role") & FRONT_MATTER_ROLES
    )


def _is_dropped(el: etree._Element, name: str) -> bool:
    if name in _DROP_TAGS or epub_types(el) & _DROP_TYPES or _attr_tokens(el, "role") & _DROP_ROLES:
        return True
    if _PAGE_NUMBER_CLASS.search(el.get("class") or ""):
        return True
    if name in ("a", "sup"):
        # A bare number or symbol linking elsewhere in the book is a note reference.
        links = [el] if name == "a" else list(_links(el))
        text = "".join("".join(el.itertext()).split())
        return bool(_NOTE_MARKER.match(text)) and any(_is_internal(a) for a in links)
    return False


def _is_internal(a: etree._Element) -> bool:
    href = (a.get("href") or "").strip()
    return bool(href) and not toc.URL_SCHEME.match(href)


def _is_printed_toc(el: etree._Element) -> bool:
    """A block that is mostly links to other parts of the book (e.g. PG's "CONTENTS" table).

    Most of its text must be link text, and nearly all its parts must hold a link: a page that
    has a poem and then a contents list is not itself a contents list, only its list is.
    """
    links = [a for a in _links(el) if _is_internal(a)]
    if len(links) < 3 or sum(map(_char_count, links)) < 0.5 * _char_count(el):
        return False
    parts = [child for child in el if _char_count(child)]
    linked = [child for child in parts if any(_is_internal(a) for a in _links(child))]
    return len(linked) >= 0.8 * len(parts)


def _links(el: etree._Element) -> Iterator[etree._Element]:
    return el.iter(f"{{{toc.XHTML_NS}}}a", "a")


def _char_count(el: etree._Element) -> int:
    return sum(len(word) for word in "".join(el.itertext()).split())


def cut_gutenberg_boilerplate(stream: list[Block | Mark]) -> None:
    """Mark Project Gutenberg's header (up to "*** START OF…", with the "Produced by" credit
    after it) and everything from "*** END OF…" on as skipped."""
    blocks = [b for b in stream if isinstance(b, Block) and b.text]
    start = next((i for i, b in enumerate(blocks) if _PG_START.search(b.text)), None)
    if start is not None:
        for block in blocks[: start + 1]:
            block.skipped = True
        if start + 1 < len(blocks) and _PG_CREDITS.match(blocks[start + 1].text):
            blocks[start + 1].skipped = True
    first = 0 if start is None else start + 1
    end = next((i for i in range(first, len(blocks)) if _PG_END.search(blocks[i].text)), None)
    if end is not None:
        for block in blocks[end:]:
            block.skipped = True
