"""Read an EPUB into a `Book`: metadata, cover, and the chapters a listener wants to hear.

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
import html.entities
import os
import posixpath
import re
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote_to_bytes

from ebooklib import epub
from lxml import etree

from audiopub.book import toc
from audiopub.book.models import Book, Cover
from audiopub.book.text import normalise_text
from audiopub.book.toc import Block, Mark, TocEntry, clean_label, epub_types, local_name
from audiopub.errors import BadEpub

__all__ = ["read_epub"]

DC_NS = "http://purl.org/dc/elements/1.1/"
OPF_NS = "http://www.idpf.org/2007/opf"
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

_BR = "\x00"  # a <br/> while a paragraph is collected; two in a row end the paragraph
_PART = "\x01"  # a boundary between the parts of an <hgroup>


def read_epub(path: str | os.PathLike[str]) -> Book:
    """Read the EPUB at `path`; raise `BadEpub` if it can't be read or has nothing to narrate."""
    path = Path(path)
    _check_package(path)
    book = _open(path)
    title = _title(book, path)
    notes: list[str] = []
    items = {item.get_id(): item for item in book.get_items()}
    docs = _spine_documents(book, items, notes)
    entries = _toc_entries(book, notes)
    known = {posixpath.normpath(item.get_name()) for item in items.values()}
    entries, targets = toc.chapter_targets(entries, [doc.path for doc in docs], known, notes)
    stream = _read_documents(docs, targets)
    _cut_gutenberg_boilerplate(stream)
    for block in stream:
        if isinstance(block, Block) and not block.skipped:
            block.spoken = normalise_text(block.text)
    chapters = toc.cut_chapters(stream, entries, title, notes)
    if not chapters:
        reason = "its reading order lists no text documents" if not docs else (
            "its pages hold only images, tables of contents or licence text")
        raise BadEpub(f"{path.name} has no text to narrate ({reason})")
    return Book(
        title=title,
        authors=_authors(book),
        language=_language(book),
        chapters=tuple(chapters),
        cover=_cover(book, items),
        warnings=tuple(notes),
    )


# --- opening --------------------------------------------------------------------------------


def _check_package(path: Path) -> None:
    """Fail early, in plain words, on the ways a file can fail to be an EPUB at all."""
    name = path.name
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                container = _parse_strict(zf.read("META-INF/container.xml"))
            except KeyError as exc:
                raise BadEpub(f"{name}: not an EPUB (it has no META-INF/container.xml)") from exc
            except etree.XMLSyntaxError as exc:
                raise BadEpub(f"{name}: META-INF/container.xml is not valid XML ({exc})") from exc
            rootfile = next((el.get("full-path") for el in container.iter()
                             if local_name(el) == "rootfile" and el.get("full-path")), None)
            if not rootfile:
                raise BadEpub(f"{name}: META-INF/container.xml does not name a package file")
            try:
                opf = zf.read(rootfile)
            except KeyError as exc:
                raise BadEpub(f"{name}: its package file {rootfile} is missing") from exc
            if _has_encrypted_text(zf):
                raise BadEpub(f"{name}: its text is encrypted (DRM); only DRM-free EPUBs work")
    except zipfile.BadZipFile as exc:
        raise BadEpub(f"{name}: not an EPUB (it is not a zip archive)") from exc
    except zlib.error as exc:
        raise BadEpub(f"{name}: the archive is damaged ({exc})") from exc
    except OSError as exc:
        raise BadEpub(f"{name}: the file can't be opened ({exc.strerror or exc})") from exc
    try:
        package = _parse_strict(opf)
    except etree.XMLSyntaxError as exc:
        raise BadEpub(f"{name}: its package file {rootfile} is not valid XML ({exc})") from exc
    missing = [part for part in ("manifest", "spine")
               if not any(local_name(el) == part for el in package)]
    if local_name(package) != "package" or missing:
        what = ", ".join(missing) or "package element"
        raise BadEpub(f"{name}: its package file {rootfile} has no {what}")


def _has_encrypted_text(zf: zipfile.ZipFile) -> bool:
    """DRM encrypts the XHTML; font obfuscation (also listed in encryption.xml) is harmless."""
    try:
        root = _parse_strict(zf.read("META-INF/encryption.xml"))
    except (KeyError, etree.XMLSyntaxError):
        return False
    uris = (el.get("URI", "") for el in root.iter() if local_name(el) == "CipherReference")
    return any(uri.lower().endswith((".xhtml", ".html", ".htm")) for uri in uris)


class _Reader(epub.EpubReader):
    """ebooklib's reader minus its TOC parsing: toc.py reads the nav and NCX itself, and
    ebooklib's parsers raise on valid but unusual ones (a nav without <ol>, an NCX label without
    <text>, a spine@toc naming no item)."""

    def _load_spine(self) -> None:
        spine = self.container.find(f"{{{OPF_NS}}}spine")
        self.book.spine = [(ref.get("idref"), ref.get("linear", "yes"))
                           for ref in spine if local_name(ref) == "itemref"]

    def _parse_nav(self, data: bytes, base_path: str, navtype: str = "toc") -> None:
        pass

    def _parse_ncx(self, data: bytes) -> None:
        pass


