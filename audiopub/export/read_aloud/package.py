"""The read-aloud EPUB written out: the source's files with its pages' sentences in spans, and
added, a SMIL overlay per page, the highlight's CSS, the chapters' audio (and a nav document
for an EPUB 2 book, whose table of contents is only an NCX), all declared in its package
document (OPF).

The OPF gets: a manifest item for every added file; `media-overlay` on each page that has one;
`media:duration` for each overlay and in total; `media:active-class`; a new `dcterms:modified`.
An EPUB 2 package becomes EPUB 3: version 3.0, its `opf:` attributes as EPUB 3 metadata (roles
and sort names refine their creators), one `dc:date`, its pages as HTML5 (`html5`) and the
properties EPUB 3 asks of them (`svg`, `scripted`, `mathml`).
"""

from __future__ import annotations

import posixpath
import time
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import quote

from lxml import etree

from audiopub.atomic import atomic_write
from audiopub.book.chapters import toc
from audiopub.book.chapters.toc import TocEntry
from audiopub.book.epub.archive import MIMETYPE, EpubArchive
from audiopub.book.epub.package import DC_NS, NCX_TYPE, OPF_NS, Package
from audiopub.book.markup import clean_label, local_name
from audiopub.book.safe_xml import parse_markup, parse_xml
from audiopub.export.read_aloud.html5 import make_html5
from audiopub.export.read_aloud.pages import BookPage, Par, ids_in, parse_item

SMIL_TYPE: Final = "application/smil+xml"
SMIL_NS: Final = "http://www.w3.org/ns/SMIL"
EPUB_NS: Final = "http://www.idpf.org/2007/ops"
XHTML_NS: Final = "http://www.w3.org/1999/xhtml"
ACTIVE_CLASS: Final = "-epub-media-overlay-active"
XHTML_HEADER: Final = b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
XML_HEADER: Final = b'<?xml version="1.0" encoding="utf-8"?>\n'

# The sentence being read, as Thorium and Apple Books mark it: a soft yellow behind the words,
# which keeps the page's own colours and reads on light and dark themes alike.
HIGHLIGHT_CSS: Final = (
    f".{ACTIVE_CLASS} {{\n  background-color: rgba(255, 214, 0, 0.45);\n"
    "  border-radius: 0.15em;\n}\n"
).encode()
_OPF_ATTRIBUTE = f"{{{OPF_NS}}}"
_XSI_TYPE = "{http://www.w3.org/2001/XMLSchema-instance}type"  # EPUB 2's dcterms types


@dataclass(frozen=True)
class Addition:
    """A file the read-aloud EPUB adds, as its manifest lists it."""

    id: str
    href: str  # relative to the OPF's folder
    media_type: str
    properties: frozenset[str] = field(default_factory=frozenset)


