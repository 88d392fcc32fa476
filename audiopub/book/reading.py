"""Read a book in any format Audiopub knows into a `Book`: the one door every caller uses.

The format is told by the file's first bytes where they say it (a zip archive, "%PDF-",
"BOOKMOBI", an FB2 or HTML root element), else by its name's extension (a text file may be
plain text, Markdown or HTML): an upload is kept under a random name, so `name`, the person's
name for it, carries the extension. What each reader does is in docs/formats.md.

- EPUB: `epub.reader.read_epub`.
- Word (.docx), OpenDocument text (.odt), FB2 in a zip (.fb2.zip): the same archive checks as
  an EPUB (`epub.archive.EpubArchive`), then `formats.docx`, `formats.odt`, `formats.fb2`.
- FB2, HTML, Markdown, plain text: read whole, within `EPUB_MAX_*` limits
  (`formats.fb2`, `formats.html`, `formats.plain_text`).
- PDF: `formats.pdf`, in a separate process with page, time and memory limits.
- MOBI, AZW3: converted to EPUB by Calibre's `ebook-convert` where it is installed
  (`formats.calibre`).

Each comes out as a `Book` with chapters, as an EPUB's does (`formats.assemble`).
"""

from __future__ import annotations

import os
from pathlib import Path

from audiopub import settings
from audiopub.book.epub.archive import EpubArchive, human_size
from audiopub.book.epub.reader import read_epub
from audiopub.book.formats import calibre, docx, fb2, html, odt, pdf, plain_text
from audiopub.book.formats.assemble import BookText, build_book
from audiopub.book.formats.decoding import looks_like_text, sniffing_text
from audiopub.book.models import Book
from audiopub.errors import BadBook, DamagedEntry

__all__ = ["BOOK_SUFFIXES", "UPLOAD_TYPES", "book_suffix", "read_book"]

# The extensions of the books Audiopub reads, longest first (".fb2.zip" before ".zip").
BOOK_SUFFIXES = (
    ".fb2.zip",
    ".epub",
    ".txt",
    ".md",
    ".markdown",
    ".html",
    ".htm",
    ".xhtml",
    ".docx",
    ".odt",
    ".fb2",
    ".pdf",
    ".mobi",
    ".azw3",
    ".azw",
)
# What the upload element offers (its `accept`): the extensions and their media types.
UPLOAD_TYPES = ",".join(
    [
        *BOOK_SUFFIXES,
        "application/epub+zip",
        "text/plain",
        "text/markdown",
        "text/html",
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.oasis.opendocument.text",
        "application/x-fictionbook+xml",
    ]
)
_ODT_MIMETYPE = b"application/vnd.oasis.opendocument.text"
_OLD_OFFICE = b"\xd0\xcf\x11\xe0"  # the old Office formats' signature (.doc)


def book_suffix(name: str) -> str | None:
    """The book extension `name` ends with (lower case), or None."""
    lower = name.lower()
    return next((suffix for suffix in BOOK_SUFFIXES if lower.endswith(suffix)), None)


def read_book(path: str | os.PathLike[str], name: str | None = None) -> Book:
    """Read the book at `path`, whatever its format; raise `BadBook` (or its `BadEpub`) if it
    can't be read or has nothing to narrate. `name` is the file's name for messages, a book
    without a title, and the extension where the bytes don't tell (default: the path's)."""
    path = Path(path)
    name = name or path.name
    suffix = book_suffix(name) or ""
    stem = name[: -len(suffix)] if suffix else Path(name).stem
    try:
        with path.open("rb") as file:
            head = file.read(4096)
    except OSError as exc:
        raise BadBook(f"{name}: the file can't be opened ({exc.strerror or exc})") from exc
    if head.startswith(b"PK") or suffix == ".epub":  # an ".epub" must be one: it says why not
        return (
            _read_zipped(path, name, stem, suffix)
            if head.startswith(b"PK")
            else read_epub(path, name)
        )
    if b"%PDF-" in head[:1024]:
        return pdf.read_pdf(path, name, stem)
    if head[60:68] in (b"BOOKMOBI", b"TEXtREAd") or suffix in (".mobi", ".azw", ".azw3"):
        return calibre.read_kindle(path, name)
    if head.startswith(_OLD_OFFICE) or not looks_like_text(head):
        raise BadBook(_unknown(name, head))
    sniffed = sniffing_text(head)  # UTF-16 or UTF-32 as bytes the markers below can be found in
    if b"<FictionBook" in sniffed or suffix == ".fb2":
        data = _read_whole(path, name, settings.EPUB_MAX_READ_BYTES)
        return build_book(fb2.read_fb2(data, name), name, stem)
    data = _read_whole(path, name, settings.EPUB_MAX_DOCUMENT_BYTES)
    text: BookText
    if suffix in (".md", ".markdown"):
        text = html.read_markdown(data, name)
    elif suffix in (".html", ".htm", ".xhtml") or _looks_like_html(sniffed):
        text = html.read_html(data, name)
    else:
        text = plain_text.read_plain_text(data)
    return build_book(text, name, stem)


def _read_zipped(path: Path, name: str, stem: str, suffix: str) -> Book:
    """EPUB, Word, OpenDocument or a zipped FB2, told apart by the archive's entries."""
    with EpubArchive(path, name, kind="a book", mimetype=None) as archive:
        names = archive.names()
        mimetype = b""
        if "mimetype" in archive and archive.size("mimetype") <= 256:
            try:
                mimetype = archive.read("mimetype").strip()
            except DamagedEntry:
                pass  # the reader of its format says what is wrong
    if "META-INF/container.xml" in names or mimetype == b"application/epub+zip":
        return read_epub(path, name)
    if "word/document.xml" in names or suffix == ".docx":
        return build_book(docx.read_docx(path, name), name, stem)
    if mimetype == _ODT_MIMETYPE or suffix == ".odt":
        return build_book(odt.read_odt(path, name), name, stem)
    if any(entry.lower().endswith(".fb2") for entry in names):
        return build_book(fb2.read_zipped_fb2(path, name), name, stem)
    if suffix == ".epub":
        return read_epub(path, name)  # says what an EPUB lacks
    raise BadBook(
        f"{name} is a zip archive but not a book Audiopub reads (an EPUB, a Word .docx, an "
        "OpenDocument .odt or an FB2 in a zip)"
    )


def _read_whole(path: Path, name: str, limit: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > limit:
            raise BadBook(
                f"{name}: refused: it is {human_size(size)}, over the {human_size(limit)} "
                "limit for a book in this format"
            )
        return path.read_bytes()
    except OSError as exc:
        raise BadBook(f"{name}: the file can't be read ({exc.strerror or exc})") from exc


def _looks_like_html(head: bytes) -> bool:
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:200].lower()
    return start.startswith((b"<!doctype html", b"<html")) or (
        start.startswith(b"<?xml") and b"<html" in head.lower()
    )


def _unknown(name: str, head: bytes) -> str:
    if head.startswith(_OLD_OFFICE):
        return (
            f"{name} is an old Word (.doc) or other Office file; save it as .docx (or .odt, "
            "or a PDF) and try again"
        )
    readable = ", ".join(s.lstrip(".") for s in BOOK_SUFFIXES if s != ".azw")
    return f"{name} is not a book Audiopub can read (it reads {readable})"
