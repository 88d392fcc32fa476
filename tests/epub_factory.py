"""Small, valid EPUB 3 books for tests (the benchmark's writer), and a tiny cover image."""

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
