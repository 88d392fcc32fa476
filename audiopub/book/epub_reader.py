"""Read an EPUB into a `Book`: metadata, cover, and the chapters a listener wants to hear.

Files may be hostile. The zip is read in memory, within limits, by `archive.EpubArchive`;
container.xml and the OPF (and DRM) by `package.read_package`; every XML file with the parser of
`safe_xml` (no entities, no DTDs, no network). A missing or damaged file that is not essential
(a picture, a font, one chapter) only costs a warning in `Book.warnings`.

How the text is found:
1. The spine documents, in reading order (without the nav document and `linear="no"` items),
   are walked into a stream of paragraphs. Where a TOC entry points, a mark goes between them.
2. Project Gutenberg's header and licence are cut ("*** START OF …" / "*** END OF …").
3. The marks of entries that start a chapter cut the stream into chapters; each paragraph
   goes through `normalise_text`. Chapters left with no text are dropped.

Never narrated: printed tables of contents, Standard Ebooks' imprint, colophon, uncopyright and
endnotes, half-title pages, note references, page numbers, images, scripts. Kept: title pages
(the book opens with its title and author), dedications, epigraphs, headings.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote_to_bytes

from lxml import etree

from audiopub import settings
from audiopub.book import toc
from audiopub.book.archive import EpubArchive, human_size
from audiopub.book.models import Book, Cover, sniff_image_type
from audiopub.book.package import NCX_TYPE, OPF_NS, Item, Package, read_package
from audiopub.book.safe_xml import parse_markup
from audiopub.book.text import normalise_text
from audiopub.book.toc import Block, Mark, TocEntry, clean_label, epub_types, local_name
from audiopub.errors import BadEpub, DamagedEntry

__all__ = ["read_epub"]

log = logging.getLogger(__name__)

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
_BLOCK_TAGS = frozenset(
    "address article aside blockquote body caption center dd details div dl dt figcaption "
    "figure footer header hgroup h1 h2 h3 h4 h5 h6 hr li main nav ol p pre section summary table "
    "tbody td tfoot th thead tr ul".split()
)
_HEADINGS = frozenset("h1 h2 h3 h4 h5 h6 hgroup".split())
# Never spoken, and nothing inside them is either.
_DROP_TAGS = frozenset(
    "head script style svg img image rt rp object embed audio video iframe canvas map math "
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

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

_BR = "\x00"  # a <br/> while a paragraph is collected; two in a row end the paragraph
_PART = "\x01"  # a boundary between the parts of an <hgroup>


def read_epub(path: str | os.PathLike[str]) -> Book:
    """Read the EPUB at `path`; raise `BadEpub` if it can't be read or has nothing to narrate.

    Problems the book survives (a missing picture, an unreadable chapter file, a chapter with no
    text) are in `Book.warnings`, and logged.
    """
    path = Path(path)
    with EpubArchive(path) as archive:
        try:
            return _read_book(archive, path)
        except RecursionError as exc:  # the parser's depth limit keeps this from happening
            raise BadEpub(f"{path.name}: its pages are nested too deeply to read") from exc


def _read_book(archive: EpubArchive, path: Path) -> Book:
    """The book in an open archive: package, text, chapters, metadata, cover."""
    package = read_package(archive)
    notes = [*archive.warnings, *package.notes]
    files = _Files(archive, package, notes)
    title = _title(package, path)
    docs = _spine_documents(package, files)
    entries = _toc_entries(package, files, notes)
    known = {item.name for item in package.items.values()}
    entries, targets = toc.chapter_targets(entries, [doc.path for doc in docs], known, notes)
    stream, parsed = _read_documents(docs, targets, notes)
    _cut_gutenberg_boilerplate(stream)
    for block in stream:
        if isinstance(block, Block) and not block.skipped:
            block.spoken = normalise_text(block.text)
    chapters = toc.cut_chapters(stream, entries, title, notes)
    # Names in notes come from the file: no control characters may reach a log or a page.
    notes = [_CONTROL.sub("?", note) for note in notes]
    for note in notes:
        log.warning("%s: %s", path.name, note)
    if not chapters:
        why = _why_no_text(archive, package, files, parsed)
        raise BadEpub(f"{path.name} has no text to narrate ({why})")
    return Book(
        title=title,
        authors=_authors(package),
        language=_language(package),
        chapters=tuple(chapters),
        cover=_cover(package, files),
        warnings=tuple(notes),
    )


def _why_no_text(archive: EpubArchive, package: Package, files: _Files, parsed: int) -> str:
    if parsed:
        return "its pages hold only images, tables of contents or licence text"
    listed = [package.items[idref] for idref, linear in package.spine
              if linear and idref in package.items and package.items[idref].is_html]
    if listed and all(item.path is None or item.path not in archive for item in listed):
        return "the text documents in its reading order are missing from the archive"
    if listed and files.damaged:
        return "the archive is damaged: its text documents can't be unpacked"
    if listed:
        return "none of the text documents in its reading order could be read"
    return "its reading order lists no text documents"


# --- the book's files -----------------------------------------------------------------------


class _Files:
    """Reads manifest items from the archive on demand. A file that is missing or can't be
    unpacked is not fatal: the book goes on without it, with a note."""

    def __init__(self, archive: EpubArchive, package: Package, notes: list[str]) -> None:
        self.archive = archive
        self.notes = notes
        self.damaged: list[str] = []  # entries that could not be unpacked
        spine = {idref for idref, linear in package.spine if linear}
        absent = []
        for item in package.items.values():
            if item.path is not None and item.path in archive:
                continue
            if item.id in spine and item.is_html:
                where = "is missing from the archive" if item.path else "points outside the book"
                notes.append(f"{item.name} (in the reading order) {where}; its text was left out.")
            else:
                absent.append(item.name)
        if absent:
            shown = ", ".join(absent[:3]) + (", …" if len(absent) > 3 else "")
            what = "file the book lists is" if len(absent) == 1 else "files the book lists are"
            notes.append(f"{len(absent)} {what} missing from the archive ({shown}); the book "
                         "was read without them.")

    def read(self, item: Item, consequence: str, limit: int | None = None) -> bytes | None:
        """The item's bytes, or None (with a note) if it is missing, can't be unpacked, or is
        larger than `limit`."""
        if item.path is None:
            return None
        try:
            size = self.archive.size(item.path)
        except KeyError:
            return None  # noted above
        if limit is not None and size > limit:
            self.notes.append(f"{item.name} is {human_size(size)}, too large for one page of "
                              f"a book; {consequence}.")
            return None
        try:
            return self.archive.read(item.path)
        except KeyError:
            return None  # noted above
        except DamagedEntry as exc:
            self.damaged.append(item.name)
            self.notes.append(f"{item.name} can't be unpacked ({exc.reason}); {consequence}.")
            return None


# --- metadata and cover ---------------------------------------------------------------------


def _title(package: Package, path: Path) -> str:
    titles = (clean_label(value) for value, _ in package.dc.get("title", []))
    return next((t for t in titles if t), path.stem)


def _authors(package: Package) -> tuple[str, ...]:
    """Every dc:creator whose role is author or not given (EPUB2 opf:role, EPUB3 refines)."""
    roles: dict[str, set[str]] = {}
    for meta in package.metas:
        if meta.get("property") == "role" and meta.get("refines", "").startswith("#"):
            roles.setdefault(meta["refines"][1:], set()).add(meta["#text"])
    authors: list[str] = []
    for value, attrs in package.dc.get("creator", []):
        name = clean_label(value)
        found = set(roles.get(attrs.get("id", ""), ()))
        role = attrs.get(f"{{{OPF_NS}}}role")
        if role:
            found.add(role)
        if name and (not found or "aut" in found) and name not in authors:
            authors.append(name)
    return tuple(authors)


def _language(package: Package) -> str | None:
    languages = (clean_label(value) for value, _ in package.dc.get("language", []))
    return next((lang for lang in languages if lang), None)


def _cover(package: Package, files: _Files) -> Cover | None:
    """EPUB3 cover-image, else EPUB2 <meta name="cover">, else an image named like a cover."""
    items = package.items
    by_name = {item.name: item for item in items.values()}
    candidates = [item for item in items.values() if "cover-image" in item.properties]
    for meta in package.metas:
        if meta.get("name") == "cover" and meta.get("content"):
            content = meta["content"]
            candidates.append(items.get(content) or by_name.get(posixpath.normpath(content)))
    candidates += [item for item in items.values()
                   if item.media_type.startswith("image/")
                   and "cover" in f"{item.id} {item.name}".lower()]
    for item in candidates:
        cover = _raster_cover(item, by_name, files) if item is not None else None
        if cover:
            return cover
    return None


def _raster_cover(item: Item, by_name: dict[str, Item], files: _Files) -> Cover | None:
    limit = settings.EPUB_MAX_DOCUMENT_BYTES if item.media_type == "image/svg+xml" else None
    data = files.read(item, "the cover was not used", limit) or b""
    media_type = sniff_image_type(data)
    if media_type:
        return Cover(data, media_type)
    if item.media_type == "image/svg+xml":
        return _cover_inside_svg(item, data, by_name, files)
    return None


def _cover_inside_svg(item: Item, svg: bytes, by_name: dict[str, Item],
                      files: _Files) -> Cover | None:
    """Standard Ebooks' covers are SVGs wrapping a JPEG (inline as a data: URI or by href)."""
    root = parse_markup(svg)
    if root is None:
        return None
    for image in root.iter(f"{{{SVG_NS}}}image", "image"):
        href = (image.get(f"{{{XLINK_NS}}}href") or image.get("href") or "").strip()
        if href.startswith("data:"):
            header, _, payload = href.partition(",")
            try:
                data = (base64.b64decode(payload) if header.endswith(";base64")
                        else unquote_to_bytes(payload))
            except (binascii.Error, ValueError):
                continue
        else:
            target = toc.resolve_href(href, posixpath.dirname(item.name))
            linked = by_name.get(target[0]) if target else None
            data = (files.read(linked, "the cover was not used") if linked else None) or b""
        media_type = sniff_image_type(data)
        if media_type:
            return Cover(data, media_type)
    return None


