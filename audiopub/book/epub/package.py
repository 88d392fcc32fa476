"""The package document (OPF): metadata, manifest and spine, found through container.xml.

Read from an `EpubArchive` with the hardened XML parser, so no file of the book is trusted
before it has been checked. Also finds DRM: `META-INF/encryption.xml` listing a text document.
Font obfuscation (the IDPF and Adobe algorithms) is listed there too, and is harmless.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from urllib.parse import unquote

from lxml import etree

from audiopub.book.chapters.toc import URL_SCHEME
from audiopub.book.epub.archive import EpubArchive, printable, safe_name
from audiopub.book.markup import local_name
from audiopub.book.safe_xml import describe_error, parse_markup, parse_xml
from audiopub.errors import BadEpub

__all__ = ["NCX_TYPE", "Item", "Package", "read_package"]

DC_NS = "http://purl.org/dc/elements/1.1/"
OPF_NS = "http://www.idpf.org/2007/opf"
CONTAINER = "META-INF/container.xml"
ENCRYPTION = "META-INF/encryption.xml"
NCX_TYPE = "application/x-dtbncx+xml"
_HTML_TYPES = frozenset({"application/xhtml+xml", "text/html"})
_TEXT_SUFFIXES = (".xhtml", ".html", ".htm", ".xml", ".ncx", ".opf")


@dataclass(frozen=True)
class Item:
    """One manifest entry."""

    id: str
    name: str  # href, percent-decoded, relative to the OPF's folder (as TOC hrefs resolve)
    path: str | None  # where it is in the archive; None if the href leaves the book
    media_type: str
    properties: frozenset[str]

    @property
    def is_html(self) -> bool:
        return self.media_type in _HTML_TYPES or self.name.lower().endswith(
            (".xhtml", ".html", ".htm")
        )

    @property
    def is_svg(self) -> bool:
        """An SVG document: in a fixed-layout book's reading order, a page of its own."""
        return self.media_type == "image/svg+xml" or self.name.lower().endswith(".svg")

    @property
    def is_page(self) -> bool:
        """A document the reading order can hold text in: XHTML, or an SVG page."""
        return self.is_html or self.is_svg

    @property
    def is_nav(self) -> bool:
        return "nav" in self.properties and self.media_type in _HTML_TYPES


@dataclass
class Package:
    opf_path: str
    dc: dict[str, list[tuple[str, dict[str, str]]]]  # "title" → [(text, attributes), …]
    metas: list[dict[str, str]]  # each <meta>'s attributes, its text under "#text"
    items: dict[str, Item]  # by id, in manifest order
    spine: list[tuple[str, bool]]  # (idref, linear)
    notes: list[str] = field(default_factory=list)


def _fail(book: str, message: str) -> BadEpub:
    return BadEpub(f"{book}: {message}")


def _required(archive: EpubArchive, name: str, missing: str) -> bytes:
    try:
        return archive.read(name)
    except KeyError as exc:
        raise _fail(archive.book, missing) from exc


def read_package(archive: EpubArchive) -> Package:
    """Container → OPF → `Package`; raises `BadEpub` if there is no usable OPF or it's DRM'd."""
    book = archive.book
    data = _required(archive, CONTAINER, "not an EPUB (it has no META-INF/container.xml)")
    try:
        container = parse_xml(data)
    except etree.XMLSyntaxError as exc:
        raise _fail(
            book, f"META-INF/container.xml is not valid XML ({describe_error(exc)})"
        ) from exc
    opf_path = next(
        (
            el.get("full-path")
            for el in container.iter()
            if local_name(el) == "rootfile" and el.get("full-path")
        ),
        None,
    )
    if not opf_path:
        raise _fail(book, "META-INF/container.xml does not name a package file")
    opf_path = opf_path.strip().lstrip("/")  # "/OEBPS/content.opf": the container's root
    shown = printable(opf_path)
    if safe_name(opf_path) is None:
        raise _fail(book, f"its package file “{shown}” points outside the book")
    opf = _required(archive, opf_path, f"its package file {shown} is missing")
    notes = []
    try:
        root = parse_xml(opf)
    except etree.XMLSyntaxError as exc:
        # "Pride & Prejudice" or an HTML entity in a title: recover, as other readers do, if
        # what is left is still a package with a manifest and a spine.
        recovered = parse_markup(opf)
        if recovered is None or _missing_parts(recovered):
            raise _fail(
                book, f"its package file {shown} is not valid XML ({describe_error(exc)})"
            ) from exc
        root = recovered
        notes.append(
            f"The package file {shown} has XML errors ({describe_error(exc)}); it was "
            "read as far as possible."
        )
    missing = _missing_parts(root)
    if missing:
        raise _fail(book, f"its package file {shown} has no {missing}")
    parts = {local_name(el): el for el in reversed(root)}  # the first of each, like find()
    opf_dir = posixpath.dirname(safe_name(opf_path) or "")
    metadata = parts.get("metadata")
    dc, metas = _metadata(metadata) if metadata is not None else ({}, [])
    package = Package(
        opf_path, dc, metas, _manifest(parts["manifest"], opf_dir), _spine(parts["spine"]), notes
    )
    _check_drm(archive, package)
    return package


