"""Word documents (.docx: Office Open XML), read from the archive with the EPUB's limits.

The text is the main document part's paragraphs in order (tables' and text boxes' too);
chapters start at paragraphs in Word's heading styles ("Title", "Heading 1"…, in any UI
language, since Word names its built-in styles in English inside the file) or with an outline
level, else at paragraphs that read as headings (`assemble`). Not read: headers and footers,
footnotes and comments (other parts), deleted tracked changes, field codes, pictures. The
title, author and language come from the document's properties (docProps/core.xml).

The parts are read by `zipped_xml` (archive limits, hardened parser), not by python-docx, so a
Word file meets the same zip-bomb and XML checks as an EPUB.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from lxml import etree

from audiopub.book.epub.archive import EpubArchive
from audiopub.book.formats.assemble import BookText, TreeBuilder
from audiopub.book.formats.attributes import whole_number
from audiopub.book.formats.zipped_xml import read_part
from audiopub.book.markup import clean_label, local_name

__all__ = ["read_docx"]

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_DC = "http://purl.org/dc/elements/1.1/"
_MAIN = "/officeDocument"
_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.I)
_BODY_TEXT = 9  # the outline level of text that is not a heading
# Whose text is not read: deleted or moved-away text, field codes, footnote marks, pictures.
_SKIP = frozenset(
    "del moveFrom instrText footnoteReference endnoteReference commentReference drawing "
    "pict object".split()
)


def read_docx(path: Path, name: str) -> BookText:
    notes: list[str] = []
    with EpubArchive(path, name, kind="a Word document", mimetype=None) as archive:
        notes.extend(archive.warnings)
        main = _main_part(archive, notes)
        document = read_part(archive, main, notes)
        assert document is not None  # required parts raise instead
        styles = read_part(
            archive, posixpath.join(posixpath.dirname(main), "styles.xml"), notes, required=False
        )
        core = read_part(archive, "docProps/core.xml", notes, required=False)
    levels = _style_levels(styles)
    builder = TreeBuilder()
    for p in document.iter(f"{{{W}}}p"):
        text = _paragraph_text(p)
        level = _paragraph_level(p, levels)
        if level:
            builder.heading(level, text)
        else:
            builder.paragraph(text)
    title, authors, language = _properties(core)
    return BookText(builder.root, title=title, authors=authors, language=language, notes=notes)


def _main_part(archive: EpubArchive, notes: list[str]) -> str:
    """The main document part, as the package's relationships name it."""
    rels = read_part(archive, "_rels/.rels", notes, required=False)
    if rels is not None:
        for rel in rels.iter(f"{{{_RELS}}}Relationship"):
            if (rel.get("Type") or "").endswith(_MAIN) and rel.get("Target"):
                return posixpath.normpath((rel.get("Target") or "").lstrip("/"))
    return "word/document.xml"


def _style_levels(styles: etree._Element | None) -> dict[str, int]:
    """Style id → heading level (1 for the title) for the styles that make headings."""
    levels: dict[str, int] = {}
    if styles is None:
        return levels
    for style in styles.iter(f"{{{W}}}style"):
        style_id = style.get(f"{{{W}}}styleId") or ""
        name_el = style.find(f"{{{W}}}name")
        name = (name_el.get(f"{{{W}}}val") or "") if name_el is not None else ""
        heading = _HEADING_STYLE.match(name.strip())
        heading_number = whole_number(heading.group(1), 9) if heading else None
        outline = _outline_level(style)
        if name.strip().lower() == "title":
            levels[style_id] = 1
        elif heading_number is not None:
            levels[style_id] = heading_number + 1
        elif outline is not None and outline < _BODY_TEXT:
            levels[style_id] = outline + 2
    return levels


def _outline_level(el: etree._Element) -> int | None:
    """The outline level a style or paragraph gives itself (0 for "Heading 1"), if any."""
    outline = el.find(f"{{{W}}}pPr/{{{W}}}outlineLvl")
    return whole_number(outline.get(f"{{{W}}}val"), _BODY_TEXT) if outline is not None else None


def _paragraph_level(p: etree._Element, levels: dict[str, int]) -> int:
    outline = _outline_level(p)
    if outline is not None and outline < _BODY_TEXT:
        return outline + 2
    style = p.find(f"{{{W}}}pPr/{{{W}}}pStyle")
    return levels.get(style.get(f"{{{W}}}val") or "", 0) if style is not None else 0


def _paragraph_text(p: etree._Element) -> str:
    """The paragraph's own text: not that of a paragraph inside it (a text box)."""
    out: list[str] = []
    stack = list(reversed(p))
    while stack:
        el = stack.pop()
        name = local_name(el)
        if name in _SKIP or name == "p":
            continue
        if name == "t":
            out.append(el.text or "")
        elif name in ("tab", "cr") or (name == "br" and el.get(f"{{{W}}}type") != "page"):
            out.append(" ")
        elif name == "noBreakHyphen":
            out.append("-")
        stack.extend(reversed(el))
    return "".join(out)


def _properties(core: etree._Element | None) -> tuple[str | None, tuple[str, ...], str | None]:
    if core is None:
        return None, (), None

    def value(tag: str) -> str | None:
        el = core.find(f"{{{_DC}}}{tag}")
        return (clean_label("".join(el.itertext())) or None) if el is not None else None

    creator = value("creator")
    authors = tuple(a.strip() for a in re.split(r";", creator) if a.strip()) if creator else ()
    return value("title"), authors, value("language")
