"""The one way Audiopub parses XML from a book: no entities expanded, nothing fetched.

An EPUB's XML can declare entities that expand a billion times ("billion laughs"), or that name
a file or URL to pull in (`<!ENTITY x SYSTEM "file:///etc/passwd">`, external DTDs). The parser
here expands no entity (a reference is dropped from the tree), loads no DTD, never touches the
network, and keeps libxml2's default limits on text nodes and names.

Nesting: libxml2 stops at 256 levels by default. Books' own pages (`deep=True`) may nest up to
its other limit, 2,048 (`huge_tree`; the page itself is already capped at
`EPUB_MAX_DOCUMENT_BYTES`, which bounds what that option lifts): calibre's span soup and
hostile pages nest that deep, and the text inside must be read, not dropped. Past that limit
libxml2 gives up on the rest of the page; `parse_markup` then says so in `problems`, so the
reader can name the loss. Whatever walks these trees must not recurse per level (Python's
recursion limit is 1,000).
"""

from __future__ import annotations

import html.entities
import re

from lxml import etree

__all__ = ["DEEP_MARKUP_LEVELS", "describe_error", "parse_html", "parse_markup", "parse_xml"]

# How deep `deep=True` parsing goes: libxml2's limit with XML_PARSE_HUGE (256 without).
DEEP_MARKUP_LEVELS = 2048


def _parser(recover: bool, deep: bool = False) -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=deep,
        recover=recover,
    )


def parse_xml(data: bytes, deep: bool = False) -> etree._Element:
    """Parse strictly; raises `etree.XMLSyntaxError` (also for an empty document)."""
    root = etree.fromstring(data, _parser(recover=False, deep=deep))
    _drop_entity_references(root)
    return root


def parse_markup(
    data: bytes, deep: bool = False, problems: list[str] | None = None
) -> etree._Element | None:
    """XHTML as books have it: HTML's named entities allowed; if strict parsing fails (e.g.
    calibre's tag soup), libxml2 recovers what it can. None if nothing is left.

    `deep`: nesting up to `DEEP_MARKUP_LEVELS` is read (default 256). If recovery had to stop
    at a limit (the rest of the page is then missing), `problems` gets a line saying which."""
    data = _numeric_entities(data)
    try:
        return parse_xml(data, deep)
    except etree.XMLSyntaxError:
        pass
    parser = _parser(recover=True, deep=deep)
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, ValueError):
        return None
    if problems is not None:
        problems.extend(_limits_hit(parser, deep))
    if root is None:
        return None
    _drop_entity_references(root)
    return _decodable(root, deep)


def parse_html(
    data: bytes, problems: list[str] | None = None, encoding: str | None = None
) -> etree._Element | None:
    """An HTML page that is not XHTML (`<p>` left open, `<br>`), by libxml2's HTML parser: it
    knows HTML's entities and no others (it reads no DTD, so "&lol;" is left as it is written),
    fetches nothing, and nests up to `DEEP_MARKUP_LEVELS`. None if nothing is left; as with
    `parse_markup`, `problems` says if a limit cut the page short. `encoding`: the page's, where
    the caller knows it; else libxml2 reads the page's own `<meta charset>`."""
    parser = etree.HTMLParser(
        no_network=True,
        remove_comments=True,
        remove_pis=True,
        huge_tree=True,
        encoding=encoding,
    )
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, ValueError):
        return None
    if problems is not None:
        problems.extend(_limits_hit(parser, deep=True))
    return None if root is None else _decodable(root, deep=True)


def _limits_hit(parser: etree.XMLParser | etree.HTMLParser, deep: bool) -> list[str]:
    """What made libxml2 stop early while recovering, in words."""
    hit = []
    for error in parser.error_log:
        if error.type != etree.ErrorTypes.ERR_RESOURCE_LIMIT:
            continue
        if "depth" in error.message:
            levels = DEEP_MARKUP_LEVELS if deep else 256
            hit.append(f"its markup is nested more than {levels:,} elements deep")
        else:
            hit.append(f"it passes a limit of the XML parser ({error.message.strip()})")
    return hit


def _decodable(root: etree._Element, deep: bool = False) -> etree._Element | None:
    """Recovery lets character references to surrogates ("&#xD800;") into the tree as bytes
    that are not UTF-8, and lxml then raises UnicodeDecodeError on reading a tag, attribute or
    text that holds one. Such a tree is serialised, its bad bytes replaced, and parsed again."""
    data = etree.tostring(root, encoding="utf-8")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        data = data.decode("utf-8", "replace").encode("utf-8")
        try:
            return etree.fromstring(data, _parser(recover=True, deep=deep))
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