# --- reading order and table of contents ----------------------------------------------------


@dataclass
class _Doc:
    path: str
    data: bytes  # parsed only when its turn comes, so one tree is in memory at a time


def _spine_documents(package: Package, files: _Files) -> list[_Doc]:
    docs = []
    for idref, linear in package.spine:
        item = package.items.get(idref)
        if item is None:
            files.notes.append(f"The reading order names a missing item “{idref}”; it was "
                               "ignored.")
            continue
        if not linear or item.is_nav or not item.is_html:
            continue
        data = files.read(item, "its text was left out", settings.EPUB_MAX_DOCUMENT_BYTES)
        if data is not None:
            docs.append(_Doc(item.name, data))
    return docs


def _toc_entries(package: Package, files: _Files, notes: list[str]) -> list[TocEntry]:
    """The EPUB3 nav document's toc when it has entries, else the NCX."""
    items = package.items.values()
    navs = [(i, toc.nav_entries) for i in items if i.is_nav]
    ncxs = [(i, toc.ncx_entries) for i in items if i.media_type == NCX_TYPE]
    for item, reader in [*navs, *ncxs]:
        data = files.read(item, "its table of contents was not used",
                          settings.EPUB_MAX_DOCUMENT_BYTES)
        if data is None:
            continue
        root = parse_markup(data)
        if root is None:
            notes.append(f"The table of contents {item.name} could not be parsed.")
            continue
        entries = reader(root, posixpath.dirname(item.name))
        if entries:
            return entries
    return []


