"""The package document (OPF) of a read-aloud EPUB: the source's, with its overlays declared.

Added: a manifest item for every SMIL, audio file, the highlight's CSS (and a nav document);
`media-overlay` on each page that has one; `media:duration` for each overlay and in total;
`media:active-class`; a new `dcterms:modified`. An EPUB 2 package becomes EPUB 3: version 3.0,
its `opf:` attributes as EPUB 3 metadata (roles and sort names refine their creators), one
`dc:date`, and the properties EPUB 3 asks of pages (`svg`, `scripted`, `mathml`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from lxml import etree

from audiopub.book.package import DC_NS, OPF_NS
from audiopub.book.toc import local_name
from audiopub.export.overlay_docs import ACTIVE_CLASS, XML_HEADER, clock

SMIL_TYPE = "application/smil+xml"
_OPF_ATTRIBUTE = f"{{{OPF_NS}}}"
_XSI_TYPE = "{http://www.w3.org/2001/XMLSchema-instance}type"  # EPUB 2's dcterms types


@dataclass(frozen=True)
class Addition:
    """A file the read-aloud EPUB adds, as its manifest lists it."""

    id: str
    href: str  # relative to the OPF's folder
    media_type: str
    properties: frozenset[str] = field(default_factory=frozenset)


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


def ids_in(root: etree._Element) -> set[str]:
    return {el.get("id") for el in root.iter() if isinstance(el.tag, str) and el.get("id")}


def rewrite_package(root: etree._Element, additions: Iterable[Addition],
                    overlays: Mapping[str, str], durations: Mapping[str, int],
                    properties: Mapping[str, Iterable[str]]) -> bytes:
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
        item = items.get(item_id)
        if item is None:
            continue
        present = (item.get("properties") or "").split()
        merged = present + [name for name in sorted(set(names)) if name not in present]
        if merged:
            item.set("properties", " ".join(merged))
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
                "dcterms:modified", "media:duration", "media:active-class"):
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
    keep = next((el for el in dates if el.get(f"{_OPF_ATTRIBUTE}event") == "publication"),
                dates[0] if dates else None)
    for el in dates:
        if el is not keep:
            metadata.remove(el)
    refinements = []
    for el in metadata:
        if not isinstance(el.tag, str):
            continue
        if el.tag in (f"{{{DC_NS}}}creator", f"{{{DC_NS}}}contributor"):
            for name, prop, scheme in (("role", "role", "marc:relators"),
                                       ("file-as", "file-as", None)):
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
    prefixes = {prefix for el in root.iter() if isinstance(el.tag, str)
                for prefix in el.nsmap if prefix}
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
