"""OpenDocument text (.odt: LibreOffice, OpenOffice), read from the archive with the EPUB's
limits (`zipped_xml`), not through odfpy, so it meets the same zip-bomb and XML checks.

The text is content.xml's headings (`text:h`, whose outline level makes chapters) and
paragraphs, lists' and tables' included, in order. Not read: footnotes and endnotes, comments,
deleted tracked changes, generated tables of contents and indexes, pictures. Title, author and
language come from meta.xml.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from audiopub.book.epub.archive import EpubArchive
from audiopub.book.formats.assemble import BookText, TreeBuilder
from audiopub.book.formats.attributes import whole_number
from audiopub.book.formats.zipped_xml import read_part
from audiopub.book.markup import clean_label, local_name

__all__ = ["read_odt"]

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_DC = "http://purl.org/dc/elements/1.1/"
_META = "urn:oasis:names:tc:opendocument:xmlns:meta:1.0"
MIMETYPE = b"application/vnd.oasis.opendocument.text"
# Paragraphs inside these are not the document's text.
_NOT_TEXT = frozenset(
    "tracked-changes note annotation table-of-content alphabetical-index "
    "illustration-index table-index object-index user-index bibliography".split()
)
_SKIP = frozenset({"note", "annotation", "annotation-end", "tracked-changes", "h", "p"})
_DEEPEST = 6  # headings go no deeper than h6
_MOST_SPACES = 100  # spaces one `text:s` may add: a wider gap says nothing more


def read_odt(path: Path, name: str) -> BookText:
    notes: list[str] = []
    with EpubArchive(path, name, kind="an OpenDocument text", mimetype=MIMETYPE) as archive:
        notes.extend(archive.warnings)
        content = read_part(archive, "content.xml", notes)
        assert content is not None  # a required part raises instead
        meta = read_part(archive, "meta.xml", notes, required=False)
    builder = TreeBuilder()
    for el in content.iter(f"{{{TEXT}}}h", f"{{{TEXT}}}p"):
        if any(local_name(a) in _NOT_TEXT for a in el.iterancestors()):
            continue
        text = _own_text(el)
        if local_name(el) == "h":
            level = whole_number(el.get(f"{{{TEXT}}}outline-level"), _DEEPEST)
            builder.heading(1 if level is None else level, text)
        else:
            builder.paragraph(text)
    title, authors, language = _meta(meta)
    return BookText(builder.root, title=title, authors=authors, language=language, notes=notes)


def _own_text(p: etree._Element) -> str:
    """The text of a paragraph or heading: spans, spaces, tabs, line breaks; not its notes."""
    out = [p.text or ""]
    stack: list[tuple[etree._Element, bool]] = [(child, False) for child in reversed(p)]
    while stack:
        el, done = stack.pop()
        if done:
            out.append(el.tail or "")
            continue
        name = local_name(el)
        if name == "s":
            count = whole_number(el.get(f"{{{TEXT}}}c"), _MOST_SPACES)
            out.append(" " * (1 if count is None else count))
        elif name in ("tab", "line-break"):
            out.append(" ")
        elif name not in _SKIP:
            out.append(el.text or "")
            stack.append((el, True))
            stack.extend((child, False) for child in reversed(el))
            continue
        out.append(el.tail or "")
    return "".join(out)


def _meta(meta: etree._Element | None) -> tuple[str | None, tuple[str, ...], str | None]:
    if meta is None:
        return None, (), None

    def value(namespace: str, tag: str) -> str | None:
        el = next(meta.iter(f"{{{namespace}}}{tag}"), None)
        return (clean_label("".join(el.itertext())) or None) if el is not None else None

    author = value(_DC, "creator") or value(_META, "initial-creator")
    return value(_DC, "title"), (author,) if author else (), value(_DC, "language")
