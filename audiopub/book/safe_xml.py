"""The one way Audiopub parses XML from a book: no entities expanded, nothing fetched.

An EPUB's XML can declare entities that expand a billion times ("billion laughs"), or that name
a file or URL to pull in (`<!ENTITY x SYSTEM "file:///etc/passwd">`, external DTDs). The parser
here expands no entity (a reference is dropped from the tree), loads no DTD, never touches the
network, and keeps libxml2's default limits (no `huge_tree`: text nodes, names and nesting
depth stay bounded, which also keeps the recursive walkers well inside Python's stack).
"""

from __future__ import annotations

import html.entities
import re

from lxml import etree

__all__ = ["describe_error", "parse_markup", "parse_xml"]


def _parser(recover: bool) -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           dtd_validation=False, huge_tree=False, recover=recover)


def parse_xml(data: bytes) -> etree._Element:
    """Parse strictly; raises `etree.XMLSyntaxError` (also for an empty document)."""
    root = etree.fromstring(data, _parser(recover=False))
    _drop_entity_references(root)
    return root


def parse_markup(data: bytes) -> etree._Element | None:
    """XHTML as books have it: HTML's named entities allowed; if strict parsing fails (e.g.
    calibre's tag soup), libxml2 recovers what it can. None if nothing is left."""
    data = _numeric_entities(data)
    try:
        return parse_xml(data)
    except etree.XMLSyntaxError:
        pass
    try:
        root = etree.fromstring(data, _parser(recover=True))
    except (etree.XMLSyntaxError, ValueError):
        return None
    if root is None:
        return None
    _drop_entity_references(root)
    return _decodable(root)


def _decodable(root: etree._Element) -> etree._Element | None:
    """Recovery lets character references to surrogates ("&#xD800;") into the tree as bytes
    that are not UTF-8, and lxml then raises UnicodeDecodeError on reading a tag, attribute or
    text that holds one. Such a tree is serialised, its bad bytes replaced, and parsed again."""
    data = etree.tostring(root, encoding="utf-8")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        data = data.decode("utf-8", "replace").encode("utf-8")
        try:
            return etree.fromstring(data, _parser(recover=True))
        except (etree.XMLSyntaxError, ValueError):
            return None
    return root


def _drop_entity_references(root: etree._Element) -> None:
    # An unexpanded "&x;" stays in the tree as an Entity node whose text is "&x;"; it must not
    # be read aloud or counted. Its tail (the text after it) is kept.
    etree.strip_elements(root, etree.Entity, with_tail=False)


def describe_error(error: etree.XMLSyntaxError) -> str:
    """libxml2's message without lxml's " (<string>, line 1)" suffix."""
    return _WHERE.sub("", str(error))


_WHERE = re.compile(r" \(<string>, line \d+\)$")
_NAMED_ENTITY = re.compile(rb"&([A-Za-z][A-Za-z0-9]{0,31});")
_BARE_AMPERSAND = re.compile(rb"&(?![A-Za-z][A-Za-z0-9]{0,31};|#[0-9]{1,10};|#x[0-9A-Fa-f]{1,8};)")
_XML_ENTITIES = frozenset({b"amp", b"lt", b"gt", b"quot", b"apos"})


def _numeric_entities(data: bytes) -> bytes:
    """&nbsp; → &#160;: XHTML files use HTML entities that XML without the DTD doesn't know.
    A bare "&" ("Tom & Jerry", common in tag soup) becomes "&amp;" instead of being lost."""
    def replace(match: re.Match[bytes]) -> bytes:
        code = html.entities.name2codepoint.get(match.group(1).decode("ascii"))
        if match.group(1) in _XML_ENTITIES or code is None:
            return match.group(0)
        return b"&#%d;" % code
    return _BARE_AMPERSAND.sub(b"&amp;", _NAMED_ENTITY.sub(replace, data))
