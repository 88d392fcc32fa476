"""Builds small, valid EPUB 3 books (nav + NCX) for tests, with ebooklib's writer."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

from ebooklib import epub


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
    """Write an EPUB with one XHTML file per chapter: a heading, then one <p> per paragraph."""
    book = epub.EpubBook()
    book.set_identifier(f"test-{title}")
    book.set_title(title)
    book.set_language(language)
    book.add_author(author)
    if cover is not None:
        book.set_cover("cover.png", cover)
    items = []
    for number, (heading, paragraphs) in enumerate(chapters, start=1):
        item = epub.EpubHtml(title=heading, file_name=f"chapter{number}.xhtml", lang=language)
        body = "".join(f"<p>{p}</p>" for p in paragraphs)
        item.content = f"<html><body><h1>{heading}</h1>{body}</body></html>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    epub.write_epub(str(path), book)
    return path