def _open(path: Path) -> epub.EpubBook:
    name = path.name
    try:
        with warnings.catch_warnings():
            # ebooklib warns about its own future defaults; nothing for our users to act on.
            warnings.filterwarnings("ignore", category=UserWarning, module=r"ebooklib")
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"ebooklib")
            reader = _Reader(str(path), {"ignore_ncx": True})
            book = reader.load()
            reader.process()
            return book
    except KeyError as exc:
        missing = exc.args[0] if exc.args else exc
        raise BadEpub(
            f"{name}: a file the book lists is missing from the archive ({missing})") from exc
    except (epub.EpubException, zipfile.BadZipFile, zlib.error, etree.XMLSyntaxError) as exc:
        raise BadEpub(f"{name}: the EPUB can't be read ({exc})") from exc
    except (AttributeError, TypeError) as exc:
        # ebooklib trips over structure it doesn't expect (e.g. an OPF without namespaces).
        raise BadEpub(f"{name}: its package file is malformed ({exc})") from exc


def _parse_strict(data: bytes) -> etree._Element:
    # libxml2's default limits (no huge_tree) also cap nesting depth, which keeps the recursive
    # walker below well inside Python's recursion limit.
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    return etree.fromstring(data, parser)


_NAMED_ENTITY = re.compile(rb"&([A-Za-z][A-Za-z0-9]*);")
_XML_ENTITIES = frozenset({b"amp", b"lt", b"gt", b"quot", b"apos"})


def _numeric_entities(data: bytes) -> bytes:
    """&nbsp; → &#160;: XHTML files use HTML entities that XML without the DTD doesn't know."""
    def replace(match: re.Match[bytes]) -> bytes:
        code = html.entities.name2codepoint.get(match.group(1).decode("ascii"))
        if match.group(1) in _XML_ENTITIES or code is None:
            return match.group(0)
        return b"&#%d;" % code
    return _NAMED_ENTITY.sub(replace, data)


def _parse_xhtml(data: bytes) -> etree._Element | None:
    """Parse strictly; if that fails (e.g. calibre's tag soup), let libxml2 recover what it can."""
    data = _numeric_entities(data)
    try:
        return _parse_strict(data)
    except etree.XMLSyntaxError:
        parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
        try:
            return etree.fromstring(data, parser)
        except etree.XMLSyntaxError:
            return None


# --- metadata and cover ---------------------------------------------------------------------


def _dc(book: epub.EpubBook, name: str) -> list[tuple[str | None, dict[str, str]]]:
    return book.metadata.get(DC_NS, {}).get(name, [])


def _opf_metas(book: epub.EpubBook) -> list[dict[str, str]]:
    """Attributes of every OPF <meta> (ebooklib files them under a few different keys)."""
    found = []
    for values in book.metadata.get(OPF_NS, {}).values():
        for value, attrs in values:
            found.append({**(attrs or {}), "#text": (value or "").strip()})
    return found


def _title(book: epub.EpubBook, path: Path) -> str:
    titles = (clean_label(value or "") for value, _ in _dc(book, "title"))
    return next((t for t in titles if t), path.stem)


def _authors(book: epub.EpubBook) -> tuple[str, ...]:
    """Every dc:creator whose role is author or not given (EPUB2 opf:role, EPUB3 refines)."""
    roles: dict[str, set[str]] = {}
    for meta in _opf_metas(book):
        if meta.get("property") == "role" and meta.get("refines", "").startswith("#"):
            roles.setdefault(meta["refines"][1:], set()).add(meta["#text"])
    authors: list[str] = []
    for value, attrs in _dc(book, "creator"):
        name = clean_label(value or "")
        found = set(roles.get(attrs.get("id", ""), ()))
        if attrs.get(f"{{{OPF_NS}}}role"):
            found.add(attrs[f"{{{OPF_NS}}}role"])
        if name and (not found or "aut" in found) and name not in authors:
            authors.append(name)
    return tuple(authors)


def _language(book: epub.EpubBook) -> str | None:
    languages = ((value or "").strip() for value, _ in _dc(book, "language"))
    return next((lang for lang in languages if lang), None)