# --- walking the XHTML ----------------------------------------------------------------------


def _read_documents(docs: list[_Doc], targets: dict[str, dict[str, list[int]]],
                    notes: list[str]) -> tuple[list[Block | Mark], int]:
    """The paragraphs of all documents in order, with marks where chapters start; and how
    many documents could be parsed."""
    stream: list[Block | Mark] = []
    parsed = 0
    for doc in docs:
        root = parse_markup(doc.data)
        if root is None:
            notes.append(f"{doc.path} could not be parsed; its text was left out.")
            continue
        parsed += 1
        doc_targets = targets.get(doc.path, {})
        begin = len(stream)
        walker = _Walker(doc_targets, stream)
        walker.walk(root)
        walker.flush()
        # Entries for the whole file, or whose id is missing, start at the top of the file.
        unplaced = [Mark(i) for key, found in doc_targets.items() if key not in walker.hit
                    for i in found]
        stream[begin:begin] = sorted(unplaced, key=lambda mark: mark.entry)
    return stream, parsed


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

    def walk(self, el: etree._Element) -> None:
        name = local_name(el)
        if not name:  # comment, processing instruction, unknown entity
            self._add(el.tail)
            return
        if name == "br":
            self._add(_BR)
        block = name in _BLOCK_TAGS
        if block:
            self._boundary()
        self._mark(el)
        if block and _is_skipped_section(el, name):
            self._skip(el)
        elif _is_dropped(el, name):
            for inner in el.iterdescendants():
                self._mark(inner)  # a TOC target inside a page number still counts
        else:
            self._enter(el, name)
        self._add(el.tail)

    def _enter(self, el: etree._Element, name: str) -> None:
        if name == "a" and "gutenberg.org" in (el.get("href") or ""):
            self._boilerplate = True  # e.g. PG's "an illustrated edition is at gutenberg.org/…"
        heading, hgroup, pre = int(name in _HEADINGS), int(name == "hgroup"), int(name == "pre")
        self._heading += heading
        self._hgroup += hgroup
        self._pre += pre
        self._add(el.text)
        for child in el:
            self.walk(child)
        self._hgroup -= hgroup  # the hgroup ends here: its end is a real paragraph boundary
        if name in _BLOCK_TAGS:
            self._boundary()
        self._heading -= heading
        self._pre -= pre

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
            self.out.append(Block(paragraph, self._heading > 0, self._boilerplate))
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


# --- boilerplate and chapters ---------------------------------------------------------------


def _cut_gutenberg_boilerplate(stream: list[Block | Mark]) -> None:
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
