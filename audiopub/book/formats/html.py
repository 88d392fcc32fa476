"""Web pages (.html, .htm, .xhtml) and Markdown (.md), which is read as the HTML it makes.

XHTML (an XML declaration, or the XHTML namespace) is parsed as an EPUB's pages are
(`safe_xml.parse_markup`: no entities, no DTD, no network); other HTML by libxml2's HTML
parser (`safe_xml.parse_html`), which reads no DTD either. Both nest up to
`DEEP_MARKUP_LEVELS`. The page is then read like a page of an EPUB (`paragraphs`): scripts,
styles, navigation, printed tables of contents and Project Gutenberg's boilerplate are not
narrated. Chapters start at its headings (`assemble`). The title is the page's `<title>` (else
its one `<h1>`), the author its `<meta name="author">`, the language its `lang`.

Markdown goes through markdown-it-py (CommonMark): `# Heading` lines are headings, `_italics_`
become emphasis, which is not read out as markers.
"""

from __future__ import annotations

import re

from lxml import etree

from audiopub.book.formats.assemble import BookText
from audiopub.book.formats.plain_text import decode_text
from audiopub.book.safe_xml import parse_html, parse_markup
from audiopub.book.toc import clean_label, local_name
from audiopub.errors import BadBook

__all__ = ["read_html", "read_markdown"]

_XML_START = re.compile(
    rb"^\s*(?:\xef\xbb\xbf)?\s*<\?xml|xmlns=[\"']http://www\.w3\.org/1999/xhtml"
)
_AUTHOR_META = frozenset({"author", "dc.creator", "dcterms.creator"})
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def read_html(data: bytes, name: str) -> BookText:
    problems: list[str] = []
    if _XML_START.search(data[:4096]):
        root = parse_markup(data, deep=True, problems=problems)
    else:
        root = parse_html(data, problems)
    if root is None:
        raise BadBook(f"{name}: the page could not be parsed")
    notes = [
        f"{problem}, far beyond any real book; its text from there on was left out."
        for problem in problems
    ]
    return _book_text(root, notes)


def read_markdown(data: bytes, name: str) -> BookText:
    from markdown_it import MarkdownIt

    # Raw HTML in the Markdown is kept: it is then read as any page is.
    page = MarkdownIt("commonmark").render(decode_text(data))
    root = parse_html(f"<html><body>{page}</body></html>".encode())
    if root is None:
        raise BadBook(f"{name} has no text to narrate")
    return _book_text(root, [])


def _book_text(root: etree._Element, notes: list[str]) -> BookText:
    title = authors = language = None
    h1s = []
    for el in root.iter():
        name = local_name(el)
        if name == "title" and title is None:
            title = clean_label("".join(el.itertext())) or None
        elif name == "meta" and (el.get("name") or "").lower() in _AUTHOR_META and not authors:
            authors = clean_label(el.get("content") or "") or None
        elif name == "html":
            language = el.get("lang") or el.get(_XML_LANG)
        elif name == "h1":
            h1s.append(clean_label("".join(el.itertext())))
    if title is None and len(h1s) == 1:
        title = h1s[0]
    return BookText(
        root,
        title=title,
        authors=(authors,) if authors else (),
        language=clean_label(language or "") or None,
        notes=notes,
    )