def write_book(
    out: Path,
    archive: EpubArchive,
    package: Package,
    folder: str,
    pages: list[BookPage],
    language: str | None,
    audio: list[tuple[str, Path]],
    media_type: str,
) -> None:
    """The source's files with the changed pages, OPF and the added files (in `folder`, beside
    the OPF; `audio`: each chapter's path in the book and its encoded file), as a new EPUB at
    `out`, written atomically."""
    opf_dir = posixpath.dirname(package.opf_path)
    opf_root = _opf_tree(archive, package)
    upgrade = is_epub2(opf_root)
    taken = ids_in(opf_root)
    css = f"{folder}/read-aloud.css"
    replaced: dict[str, bytes] = {}  # by path in the book
    added: dict[str, bytes | Path] = {css: HIGHLIGHT_CSS}
    additions = [Addition(unique_id(taken, "read-aloud-css"), css, "text/css")]
    overlays, durations, properties = {}, {}, {}
    span = "span"
    for number, page in enumerate((p for p in pages if p.pars), start=1):
        namespace = etree.QName(page.root).namespace or ""
        span = f"{{{namespace}}}span" if namespace else "span"
        page.text.wrap(page.text.widen(page.fragments), span)
        _link_css(page.root, href(css, posixpath.dirname(page.item.name)), namespace)
        replaced[page.path] = XHTML_HEADER + etree.tostring(page.root, encoding="utf-8")
        smil = f"{folder}/{number:03d}.smil"
        smil_id = unique_id(taken, f"overlay-{number:03d}")
        # A clip must not end where it begins (EPUBCheck MED-009): a fragment whose share of
        # its sentence's clip rounds to no millisecond is left without a highlight of its own.
        added[smil] = smil_document(
            page.item.name,
            smil,
            [
                Par(p.fragment, p.audio, p.begin_ms, p.end_ms)
                for p in page.pars
                if p.end_ms > p.begin_ms
            ],
        )
        additions.append(Addition(smil_id, smil, SMIL_TYPE))
        overlays[page.item.id] = smil_id
        durations[smil_id] = sum(p.end_ms - p.begin_ms for p in page.pars)
    for number, (path, file) in enumerate(audio, start=1):
        added[path] = file
        additions.append(Addition(unique_id(taken, f"read-aloud-audio-{number}"), path, media_type))
    if upgrade:
        properties = _upgrade_pages(archive, package, pages, replaced)
    if not any(item.is_nav for item in package.items.values()):
        nav = f"{folder}/nav.xhtml"
        title = next((value for value, _ in package.dc.get("title", []) if value), "Contents")
        added[nav] = nav_document(_toc_entries(archive, package, pages), nav, title, language)
        additions.append(
            Addition(unique_id(taken, "nav"), nav, "application/xhtml+xml", frozenset({"nav"}))
        )
    replaced[package.opf_path] = rewrite_package(
        opf_root, additions, overlays, durations, properties
    )
    # A book that has overlays already gets these instead: its own SMIL files are left out.
    dropped = {item.path for item in package.items.values() if item.media_type == SMIL_TYPE}
    with atomic_write(out) as temp, zipfile.ZipFile(temp, "w") as zf:
        # The mimetype first and stored, so the file is recognised by its first bytes.
        zf.writestr(zipfile.ZipInfo("mimetype"), MIMETYPE, compress_type=zipfile.ZIP_STORED)
        for name in archive.names():
            if name != "mimetype" and name not in dropped:
                data = replaced[name] if name in replaced else archive.read(name)
                zf.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
        for path, content in added.items():
            name = posixpath.join(opf_dir, path)
            if isinstance(content, Path):  # audio: compressed already
                zf.write(content, name, compress_type=zipfile.ZIP_STORED)
            else:
                zf.writestr(name, content, compress_type=zipfile.ZIP_DEFLATED)


def _opf_tree(archive: EpubArchive, package: Package) -> etree._Element:
    data = archive.read(package.opf_path)
    try:
        return parse_xml(data)
    except etree.XMLSyntaxError:
        root = parse_markup(data)  # read_package recovered it already, so this succeeds
        assert root is not None
        return root


def _link_css(root: etree._Element, url: str, namespace: str) -> None:
    head = next((el for el in root if local_name(el) == "head"), None)
    if head is not None:
        tag = f"{{{namespace}}}link" if namespace else "link"
        etree.SubElement(head, tag, {"rel": "stylesheet", "type": "text/css", "href": url})


def _upgrade_pages(
    archive: EpubArchive, package: Package, pages: list[BookPage], replaced: dict[str, bytes]
) -> dict[str, set[str]]:
    """EPUB 2 pages as EPUB 3 wants them: an HTML5 doctype, and the properties of what they
    hold. Returns the properties by item id."""
    parsed = {page.item.id: page.root for page in pages}
    properties = {}
    for item in package.items.values():
        if not item.is_html or item.path is None:
            continue
        root = parsed.get(item.id)
        if root is None:
            root = parse_item(archive, item)
            if root is None:
                continue
        make_html5(root)
        replaced[item.path] = XHTML_HEADER + etree.tostring(root, encoding="utf-8")
        properties[item.id] = page_properties(root)
    return properties


