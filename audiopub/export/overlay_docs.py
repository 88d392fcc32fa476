"""The documents a read-aloud EPUB adds: SMIL overlays, the highlight's CSS, and a nav document
(for an EPUB 2 book, whose table of contents is only an NCX)."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from lxml import etree

from audiopub.book.toc import TocEntry

SMIL_NS: Final = "http://www.w3.org/ns/SMIL"
EPUB_NS: Final = "http://www.idpf.org/2007/ops"
XHTML_NS: Final = "http://www.w3.org/1999/xhtml"
ACTIVE_CLASS: Final = "-epub-media-overlay-active"
XHTML_HEADER: Final = b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
XML_HEADER: Final = b'<?xml version="1.0" encoding="utf-8"?>\n'

# The sentence being read, as Thorium and Apple Books mark it: a soft yellow behind the words,
# which keeps the page's own colours and reads on light and dark themes alike.
HIGHLIGHT_CSS: Final = (f".{ACTIVE_CLASS} {{\n  background-color: rgba(255, 214, 0, 0.45);\n"
                        "  border-radius: 0.15em;\n}\n").encode()


@dataclass(frozen=True)
class Par:
    """One piece of text and the clip of audio that reads it (milliseconds in its file)."""

    fragment: str  # the id of its span in the page
    audio: str  # the audio file's path in the book
    begin_ms: int
    end_ms: int


def href(target: str, base_dir: str, fragment: str | None = None) -> str:
    """A relative, percent-encoded URL from a file in `base_dir` to the book path `target`."""
    url = quote(posixpath.relpath(target, base_dir or "."), safe="/")
    return f"{url}#{quote(fragment, safe='')}" if fragment else url


def smil_document(page: str, smil: str, pars: Sequence[Par]) -> bytes:
    """The media overlay of the page at book path `page`, for a SMIL file at book path `smil`."""
    base = posixpath.dirname(smil)
    root = etree.Element(f"{{{SMIL_NS}}}smil", {"version": "3.0"},
                         nsmap={None: SMIL_NS, "epub": EPUB_NS})
    body = etree.SubElement(root, f"{{{SMIL_NS}}}body")
    seq = etree.SubElement(body, f"{{{SMIL_NS}}}seq",
                           {"id": "seq1", f"{{{EPUB_NS}}}textref": href(page, base)})
    for number, par in enumerate(pars, start=1):
        el = etree.SubElement(seq, f"{{{SMIL_NS}}}par", {"id": f"par{number}"})
        etree.SubElement(el, f"{{{SMIL_NS}}}text", {"src": href(page, base, par.fragment)})
        etree.SubElement(el, f"{{{SMIL_NS}}}audio", {
            "src": href(par.audio, base), "clipBegin": _seconds(par.begin_ms),
            "clipEnd": _seconds(par.end_ms)})
    return XML_HEADER + etree.tostring(root, encoding="utf-8")


def clock(milliseconds: int) -> str:
    """A SMIL full clock value, as `media:duration` takes it: 1:02:03.456."""
    seconds, millis = divmod(milliseconds, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}.{millis:03d}"


def _seconds(milliseconds: int) -> str:
    return f"{milliseconds // 1000}.{milliseconds % 1000:03d}s"


def nav_document(entries: Sequence[TocEntry], nav: str, title: str,
                 language: str | None) -> bytes:
    """An EPUB 3 nav document at book path `nav`, its toc made from `entries` (an NCX's, with
    their nesting, or one per page); an entry without a target links where its first child
    does, since every nav entry needs a link."""
    base = posixpath.dirname(nav)
    attrs = {"lang": language, "{http://www.w3.org/XML/1998/namespace}lang": language} \
        if language else {}
    root = etree.Element(f"{{{XHTML_NS}}}html", attrs, nsmap={None: XHTML_NS, "epub": EPUB_NS})
    head = etree.SubElement(root, f"{{{XHTML_NS}}}head")
    etree.SubElement(head, f"{{{XHTML_NS}}}title").text = title
    body = etree.SubElement(root, f"{{{XHTML_NS}}}body")
    toc = etree.SubElement(body, f"{{{XHTML_NS}}}nav", {f"{{{EPUB_NS}}}type": "toc",
                                                        "id": "toc"})
    etree.SubElement(toc, f"{{{XHTML_NS}}}h1").text = title
    lists: dict[int | None, etree._Element] = {None: etree.SubElement(toc, f"{{{XHTML_NS}}}ol")}
    items: dict[int, etree._Element] = {}
    for index, entry in enumerate(entries):
        target = _target(entries, index)
        if target is None:
            continue
        parent = entry.parent if entry.parent in items else None
        if parent is not None and parent not in lists:
            lists[parent] = etree.SubElement(items[parent], f"{{{XHTML_NS}}}ol")
        li = etree.SubElement(lists[parent], f"{{{XHTML_NS}}}li")
        link = etree.SubElement(li, f"{{{XHTML_NS}}}a", {"href": href(target[0], base,
                                                                          target[1])})
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
