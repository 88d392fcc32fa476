"""A book's text as an (X)HTML tree, made into a `Book` the way an EPUB's is.

Every reader other than the EPUB one brings its text here as one tree: HTML as it is, the
others (plain text, Word, OpenDocument, FB2, PDF) as `h1`–`h6` and `p` elements built by
`TreeBuilder`. From there it is the EPUB's road: the tree is walked into paragraphs
(`chapters.paragraphs.read_tree`, with its rules on what is never narrated), Project
Gutenberg's header and licence are cut, every paragraph goes through `normalise_text`, and
`chapters.toc.cut_chapters` cuts chapters where headings start them and marks title pages as
front matter.

Where chapters start:
- at the format's own headings: those of the shallowest level used more than once, and any
  above it (a book's title in an `h1` over `h2` chapters stays a short chapter of its own,
  which `chapters.front_matter` then leaves unticked);
- where the format has none, at paragraphs that read as headings (`is_heading_text`):
  "CHAPTER I.", "Chapter 12", "BOOK TWO", "Kapitel 3", "Chapitre III", "Capítulo 2", a Roman
  numeral alone or before a title in capitals ("I. A SCANDAL IN BOHEMIA"), "PROLOGUE".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from lxml import etree

from audiopub.book.chapters.paragraphs import cut_gutenberg_boilerplate, read_tree
from audiopub.book.chapters.toc import Block, Mark, TocEntry, cut_chapters
from audiopub.book.formats.decoding import drop_control_characters
from audiopub.book.markup import clean_label, local_name
from audiopub.book.models import Book, BookDetails, Cover
from audiopub.book.text import normalise_text
from audiopub.errors import BadBook

__all__ = ["BookText", "TreeBuilder", "build_book", "is_heading_text", "visible_text"]

_HEADING_TAGS = {f"h{level}": level for level in range(1, 7)}
# The words that open a numbered heading, in the languages the spoken-form stage reads.
_DIVISION = (
    r"chapter|book|part|volume|letter|stave|canto|section|"
    r"kapitel|teil|buch|band|brief|"
    r"chapitre|livre|partie|tome|lettre|"
    r"cap[ií]tulo|libro|parte|carta"
)
_NUMBER_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
    r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|the \w+|"
    r"eins|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|"
    r"un|une|deux|trois|quatre|cinq|premier|première|"
    r"uno|dos|tres|cuatro|cinco|primero|primera"
)
_NUMBER = rf"(?:\d{{1,4}}|[IVXLCDM]{{1,8}}|[ivxlcdm]{{1,8}}|(?:{_NUMBER_WORDS})(?:[- ]\w+)?)"
_NUMBERED_HEADING = re.compile(
    rf"^(?:{_DIVISION})\s+{_NUMBER}\b\.?(?:\s*[.:—–-]?\s+\S.*)?$",
    re.IGNORECASE,
)
_ROMAN_ALONE = re.compile(r"^[IVXLC]{1,7}\.?$")
# "I. A SCANDAL IN BOHEMIA": a Roman numeral and a title in capitals (Gutenberg's collections).
_ROMAN_AND_TITLE = re.compile(r"^[IVXLC]{1,7}\.\s+[A-Z][A-Z0-9 ,;:'’\"“”!?.-]*[A-Z]\W*$")
_NAMED_HEADING = re.compile(
    r"^(?:prologue|prolog|epilogue|epilog|épilogue|epílogo|prólogo|preface|vorwort|préface|"
    r"introduction|einleitung|introducción|conclusion|afterword|nachwort)\.?$",
    re.IGNORECASE,
)
MAX_HEADING_CHARS = 80  # a "heading" longer than this is a sentence that starts like one
# The text of a page that is never shown: a heading's `<script>` is not part of its title.
_VISIBLE_TEXT = etree.XPath(
    ".//text()[not(ancestor::*[local-name()='script' or local-name()='style' "
    "or local-name()='template' or local-name()='noscript'])]"
)


def visible_text(el: etree._Element) -> str:
    """The text of `el` as a reader sees it: not that of scripts and styles inside it."""
    return "".join(str(text) for text in _VISIBLE_TEXT(el))


def is_heading_text(text: str) -> bool:
    """Does this paragraph, standing alone, read as a chapter heading? It must be short and
    start with a capital ("Chapter 12 of the act says…" in prose is a sentence)."""
    text = clean_label(text)
    if not text or len(text) > MAX_HEADING_CHARS or not text[0].isupper():
        return False
    return bool(
        _NUMBERED_HEADING.match(text)
        or _ROMAN_ALONE.match(text)
        or _ROMAN_AND_TITLE.match(text)
        or _NAMED_HEADING.match(text)
    )


class TreeBuilder:
    """An HTML body built paragraph by paragraph, for the formats that are not HTML."""

    def __init__(self) -> None:
        self.root = etree.Element("html")
        self.body = etree.SubElement(self.root, "body")

    def heading(self, level: int, text: str) -> None:
        self._add(f"h{min(max(level, 1), 6)}", text)

    def paragraph(self, text: str) -> None:
        self._add("p", text)

    def skipped(self, text: str) -> None:
        """Text kept out of the narration (a printed table of contents), as a `nav`."""
        self._add("nav", text)

    def _add(self, tag: str, text: str) -> None:
        # A document's XML may carry control characters (a recovered "&#7;"): no voice says
        # them and lxml refuses them in a tree.
        text, _ = drop_control_characters(text)
        if clean_label(text):
            etree.SubElement(self.body, tag).text = text


@dataclass
class BookText:
    """What a reader found: the text as a tree, and what the file says about the book."""

    root: etree._Element
    title: str | None = None
    authors: tuple[str, ...] = ()
    language: str | None = None
    cover: Cover | None = None
    notes: list[str] = field(default_factory=list)
    details: BookDetails = field(default_factory=BookDetails)
    # The format has its own headings: paragraphs that look like one are not promoted.
    structured: bool = True


def build_book(text: BookText, name: str, stem: str) -> Book:
    """The `Book` of a reader's text; `name` is the file's name for messages, `stem` the
    title of a book that names none. Raises `BadBook` when nothing is left to narrate."""
    root = text.root
    headings = [el for el in root.iter() if local_name(el) in _HEADING_TAGS]
    if not headings or not text.structured:
        _promote_headings(root)
        headings = [el for el in root.iter() if local_name(el) in _HEADING_TAGS]
    entries, targets = _chapter_starts(headings)
    stream: list[Block | Mark] = []
    read_tree(root, targets, stream)
    cut_gutenberg_boilerplate(stream)
    for block in stream:
        if isinstance(block, Block) and not block.skipped:
            block.spoken = normalise_text(block.text)
    title = clean_label(text.title or "") or stem
    notes = text.notes
    chapters = cut_chapters(stream, entries, title, notes, [title], text.authors)
    if not chapters:
        raise BadBook(f"{name} has no text to narrate")
    return Book(
        title=title,
        authors=text.authors,
        language=text.language,
        chapters=tuple(chapters),
        cover=text.cover,
        warnings=tuple(notes),
        details=text.details,
    )


def _promote_headings(root: etree._Element) -> None:
    """Paragraphs that read as chapter headings become `h2`s."""
    for el in root.iter("p"):
        if is_heading_text("".join(el.itertext())):
            el.tag = "h2"


def _chapter_starts(
    headings: list[etree._Element],
) -> tuple[list[TocEntry], dict[str, list[int]]]:
    """One TOC entry per chapter-starting heading, and the ids marking where each starts."""
    levels = Counter(_HEADING_TAGS[local_name(el)] for el in headings)
    repeated = [level for level in sorted(levels) if levels[level] > 1]
    deepest = repeated[0] if repeated else max(levels, default=1)
    entries: list[TocEntry] = []
    targets: dict[str, list[int]] = {}
    for el in headings:
        if _HEADING_TAGS[local_name(el)] > deepest:
            continue
        key = el.get("id") or f"audiopub-heading-{len(entries)}"
        el.set("id", key)
        targets.setdefault(key, []).append(len(entries))
        entries.append(TocEntry(clean_label(visible_text(el)), "book", key, None))
    return entries, targets