def _missing_parts(root: etree._Element) -> str:
    """ "" for a package with a manifest and a spine, else what it lacks."""
    if local_name(root) != "package":
        return "package element"
    present = {local_name(el) for el in root}
    return ", ".join(part for part in ("manifest", "spine") if part not in present)


def _text(el: etree._Element) -> str:
    return "".join(el.itertext()).strip()


def _metadata(
    metadata: etree._Element,
) -> tuple[dict[str, list[tuple[str, dict[str, str]]]], list[dict[str, str]]]:
    dc: dict[str, list[tuple[str, dict[str, str]]]] = {}
    metas: list[dict[str, str]] = []
    for el in metadata.iter():
        if not isinstance(el.tag, str):
            continue
        attrs = {str(k): str(v) for k, v in el.attrib.items()}
        if el.tag.startswith(f"{{{DC_NS}}}"):
            dc.setdefault(local_name(el), []).append((_text(el), attrs))
        elif local_name(el) == "meta":
            metas.append({**attrs, "#text": _text(el)})
    return dc, metas


def _manifest(manifest: etree._Element, opf_dir: str) -> dict[str, Item]:
    items: dict[str, Item] = {}
    for el in manifest:
        if local_name(el) != "item":
            continue
        href = (el.get("href") or "").strip()
        if not href or URL_SCHEME.match(href):
            continue  # a remote resource (EPUB 3 allows audio and video on the web)
        name = unquote(href.partition("#")[0])
        path = safe_name(posixpath.join(opf_dir, name))
        media_type = (el.get("media-type") or "").strip().lower()
        if media_type == "image/jpg":
            media_type = "image/jpeg"
        item_id = el.get("id") or name
        items[item_id] = Item(
            item_id,
            posixpath.normpath(name) if name else name,
            path,
            media_type,
            frozenset((el.get("properties") or "").split()),
        )
    return items


def _spine(spine: etree._Element) -> list[tuple[str, bool]]:
    return [
        (ref.get("idref", ""), (ref.get("linear") or "yes").strip().lower() != "no")
        for ref in spine
        if local_name(ref) == "itemref"
    ]


def _check_drm(archive: EpubArchive, package: Package) -> None:
    """DRM encrypts the text documents. Font obfuscation (the IDPF's and Adobe's algorithms,
    which scramble a font with the book's id) is listed in encryption.xml too, but only for
    fonts: a book is DRM'd when any text document is listed, whatever the algorithm."""
    try:
        root = parse_xml(archive.read(ENCRYPTION))
    except KeyError:
        return
    except (etree.XMLSyntaxError, BadEpub):
        package.notes.append(
            "META-INF/encryption.xml could not be read; if the text is "
            "encrypted it will not be readable."
        )
        return
    text_paths = {
        item.path for item in package.items.values() if item.is_page or item.media_type == NCX_TYPE
    }
    for data in root.iter():
        if local_name(data) != "EncryptedData":
            continue
        for ref in data.iter():
            if local_name(ref) != "CipherReference":
                continue
            path = safe_name(unquote(ref.get("URI") or "").strip())
            if path and (path in text_paths or path.lower().endswith(_TEXT_SUFFIXES)):
                raise _fail(
                    archive.book,
                    "this book is DRM-protected (its text is encrypted); "
                    "Audiopub can only narrate DRM-free EPUBs",
                )