def _toc_entries(
    archive: EpubArchive, package: Package, pages: list[BookPage]
) -> list[toc.TocEntry]:
    """The NCX's entries, or one per page when it has none."""
    for item in package.items.values():
        if item.media_type != NCX_TYPE or item.path is None:
            continue
        root = parse_item(archive, item)
        entries = toc.ncx_entries(root, posixpath.dirname(item.name)) if root is not None else []
        if entries:
            return entries
    return [
        toc.TocEntry(_page_title(page.root) or f"Part {number}", page.item.name, None, None)
        for number, page in enumerate(pages, start=1)
    ]


def _page_title(root: etree._Element) -> str:
    title = next((el for el in root.iter() if local_name(el) in ("title", "h1", "h2")), None)
    return clean_label("".join(title.itertext())) if title is not None else ""


def is_epub2(root: etree._Element) -> bool:
    return (root.get("version") or "").strip().startswith("2")


def unique_id(taken: set[str], wanted: str) -> str:
    """`wanted`, or `wanted-2`, `wanted-3`… whichever is free; marked as taken."""
    found, number = wanted, 1
    while found in taken:
        number += 1
        found = f"{wanted}-{number}"
    taken.add(found)
    return found


def rewrite_package(
    root: etree._Element,
    additions: Iterable[Addition],
    overlays: Mapping[str, str],
    durations: Mapping[str, int],
    properties: Mapping[str, Iterable[str]],
) -> bytes:
    """The OPF with the read-aloud files: `overlays` maps page item ids to their SMIL's item
    id, `durations` SMIL item ids to their length in milliseconds; `properties` are added to
    the items with those ids."""
    metadata = _child(root, "metadata")
    manifest = _child(root, "manifest")
    if is_epub2(root):
        _upgrade_metadata(metadata)
    root.set("version", "3.0")
    _drop_opf_prefix(root)
    items = {el.get("id"): el for el in manifest if local_name(el) == "item"}
    for item in list(items.values()):  # overlays the book had: these replace them
        item.attrib.pop("media-overlay", None)
        if (item.get("media-type") or "").strip().lower() == SMIL_TYPE:
            manifest.remove(item)
    for item_id, names in properties.items():
        listed = items.get(item_id)
        if listed is None:
            continue
        present = (listed.get("properties") or "").split()
        merged = present + [name for name in sorted(set(names)) if name not in present]
        if merged:
            listed.set("properties", " ".join(merged))
    for page, smil in overlays.items():
        if page in items:  # else the item has no id (an invalid book): it plays no overlay
            items[page].set("media-overlay", smil)
    for addition in additions:
        attrs = {"id": addition.id, "href": addition.href, "media-type": addition.media_type}
        if addition.properties:
            attrs["properties"] = " ".join(sorted(addition.properties))
        etree.SubElement(manifest, f"{{{OPF_NS}}}item", attrs)
    for el in list(metadata):
        if local_name(el) == "meta" and el.get("property") in (
            "dcterms:modified",
            "media:duration",
            "media:active-class",
        ):
            metadata.remove(el)  # replaced below: one of each is allowed
    _meta(metadata, "dcterms:modified", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    for smil, milliseconds in durations.items():
        _meta(metadata, "media:duration", clock(milliseconds), refines=f"#{smil}")
    _meta(metadata, "media:duration", clock(sum(durations.values())))
    _meta(metadata, "media:active-class", ACTIVE_CLASS)
    etree.indent(metadata, space="  ", level=1)
    etree.indent(manifest, space="  ", level=1)
    return XML_HEADER + etree.tostring(root, encoding="utf-8")


def _child(root: etree._Element, name: str) -> etree._Element:
    found = next((el for el in root if local_name(el) == name), None)
    if found is None:
        found = etree.SubElement(root, f"{{{OPF_NS}}}{name}")
    return found


def _meta(metadata: etree._Element, prop: str, value: str, refines: str | None = None) -> None:
    attrs = {"property": prop, **({"refines": refines} if refines else {})}
    etree.SubElement(metadata, f"{{{OPF_NS}}}meta", attrs).text = value


def _upgrade_metadata(metadata: etree._Element) -> None:
    """EPUB 2 metadata as EPUB 3 has it: `opf:role` and `opf:file-as` become refining metas,
    other `opf:` attributes go (EPUB 3 has no place for them), and only the first `dc:date`
    stays (EPUB 3 allows one; the publication date if it is marked)."""
    root = metadata.getroottree().getroot()
    taken = ids_in(root)
    dates = [el for el in metadata if el.tag == f"{{{DC_NS}}}date"]
    keep = next(
        (el for el in dates if el.get(f"{_OPF_ATTRIBUTE}event") == "publication"),
        dates[0] if dates else None,
    )
    for el in dates:
        if el is not keep:
            metadata.remove(el)
    refinements = []
    for el in metadata:
        if not isinstance(el.tag, str):
            continue
        if el.tag in (f"{{{DC_NS}}}creator", f"{{{DC_NS}}}contributor"):
            for name, prop, scheme in (
                ("role", "role", "marc:relators"),
                ("file-as", "file-as", None),
            ):
                value = (el.get(f"{_OPF_ATTRIBUTE}{name}") or "").strip()
                if value:
                    refinements.append((el, prop, scheme, value))
        for name in [k for k in el.attrib if k.startswith(_OPF_ATTRIBUTE) or k == _XSI_TYPE]:
            del el.attrib[name]
        if el.tag == f"{{{DC_NS}}}date" and el.text:
            el.text = el.text.strip()
    _drop_opf_prefix(root)
    for el, prop, scheme, value in reversed(refinements):
        if not el.get("id"):
            el.set("id", unique_id(taken, local_name(el)))
        attrs = {"refines": f"#{el.get('id')}", "property": prop}
        if scheme:
            attrs["scheme"] = scheme
        meta = etree.Element(f"{{{OPF_NS}}}meta", attrs)
        meta.text = value
        el.addnext(meta)


def _drop_opf_prefix(root: etree._Element) -> None:
    """New elements take the closest prefix of their namespace: without this they would come
    out as <opf:meta> where the metadata declares xmlns:opf for EPUB 2's attributes."""
    prefixes = {
        prefix for el in root.iter() if isinstance(el.tag, str) for prefix in el.nsmap if prefix
    }
    etree.cleanup_namespaces(root, keep_ns_prefixes=sorted(prefixes - {"opf"}))


def page_properties(root: etree._Element) -> set[str]:
    """What EPUB 3 asks a page's manifest item to declare about its content."""
    found = set()
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        namespace = el.tag[1:].partition("}")[0] if el.tag.startswith("{") else ""
        name = local_name(el)
        if namespace == "http://www.w3.org/2000/svg" or name == "svg":
            found.add("svg")
        elif namespace == "http://www.w3.org/1998/Math/MathML":
            found.add("mathml")
        elif name == "script" or any(k.startswith("on") for k in el.attrib):
            found.add("scripted")
    return found


def href(target: str, base_dir: str, fragment: str | None = None) -> str:
    """A relative, percent-encoded URL from a file in `base_dir` to the book path `target`."""
    url = quote(posixpath.relpath(target, base_dir or "."), safe="/")
    return f"{url}#{quote(fragment, safe='')}" if fragment else url


def smil_document(page: str, smil: str, pars: Sequence[Par]) -> bytes:
    """The media overlay of the page at book path `page`, for a SMIL file at book path `smil`."""
    base = posixpath.dirname(smil)
    root = etree.Element(
        f"{{{SMIL_NS}}}smil", {"version": "3.0"}, nsmap={None: SMIL_NS, "epub": EPUB_NS}
    )
    body = etree.SubElement(root, f"{{{SMIL_NS}}}body")
    seq = etree.SubElement(
        body, f"{{{SMIL_NS}}}seq", {"id": "seq1", f"{{{EPUB_NS}}}textref": href(page, base)}
    )
    for number, par in enumerate(pars, start=1):
        el = etree.SubElement(seq, f"{{{SMIL_NS}}}par", {"id": f"par{number}"})
        etree.SubElement(el, f"{{{SMIL_NS}}}text", {"src": href(page, base, par.fragment)})
        etree.SubElement(
            el,
            f"{{{SMIL_NS}}}audio",
            {
                "src": href(par.audio, base),
                "clipBegin": _seconds(par.begin_ms),
                "clipEnd": _seconds(par.end_ms),
            },
        )
    return XML_HEADER + etree.tostring(root, encoding="utf-8")


def clock(milliseconds: int) -> str:
    """A SMIL full clock value, as `media:duration` takes it: 1:02:03.456."""
    seconds, millis = divmod(milliseconds, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}.{millis:03d}"


def _seconds(milliseconds: int) -> str:
    return f"{milliseconds // 1000}.{milliseconds % 1000:03d}s"


def nav_document(entries: Sequence[TocEntry], nav: str, title: str, language: str | None) -> bytes:
    """An EPUB 3 nav document at book path `nav`, its toc made from `entries` (an NCX's, with
    their nesting, or one per page); an entry without a target links where its first child
    does, since every nav entry needs a link."""
    base = posixpath.dirname(nav)
    attrs = (
        {"lang": language, "{http://www.w3.org/XML/1998/namespace}lang": language}
        if language
        else {}
    )
    root = etree.Element(f"{{{XHTML_NS}}}html", attrs, nsmap={None: XHTML_NS, "epub": EPUB_NS})
    head = etree.SubElement(root, f"{{{XHTML_NS}}}head")
    etree.SubElement(head, f"{{{XHTML_NS}}}title").text = title
    body = etree.SubElement(root, f"{{{XHTML_NS}}}body")
    nav_el = etree.SubElement(
        body, f"{{{XHTML_NS}}}nav", {f"{{{EPUB_NS}}}type": "toc", "id": "toc"}
    )
    etree.SubElement(nav_el, f"{{{XHTML_NS}}}h1").text = title
    lists: dict[int | None, etree._Element] = {None: etree.SubElement(nav_el, f"{{{XHTML_NS}}}ol")}
    items: dict[int, etree._Element] = {}
    for index, entry in enumerate(entries):
        target = _target(entries, index)
        if target is None:
            continue
        parent = entry.parent if entry.parent in items else None
        if parent is not None and parent not in lists:
            lists[parent] = etree.SubElement(items[parent], f"{{{XHTML_NS}}}ol")
        li = etree.SubElement(lists[parent], f"{{{XHTML_NS}}}li")
        link = etree.SubElement(li, f"{{{XHTML_NS}}}a", {"href": href(target[0], base, target[1])})
        link.text = entry.title or f"Section {index + 1}"
        items[index] = li
    return XHTML_HEADER + etree.tostring(root, encoding="utf-8")


def _target(entries: Sequence[TocEntry], index: int) -> tuple[str, str | None] | None:
    """Where an entry links: its own target, else its first descendant's."""
    entry = entries[index]
    if entry.path is not None:
        return entry.path, entry.fragment
    for later in range(index + 1, len(entries)):
        ancestor = entries[later].parent
        while ancestor is not None and ancestor != index:
            ancestor = entries[ancestor].parent
        if ancestor == index and entries[later].path is not None:
            return entries[later].path, entries[later].fragment  # type: ignore[return-value]
    return None
