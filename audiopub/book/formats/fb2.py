"""FictionBook 2 (.fb2, and .fb2.zip): XML, parsed by `safe_xml` (no entities, no DTD).

The book's bodies (not its "notes" or "comments" bodies) are read as an HTML page would be:
each `<section>`'s `<title>` is a heading (nested sections nest deeper), so chapters follow the
sections; paragraphs, subtitles, epigraphs, citations and poems (each verse a line) are read;
note references, images and empty lines are not. Title, authors, language and the cover come
from `<description><title-info>`; the cover from its `<binary>`, with the EPUB's cover limits.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree

from audiopub import settings
from audiopub.book.epub.archive import EpubArchive, human_size, printable
from audiopub.book.formats.assemble import BookText
from audiopub.book.formats.decoding import bom_encoding
from audiopub.book.markup import clean_label, local_name
from audiopub.book.models import Cover, sniff_image_type
from audiopub.book.pictures import image_size
from audiopub.book.safe_xml import parse_markup
from audiopub.errors import BadBook, DamagedEntry

__all__ = ["read_fb2", "read_zipped_fb2"]

_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
# FB2 elements → the HTML ones `paragraphs` reads; others become spans (their text is read).
_AS_HTML = {
    "section": "div",
    "epigraph": "blockquote",
    "cite": "blockquote",
    "poem": "div",
    "stanza": "div",
    "annotation": "div",
    "v": "p",
    "p": "p",
    "subtitle": "p",
    "text-author": "p",
    "table": "table",
    "tr": "tr",
    "td": "td",
    "th": "th",
    "image": "img",
}
_DROPPED = frozenset({"empty-line", "binary"})
_DECLARATION = re.compile(rb"^(\s*<\?xml[^>]*?encoding\s*=\s*)([\"'])([\w.:-]+)\2")
_UTF8_NAMES = frozenset({b"utf-8", b"utf8"})


def read_zipped_fb2(path: Path, name: str) -> BookText:
    """The one FB2 file inside a zip, with the EPUB's archive limits."""
    with EpubArchive(path, name, kind="a zipped FB2 book", mimetype=None) as archive:
        inside = [entry for entry in archive.names() if entry.lower().endswith(".fb2")]
        if len(inside) != 1:
            raise BadBook(
                f"{name}: a zipped FB2 book holds one .fb2 file; this one has {len(inside)}"
            )
        try:
            data = archive.read(inside[0])
        except DamagedEntry as exc:
            raise BadBook(str(exc)) from exc
        book = read_fb2(data, name)
        book.notes[:0] = archive.warnings
        return book


def read_fb2(data: bytes, name: str) -> BookText:
    problems: list[str] = []
    data, encoding_note = _as_written(data)
    root = parse_markup(data, deep=True, problems=problems)
    if root is None or local_name(root) != "FictionBook":
        raise BadBook(
            f"{name}: not an FB2 book (its XML can't be parsed, or its root is not <FictionBook>)"
        )
    notes = [
        f"{problem}, far beyond any real book; its text from there on was left out."
        for problem in problems
    ]
    if encoding_note:
        notes.append(encoding_note)
    info = _child(_child(root, "description"), "title-info")
    html = etree.Element("html")
    body = etree.SubElement(html, "body")
    for part in [el for el in root if local_name(el) == "body"]:
        if part.get("name") in ("notes", "comments", "footnotes"):
            continue
        _as_html(part)
        part.tag = "div"
        body.append(part)
    authors = tuple(filter(None, (_person(el) for el in _children(info, "author"))))
    return BookText(
        html,
        title=clean_label(_text(_child(info, "book-title"))) or None,
        authors=authors,
        language=clean_label(_text(_child(info, "lang"))) or None,
        cover=_cover(root, info, notes),
        notes=notes,
    )


