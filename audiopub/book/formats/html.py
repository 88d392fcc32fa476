"""Web pages (.html, .htm, .xhtml) and Markdown (.md), which is read as the HTML it makes.

XHTML (an XML declaration, or the XHTML namespace) is parsed as an EPUB's pages are
(`safe_xml.parse_markup`: no entities, no DTD, no network); other HTML by libxml2's HTML
parser (`safe_xml.parse_html`), which reads no DTD either. Its encoding is the one its
`<meta charset>` names; a page with none is decoded as `decoding` does text (a byte-order mark,
else UTF-8, else Windows-1252), so UTF-8 without a declaration is read as UTF-8. Both nest up to
`DEEP_MARKUP_LEVELS`. The page is then read like a page of an EPUB (`chapters.paragraphs`): scripts,
styles, navigation, printed tables of contents and Project Gutenberg's boilerplate are not
narrated. Chapters start at its headings (`assemble`). The title is the page's `<title>` (else
its one `<h1>`), the author its `<meta name="author">`, the language its `lang`.

Markdown goes through markdown-it-py (CommonMark): `# Heading` lines are headings, `_italics_`
become emphasis, which is not read out as markers. Lists and quotations nested deeper than
`MARKDOWN_MAX_LEVELS` are read at that depth (markdown-it stops at its nesting limit, and the
rest of the book went with it), with a note.
"""

from __future__ import annotations

import re

from lxml import etree

from audiopub.book.formats.assemble import BookText, visible_text
from audiopub.book.formats.decoding import bom_encoding, decode_text
from audiopub.book.markup import clean_label, local_name
from audiopub.book.safe_xml import parse_html, parse_markup
from audiopub.errors import BadBook

__all__ = ["MARKDOWN_MAX_LEVELS", "read_html", "read_markdown"]

_XML_START = re.compile(
    rb"^\s*(?:\xef\xbb\xbf)?\s*<\?xml|xmlns=[\"']http://www\.w3\.org/1999/xhtml"
)
# HTML's prescan looks for the declaration in the first 1,024 bytes.
_META_CHARSET = re.compile(rb"<meta[^>]*charset\s*=", re.IGNORECASE)
# Quotations, and lists indented two spaces a level, nest this deep at most. Each list level is
# two of markdown-it's (a list and its item); past its limit markdown-it drops the rest of the
# document, so the limit is set above what the deepest lines allowed (quotations and lists
# together) need, and such a document still parses well within Python's recursion limit.
MARKDOWN_MAX_LEVELS = 30
_MARKDOWN_NESTING = 4 * MARKDOWN_MAX_LEVELS + 20
# The quotation and list markers that open a line ("> > - 1. text"), one at a time.
_MARKER = re.compile(r"[ \t]*(?:>|[-+*](?=[ \t])|\d{1,9}[.)](?=[ \t]))")
_MARKERS = re.compile(rf"^(?:{_MARKER.pattern}){{{MARKDOWN_MAX_LEVELS + 1},}}", re.MULTILINE)
_INDENT = re.compile(rf"^[ \t]{{{2 * MARKDOWN_MAX_LEVELS + 1},}}(?=\S)", re.MULTILINE)
_AUTHOR_META = frozenset({"author", "dc.creator", "dcterms.creator"})
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def read_html(data: bytes, name: str) -> BookText:
    problems: list[str] = []
    if _XML_START.search(data[:4096]):
        root = parse_markup(data, deep=True, problems=problems)
    elif bom_encoding(data) or not _META_CHARSET.search(data[:1024]):
        decoded = decode_text(data)
        root = parse_html(decoded.text.encode("utf-8"), problems, encoding="utf-8")
        problems.extend(decoded.notes)
    else:
        root = parse_html(data, problems)
    if root is None:
        raise BadBook(f"{name}: the page could not be parsed")
    for nav in list(root.iter("nav")):
        _end_at_its_targets(nav)
    return _book_text(root, _notes(problems))


def read_markdown(data: bytes, name: str) -> BookText:
    from markdown_it import MarkdownIt  # ~30 ms: only for a Markdown book, not at start-up

    decoded = decode_text(data)
    text, flattened = _MARKERS.subn(_first_markers, decoded.text)
    text, indented = _INDENT.subn(" " * 2 * MARKDOWN_MAX_LEVELS, text)
    if flattened or indented:
        decoded.notes.append(
            f"Its lists or quotations are nested more than {MARKDOWN_MAX_LEVELS} levels deep; "
            f"{flattened + indented:,} line{'s' if flattened + indented > 1 else ''} deeper "
            f"than that {'were' if flattened + indented > 1 else 'was'} read at that depth."
        )
    # Raw HTML in the Markdown is kept: it is then read as any page is.
    markdown = MarkdownIt("commonmark", {"maxNesting": _MARKDOWN_NESTING})
    page = markdown.render(text)
    problems: list[str] = []
    root = parse_html(f"<html><body>{page}</body></html>".encode(), problems, encoding="utf-8")
    if root is None:
        raise BadBook(f"{name} has no text to narrate")
    return _book_text(root, [*decoded.notes, *_notes(problems)])


def _first_markers(line_start: re.Match[str]) -> str:
    """A line's first `MARKDOWN_MAX_LEVELS` markers, of the many it opens with."""
    end, position = 0, 0
    for _ in range(MARKDOWN_MAX_LEVELS):
        found = _MARKER.match(line_start.group(), position)
        assert found is not None  # the run matched these markers
        end = position = found.end()
    return line_start.group()[:end]


def _end_at_its_targets(nav: etree._Element) -> None:
    """libxml2's HTML parser knows no HTML5 elements: a `<div>` left open in a `<nav>` keeps the
    nav open to the end of the page, and the whole book was then a table of contents, never
    read. A nav ends where the first place it links to starts: that element and everything
    after it are moved out, after the nav."""
    targets = {
        href[1:] for a in nav.iter("a") if (href := a.get("href") or "").startswith("#") and href
    }
    linked = False  # a target before the nav's first link is the nav's own (its heading)
    first: etree._Element | None = None
    for el in nav.iterdescendants():
        linked = linked or local_name(el) == "a"
        if linked and el.get("id") in targets:
            first = el
            break
    if first is None:
        return
    moved: list[etree._Element] = [first, *first.itersiblings()]
    above = first.getparent()
    while above is not None and above is not nav:
        moved.extend(above.itersiblings())
        above = above.getparent()
    after = nav
    for part in moved:  # in the page's order: each one's tail text moves with it
        after.addnext(part)
        after = part


def _notes(problems: list[str]) -> list[str]:
    """The parser's limits in words for the book's notes; other notes as they are."""
    return [
        f"{problem}, far beyond any real book; its text from there on was left out."
        if problem.startswith(("its markup", "it passes"))
        else problem
        for problem in problems
    ]


def _book_text(root: etree._Element, notes: list[str]) -> BookText:
    title = authors = language = None
    h1s = []
    for el in root.iter():
        name = local_name(el)
        if name == "title" and title is None:
            title = clean_label(visible_text(el)) or None
        elif name == "meta" and (el.get("name") or "").lower() in _AUTHOR_META and not authors:
            authors = clean_label(el.get("content") or "") or None
        elif name == "html":
            language = el.get("lang") or el.get(_XML_LANG)
        elif name == "h1":
            h1s.append(clean_label(visible_text(el)))
    if title is None and len(h1s) == 1:
        title = h1s[0]
    return BookText(
        root,
        title=title,
        authors=(authors,) if authors else (),
        language=clean_label(language or "") or None,
        notes=notes,
    )
