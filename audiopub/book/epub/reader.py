"""Read an EPUB into a `Book`: metadata, cover, and the chapters a listener wants to hear.

Files may be hostile. The zip is read in memory, within limits, by `archive.EpubArchive`;
container.xml and the OPF (and DRM) by `package.read_package`; every XML file with the parser of
`safe_xml` (no entities, no DTDs, no network). A missing or damaged file that is not essential
(a picture, a font, one chapter) only costs a warning in `Book.warnings`, and so does a cover
too large to use (`EPUB_MAX_COVER_BYTES`, `EPUB_MAX_COVER_PIXELS`, read from its header).

How the text is found:
1. The spine documents (XHTML, and SVG pages of fixed-layout books), in reading order (without
   the nav document and `linear="no"` items), are walked into a stream of paragraphs
   (`chapters.paragraphs`, which also says what is never narrated). Where a TOC entry points, a mark
   goes between them.
2. Project Gutenberg's header and licence are cut ("*** START OF …" / "*** END OF …").
3. The marks of entries that start a chapter cut the stream into chapters; each paragraph
   goes through `normalise_text`. Chapters left with no text are dropped; title pages and
   dedications are marked as front matter (`chapters.front_matter`), not narrated by default.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import posixpath
import re
from pathlib import Path
from urllib.parse import unquote_to_bytes

from audiopub import settings
from audiopub.book.chapters import toc
from audiopub.book.chapters.paragraphs import Document, cut_gutenberg_boilerplate, read_documents
from audiopub.book.chapters.toc import Block, TocEntry
from audiopub.book.epub.archive import EpubArchive, human_size
from audiopub.book.epub.metadata import book_details
from audiopub.book.epub.package import NCX_TYPE, OPF_NS, Item, Package, read_package
from audiopub.book.markup import clean_label
from audiopub.book.models import Book, Cover, sniff_image_type
from audiopub.book.pictures import image_size
from audiopub.book.pronunciation import PLS_TYPE, Pronunciation, from_pls
from audiopub.book.safe_xml import parse_markup
from audiopub.book.text import normalise_text
from audiopub.errors import BadEpub, DamagedEntry

__all__ = ["read_epub"]

log = logging.getLogger(__name__)

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def read_epub(path: str | os.PathLike[str], name: str | None = None) -> Book:
    """Read the EPUB at `path`; raise `BadEpub` if it can't be read or has nothing to narrate.

    Problems the book survives (a missing picture, an unreadable chapter file, a chapter with no
    text) are in `Book.warnings`, and logged. `name` is the file's name for messages, logs and
    a book without a title (default: the path's; an upload is kept under a random one).
    """
    path = Path(path)
    name = name or path.name
    with EpubArchive(path, name) as archive:
        try:
            return _read_book(archive, name)
        except RecursionError as exc:  # the parser's depth limit keeps this from happening
            raise BadEpub(f"{name}: its pages are nested too deeply to read") from exc


def _read_book(archive: EpubArchive, name: str) -> Book:
    """The book in an open archive: package, text, chapters, metadata, cover."""
    package = read_package(archive)
    notes = [*archive.warnings, *package.notes]
    files = _Files(archive, package, notes)
    title = _title(package, name)
    docs = _spine_documents(package, files)
    entries = _toc_entries(package, files, notes)
    known = {item.name for item in package.items.values()}
    entries, targets = toc.chapter_targets(entries, [doc.path for doc in docs], known, notes)
    hints: list[Pronunciation] = []
    stream, parsed, picture_pages = read_documents(docs, targets, notes, hints)
    for item in package.items.values():  # the book's own pronunciation lexicons
        if item.media_type == PLS_TYPE:
            data = files.read(item, "its pronunciations were left out")
            if data is not None:
                hints.extend(from_pls(data, item.name, notes))
    cut_gutenberg_boilerplate(stream)
    for block in stream:
        if isinstance(block, Block) and not block.skipped:
            block.spoken = normalise_text(block.text)
    chapters = toc.cut_chapters(
        stream,
        entries,
        title,
        notes,
        [value for value, _ in package.dc.get("title", [])],
        _authors(package),
    )
    cover = _cover(package, files) if chapters else None
    # Names in notes come from the file: no control characters may reach a log or a page.
    notes = [_CONTROL.sub("?", note) for note in notes]
    for note in notes:
        log.warning("%s: %s", name, note)
    if not chapters:
        why = _why_no_text(archive, package, files, parsed, picture_pages)
        raise BadEpub(f"{name} has no text to narrate ({why})")
    return Book(
        title=title,
        authors=_authors(package),
        language=_language(package),
        chapters=tuple(chapters),
        cover=cover,
        warnings=tuple(notes),
        pronunciations=tuple(hints),
        details=book_details(package),
    )


def _why_no_text(
    archive: EpubArchive, package: Package, files: _Files, parsed: int, picture_pages: int
) -> str:
    if parsed and picture_pages == parsed:
        pages = (
            "its page is a picture" if parsed == 1 else f"all {parsed} of its pages are pictures"
        )
        return (
            f"{pages} with no text in them, as in a scanned or drawn book; Audiopub reads text only"
        )
    if picture_pages:
        return (
            f"{picture_pages} of its {parsed} pages are pictures with no text in them, and "
            "the others hold only tables of contents or licence text"
        )
    if parsed:
        return (
            "its pages hold no text to read aloud, only blank pages, tables of contents or "
            "licence text"
        )
    listed = [
        package.items[idref]
        for idref, linear in package.spine
        if linear and idref in package.items and package.items[idref].is_page
    ]
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
            if item.id in spine and item.is_page:
                where = "is missing from the archive" if item.path else "points outside the book"
                notes.append(f"{item.name} (in the reading order) {where}; its text was left out.")
            else:
                absent.append(item.name)
        if absent:
            shown = ", ".join(absent[:3]) + (", …" if len(absent) > 3 else "")
            what = "file the book lists is" if len(absent) == 1 else "files the book lists are"
            notes.append(
                f"{len(absent)} {what} missing from the archive ({shown}); the book "
                "was read without them."
            )

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
            self.notes.append(
                f"{item.name} is {human_size(size)}, too large for one page of "
                f"a book; {consequence}."
            )
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


def _title(package: Package, name: str) -> str:
    """The package's title, else the file's name without its extension."""
    titles = (clean_label(value) for value, _ in package.dc.get("title", []))
    return next((t for t in titles if t), Path(name).stem)


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
    # None where a <meta name="cover"> names no item: skipped below.
    candidates: list[Item | None] = [
        item for item in items.values() if "cover-image" in item.properties
    ]
    for meta in package.metas:
        if meta.get("name") == "cover" and meta.get("content"):
            content = meta["content"]
            candidates.append(items.get(content) or by_name.get(posixpath.normpath(content)))
    candidates += [
        item
        for item in items.values()
        if item.media_type.startswith("image/") and "cover" in f"{item.id} {item.name}".lower()
    ]
    try:
        for item in candidates:
            cover = _raster_cover(item, by_name, files) if item is not None else None
            if cover:
                return cover
    except _CoverRefused:
        pass
    return None


def _raster_cover(item: Item, by_name: dict[str, Item], files: _Files) -> Cover | None:
    if item.media_type != "image/svg+xml":
        return _usable_cover(item, files)
    data = files.read(item, "the cover was not used", settings.EPUB_MAX_DOCUMENT_BYTES) or b""
    if sniff_image_type(data):  # a picture the manifest calls an SVG
        return _checked_cover(item.name, data, files)
    return _cover_inside_svg(item, data, by_name, files) if data else None


def _usable_cover(item: Item, files: _Files) -> Cover | None:
    """The picture as a cover, unless it is not one or is too large to use (then a note)."""
    try:
        size = files.archive.size(item.path) if item.path else 0
    except KeyError:
        return None  # noted with the missing files
    if size > settings.EPUB_MAX_COVER_BYTES:
        files.notes.append(
            f"The cover {item.name} is {human_size(size)}, too large to use "
            f"(the limit is {human_size(settings.EPUB_MAX_COVER_BYTES)}); the "
            "book has no cover."
        )
        raise _CoverRefused
    return _checked_cover(item.name, files.read(item, "the cover was not used") or b"", files)


def _checked_cover(name: str, data: bytes, files: _Files) -> Cover | None:
    media_type = sniff_image_type(data)
    if media_type is None:
        return None
    width, height = image_size(data) or (0, 0)
    if width * height > settings.EPUB_MAX_COVER_PIXELS:
        files.notes.append(
            f"The cover {name} is {width:,}×{height:,} pixels, too large to use; "
            "the book has no cover."
        )
        raise _CoverRefused
    return Cover(data, media_type)


class _CoverRefused(Exception):
    """The book's cover is too large: no other picture stands in for it."""


def _cover_inside_svg(
    item: Item, svg: bytes, by_name: dict[str, Item], files: _Files
) -> Cover | None:
    """Standard Ebooks' covers are SVGs wrapping a JPEG (inline as a data: URI or by href)."""
    root = parse_markup(svg)
    if root is None:
        return None
    for image in root.iter(f"{{{SVG_NS}}}image", "image"):
        href = (image.get(f"{{{XLINK_NS}}}href") or image.get("href") or "").strip()
        if href.startswith("data:"):
            header, _, payload = href.partition(",")
            try:
                data = (
                    base64.b64decode(payload)
                    if header.endswith(";base64")
                    else unquote_to_bytes(payload)
                )
            except (binascii.Error, ValueError):
                continue
            cover = _checked_cover(item.name, data, files)
        else:
            target = toc.resolve_href(href, posixpath.dirname(item.name))
            linked = by_name.get(target[0]) if target else None
            cover = _usable_cover(linked, files) if linked else None
        if cover:
            return cover
    return None


# --- reading order and table of contents ----------------------------------------------------


def _spine_documents(package: Package, files: _Files) -> list[Document]:
    docs = []
    for idref, linear in package.spine:
        item = package.items.get(idref)
        if item is None:
            files.notes.append(f"The reading order names a missing item “{idref}”; it was ignored.")
            continue
        if not linear or item.is_nav or not item.is_page:
            continue
        data = files.read(item, "its text was left out", settings.EPUB_MAX_DOCUMENT_BYTES)
        if data is not None:
            docs.append(Document(item.name, data))
    return docs


def _toc_entries(package: Package, files: _Files, notes: list[str]) -> list[TocEntry]:
    """The EPUB3 nav document's toc when it has entries, else the NCX."""
    items = package.items.values()
    navs = [(i, toc.nav_entries) for i in items if i.is_nav]
    ncxs = [(i, toc.ncx_entries) for i in items if i.media_type == NCX_TYPE]
    for item, reader in [*navs, *ncxs]:
        data = files.read(
            item, "its table of contents was not used", settings.EPUB_MAX_DOCUMENT_BYTES
        )
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
