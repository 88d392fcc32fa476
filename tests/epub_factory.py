"""Small, valid EPUB 3 and EPUB 2 books for tests, and a tiny cover image."""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

from audiopub.bench.texts import write_simple_epub


def tiny_png(width: int = 8, height: int = 8, rgb: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    """A solid-colour PNG, made without an imaging library."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b""))


def build_epub(path: Path, chapters: Sequence[tuple[str, Sequence[str]]], *,
               title: str = "A Small Book", author: str = "Ann Author",
               language: str = "en", cover: bytes | None = None) -> Path:
    """Write an EPUB with one XHTML file per chapter: a heading, then one <p> per paragraph
    (paragraphs are markup, so tests can put noterefs, spans and the like inside)."""
    return write_simple_epub(path, chapters, identifier=f"test-{title}", title=title,
                             author=author, language=language, cover=cover)


def with_metadata(epub: Path, lines: str) -> Path:
    """The EPUB rewritten in place with `lines` (OPF markup) added to its package metadata."""
    entries = []
    with zipfile.ZipFile(epub) as source:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith(".opf"):
                data = data.replace(b"</metadata>", lines.encode("utf-8") + b"\n</metadata>")
            entries.append((info, data))
    with zipfile.ZipFile(epub, "w") as out:
        for info, data in entries:
            out.writestr(info, data)
    return epub


def build_epub2(path: Path, pages: Sequence[tuple[str, str]],
                toc: Sequence[tuple[str, str, int]], *, title: str = "An Old Book",
                author: str = "Ann Author", language: str = "en") -> Path:
    """An EPUB 2 book as older tools wrote them: an OPF 2.0 with `opf:` attributes and two
    dates, an NCX and no nav document, XHTML 1.1 pages with their doctype.

    `pages` are (file name, body markup); `toc` entries are (label, href, depth from 1).
    """
    def page(name: str, body: str) -> str:
        return ('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC '
                '"-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\n'
                f'<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="{language}"><head>'
                f'<title>{name}</title><link rel="stylesheet" type="text/css" '
                f'href="style.css"/></head><body>{body}</body></html>')

    items = "".join(f'<item id="p{i}" href="{name}" media-type="application/xhtml+xml"/>'
                    for i, (name, _) in enumerate(pages))
    spine = "".join(f'<itemref idref="p{i}"/>' for i in range(len(pages)))
    opf = ('<?xml version="1.0" encoding="utf-8"?>\n<package xmlns="http://www.idpf.org/2007/opf"'
           ' version="2.0" unique-identifier="bookid"><metadata '
           'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">'
           f'<dc:title>{title}</dc:title><dc:creator opf:role="aut" opf:file-as="Author, Ann">'
           f'{author}</dc:creator><dc:language>{language}</dc:language>'
           '<dc:identifier id="bookid" opf:scheme="URI">urn:uuid:0d6ad1ba-0b6e-4a4d-9d56-'
           '3c2b2f8c0001</dc:identifier><dc:date opf:event="publication">1901</dc:date>'
           '<dc:date opf:event="conversion">2020-01-02</dc:date></metadata><manifest>'
           '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
           f'<item id="css" href="style.css" media-type="text/css"/>{items}</manifest>'
           f'<spine toc="ncx">{spine}</spine></package>')
    points, depth, order = [], 0, 0
    for label, href, level in toc:
        points.append("</navPoint>" * (depth - level + 1) if depth >= level else "")
        order += 1
        points.append(f'<navPoint id="n{order}" playOrder="{order}"><navLabel><text>{label}'
                      f'</text></navLabel><content src="{href}"/>')
        depth = level
    points.append("</navPoint>" * depth)
    ncx = ('<?xml version="1.0" encoding="utf-8"?>\n<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/"'
           ' version="2005-1"><head><meta name="dtb:uid" content="urn:uuid:0d6ad1ba-0b6e-4a4d-'
           '9d56-3c2b2f8c0001"/><meta name="dtb:depth" content="2"/><meta '
           'name="dtb:totalPageCount" content="0"/><meta name="dtb:maxPageNumber" content="0"/>'
           f'</head><docTitle><text>{title}</text></docTitle><navMap>{"".join(points)}'
           '</navMap></ncx>')
    container = ('<?xml version="1.0"?>\n<container version="1.0" '
                 'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                 '<rootfile full-path="OEBPS/content.opf" '
                 'media-type="application/oebps-package+xml"/></rootfiles></container>')
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip",
                    compress_type=zipfile.ZIP_STORED)
        zf.writestr("META-INF/container.xml", container, zipfile.ZIP_DEFLATED)
        zf.writestr("OEBPS/content.opf", opf, zipfile.ZIP_DEFLATED)
        zf.writestr("OEBPS/toc.ncx", ncx, zipfile.ZIP_DEFLATED)
        zf.writestr("OEBPS/style.css", "p { text-indent: 1em; }\n", zipfile.ZIP_DEFLATED)
        for name, body in pages:
            zf.writestr(f"OEBPS/{name}", page(name, body), zipfile.ZIP_DEFLATED)
    return path