def _as_written(data: bytes) -> tuple[bytes, str | None]:
    """The book as UTF-8 that the parser can read whole, and a note where that took more than
    its declaration. FB2 books are mostly Russian, and some say UTF-8 (or nothing, which means
    UTF-8) while written in Windows-1251: the parser then dropped every letter it could not
    decode, or stopped at the first. Such a book is read in Windows-1251 where its bytes look
    Cyrillic, else in Windows-1252; a UTF-8 book with a few stray bytes keeps its UTF-8."""
    if bom_encoding(data):
        return data, None
    declared = _DECLARATION.match(data[:200])
    if declared is not None and declared.group(3).lower() not in _UTF8_NAMES:
        return data, None  # the parser reads the encoding it names
    try:
        data.decode("utf-8")
        return data, None
    except UnicodeDecodeError:
        pass
    high = sum(byte >= 0x80 for byte in data)
    text = data.decode("utf-8", "ignore")
    stray = len(data) - len(text.encode("utf-8"))
    if sum(ord(char) >= 0x80 for char in text) >= stray:  # more UTF-8 letters than stray bytes
        note = (
            f"{stray:,} byte{'s' if stray > 1 else ''} that {'are' if stray > 1 else 'is'} not "
            f"UTF-8 {'were' if stray > 1 else 'was'} left out."
        )
    else:
        # Windows-1251's letters are 0xC0-0xFF, which is most of a Russian text's high bytes.
        cyrillic = sum(byte >= 0xC0 for byte in data) >= 0.6 * high
        written = "windows-1251" if cyrillic else "windows-1252"
        text = data.decode(written, "replace")
        note = (
            "It says it is in UTF-8 but is written in another encoding; it was read as "
            f"{written.capitalize()}."
        )
    # Its declaration, if any, named UTF-8 or nothing: UTF-8 is now true.
    return text.encode("utf-8"), note


def _as_html(body: etree._Element) -> None:
    """Rename the body's elements to HTML, in place; titles become headings by their depth."""
    titles = []
    for el in body.iter():
        name = local_name(el)
        if not name:
            continue
        if name == "title":
            depth = sum(local_name(a) == "section" for a in el.iterancestors())
            titles.append((el, depth + 1))
        elif name == "a" and el.get("type") == "note":
            el.tag = "sup"
            el.set("class", "pagenum")  # a note reference: `paragraphs` drops it, not its tail
        elif name in _DROPPED:
            el.tag = "img"
        else:
            el.tag = _AS_HTML.get(name, "span")
    for title, level in titles:
        parts = [clean_label(_text(p)) for p in title]
        parts = [part for part in parts if part] or [clean_label(_text(title))]
        for child in list(title):
            title.remove(child)
        text = ""
        for part in parts:
            if text:
                text += " " if text[-1] in ".:;!?" else ": "
            text += part
        title.text = text
        title.tag = f"h{min(level, 6)}"


def _cover(root: etree._Element, info: etree._Element | None, notes: list[str]) -> Cover | None:
    image = _child(_child(info, "coverpage"), "image")
    href = (image.get(_XLINK_HREF) or image.get("href") or "") if image is not None else ""
    if not href.startswith("#"):
        return None
    binary = next(
        (el for el in root if local_name(el) == "binary" and el.get("id") == href[1:]), None
    )
    if binary is None:
        return None
    payload = "".join((binary.text or "").split())
    if len(payload) * 3 // 4 > settings.EPUB_MAX_COVER_BYTES:
        notes.append(
            f"The cover is {human_size(len(payload) * 3 // 4)}, too large to use; the book "
            "has no cover."
        )
        return None
    try:
        data = base64.b64decode(payload)
    except (binascii.Error, ValueError):
        notes.append(f"The cover {printable(href[1:])} is damaged; the book has no cover.")
        return None
    media_type = sniff_image_type(data)
    width, height = image_size(data) or (0, 0)
    if media_type is None or width * height > settings.EPUB_MAX_COVER_PIXELS:
        return None
    return Cover(data, media_type)


def _person(author: etree._Element) -> str:
    names = [_text(_child(author, part)) for part in ("first-name", "middle-name", "last-name")]
    return clean_label(" ".join(names)) or clean_label(_text(_child(author, "nickname")))


def _child(el: etree._Element | None, name: str) -> etree._Element | None:
    return next(_children(el, name), None)


def _children(el: etree._Element | None, name: str) -> Iterator[etree._Element]:
    return (child for child in (el if el is not None else ()) if local_name(child) == name)


def _text(el: etree._Element | None) -> str:
    return "".join(el.itertext()) if el is not None else ""