def _cover(book: epub.EpubBook, items: dict[str, epub.EpubItem]) -> Cover | None:
    """EPUB3 cover-image, else EPUB2 <meta name="cover">, else an image named like a cover."""
    by_path = {posixpath.normpath(item.get_name()): item for item in items.values()}
    candidates = [item for item in items.values() if isinstance(item, epub.EpubCover)]
    for meta in _opf_metas(book):
        if meta.get("name") == "cover" and meta.get("content"):
            content = meta["content"]
            candidates.append(items.get(content) or by_path.get(posixpath.normpath(content)))
    candidates += [item for item in items.values()
                   if (item.media_type or "").startswith("image/")
                   and "cover" in f"{item.get_id()} {item.get_name()}".lower()]
    for item in candidates:
        cover = _raster_cover(item, by_path) if item is not None else None
        if cover:
            return cover
    return None


def _raster_cover(item: epub.EpubItem, by_path: dict[str, epub.EpubItem]) -> Cover | None:
    data = item.content or b""
    media_type = _sniff_raster(data)
    if media_type:
        return Cover(data, media_type)
    if item.media_type == "image/svg+xml":
        return _cover_inside_svg(item, by_path)
    return None


def _cover_inside_svg(item: epub.EpubItem, by_path: dict[str, epub.EpubItem]) -> Cover | None:
    """Standard Ebooks' covers are SVGs wrapping a JPEG (inline as a data: URI or by href)."""
    root = _parse_xhtml(item.content or b"")
    if root is None:
        return None
    for image in root.iter(f"{{{SVG_NS}}}image", "image"):
        href = (image.get(f"{{{XLINK_NS}}}href") or image.get("href") or "").strip()
        if href.startswith("data:"):
            header, _, payload = href.partition(",")
            try:
                data = (base64.b64decode(payload) if header.endswith(";base64")
                        else unquote_to_bytes(payload))
            except binascii.Error:
                continue
        else:
            target = toc.resolve_href(href, posixpath.dirname(item.get_name()))
            linked = by_path.get(target[0]) if target else None
            data = linked.content if linked is not None else b""
        media_type = _sniff_raster(data)
        if media_type:
            return Cover(data, media_type)
    return None


def _sniff_raster(data: bytes) -> str | None:
    """The image type from the file's first bytes (manifests sometimes declare it wrongly)."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


# --- reading order and table of contents ----------------------------------------------------


@dataclass
class _Doc:
    path: str
    root: etree._Element


def _spine_documents(book: epub.EpubBook, items: dict[str, epub.EpubItem],
                     notes: list[str]) -> list[_Doc]:
    docs = []
    for idref, linear in book.spine:
        item = items.get(idref)
        if item is None:
            notes.append(f"The reading order names a missing item “{idref}”; it was ignored.")
            continue
        if (str(linear).strip().lower() == "no" or isinstance(item, epub.EpubNav)
                or not _is_html(item)):
            continue
        root = _parse_xhtml(item.content or b"")
        if root is None:
            notes.append(f"{item.get_name()} could not be parsed; its text was left out.")
            continue
        docs.append(_Doc(posixpath.normpath(item.get_name()), root))
    return docs


def _is_html(item: epub.EpubItem) -> bool:
    return (item.media_type in ("application/xhtml+xml", "text/html")
            or item.get_name().lower().endswith((".xhtml", ".html", ".htm")))


def _toc_entries(book: epub.EpubBook, notes: list[str]) -> list[TocEntry]:
    """The EPUB3 nav document's toc when it has entries, else the NCX."""
    navs = [i for i in book.get_items() if isinstance(i, epub.EpubNav)]
    ncxs = [i for i in book.get_items() if i.media_type == "application/x-dtbncx+xml"]
    for item, reader in [*((n, toc.nav_entries) for n in navs),
                         *((n, toc.ncx_entries) for n in ncxs)]:
        root = _parse_xhtml(item.content or b"")
        if root is None:
            notes.append(f"The table of contents {item.get_name()} could not be parsed.")
            continue
        entries = reader(root, posixpath.dirname(posixpath.normpath(item.get_name())))
        if entries:
            return entries
    return []


# --- walking the XHTML ----------------------------------------------------------------------


def _read_documents(docs: list[_Doc],
                    targets: dict[str, dict[str, list[int]]]) -> list[Block | Mark]:
    """The paragraphs of all documents in order, with marks where chapters start."""
    stream: list[Block | Mark] = []
    for doc in docs:
        doc_targets = targets.get(doc.path, {})
        begin = len(stream)
        walker = _Walker(doc_targets, stream)
        walker.walk(doc.root)
        walker.flush()
        # Entries for the whole file, or whose id is missing, start at the top of the file.
        unplaced = [Mark(i) for key, found in doc_targets.items() if key not in walker.hit
                    for i in found]
        stream[begin:begin] = sorted(unplaced, key=lambda mark: mark.entry)
    return stream


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
        paragraph = ""
        for piece in filter(None, pieces):
            # hgroup parts ("I" + "The Eve of the War") read as "I: The Eve of the War".
            separator = " " if paragraph[-1:] in ".:;!?" else ": "
            paragraph = f"{paragraph}{separator}{piece}" if paragraph else piece
        if paragraph:
            paragraphs.append(paragraph)
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
