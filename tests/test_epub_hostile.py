"""Broken and hostile EPUBs (issue #6): every one gets a clear `BadEpub` or reads with a warning.

Each file is built here, byte by byte where the zip itself must lie. Nothing may be written to
disk, fetched, expanded without bound or run for long; the messages are checked word for word
because people read them (CLI and web page).
"""

from __future__ import annotations

import io
import logging
import os
import random
import socket
import stat
import struct
import threading
import time
import tracemalloc
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from audiopub import settings
from audiopub.book.chunks.chunking import chunk_paragraphs
from audiopub.book.epub.archive import EpubArchive
from audiopub.book.epub.reader import read_epub
from audiopub.book.models import Book
from audiopub.book.safe_xml import parse_html
from audiopub.book.scripts import check_speakable, script_of, unsupported_script_share
from audiopub.errors import BadEpub, DamagedEntry

# --- building books ---------------------------------------------------------------------------

CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" '
    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)
TYPES = {
    "xhtml": "application/xhtml+xml",
    "png": "image/png",
    "jpg": "image/jpeg",
    "css": "text/css",
    "otf": "font/otf",
    "ttf": "font/ttf",
    "ncx": "application/x-dtbncx+xml",
}
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
ONE = "<h1>One</h1><p>The first chapter is here.</p>"
TWO = "<h1>Two</h1><p>The second chapter follows.</p>"


def page(body: str, doctype: str = "") -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        + doctype
        + '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head>'
        f"<body>{body}</body></html>"
    )


def package(
    names: list[str],
    spine: list[str],
    *,
    title: str = "Hostile Book",
    doctype: str = "",
    language: str = "en",
) -> str:
    items = "".join(f'<item id="{_id(n)}" href="{n}" media-type="{_type(n)}"/>' for n in names)
    refs = "".join(f'<itemref idref="{_id(n)}"/>' for n in spine)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        + doctype
        + '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
        'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:identifier id="id">x</dc:identifier><dc:title>{title}</dc:title>'
        f"<dc:language>{language}</dc:language></metadata>"
        f"<manifest>{items}</manifest><spine>{refs}</spine></package>"
    )


def _type(name: str) -> str:
    return TYPES.get(name.rsplit(".", 1)[-1], "application/xhtml+xml")


def _id(name: str) -> str:
    return "i_" + "".join(c if c.isalnum() else "_" for c in name)


def book_files(
    pages: Mapping[str, str] | None = None,
    *,
    extra: Mapping[str, bytes] = {},
    unlisted: Mapping[str, bytes] = {},
    **opf: str,
) -> dict[str, str | bytes]:
    """Entries of a small EPUB: `pages` (name → body) in the spine, `extra` files in the
    manifest only, `unlisted` files in the archive only."""
    pages = {"c1.xhtml": ONE, "c2.xhtml": TWO} if pages is None else pages
    files: dict[str, str | bytes] = {
        "mimetype": "application/epub+zip",
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": package([*pages, *extra], list(pages), **opf),
    }
    files.update({f"OEBPS/{name}": page(body) for name, body in pages.items()})
    files.update({f"OEBPS/{name}": data for name, data in extra.items()})
    files.update(unlisted)
    return files


def write_zip(
    path: Path, files: Mapping[str, str | bytes], *, method: Mapping[str, int] = {}
) -> Path:
    """The entries in order; `mimetype` stored, the rest deflated unless `method` says."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            default = zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED
            zf.writestr(name, data, compress_type=method.get(name, default))
    return path


def build(
    tmp_path: Path,
    files: Mapping[str, str | bytes] | None = None,
    name: str = "b.epub",
    **kwargs: object,
) -> Path:
    return write_zip(tmp_path / name, book_files() if files is None else files, **kwargs)


def patch_headers(
    data: bytes,
    name: str,
    *,
    file_size: int | None = None,
    compress_size: int | None = None,
    flags: int = 0,
) -> bytes:
    """Rewrite an entry's sizes (and OR in flag bits) in its local and central headers."""
    out = bytearray(data)
    raw = name.encode()
    for signature, name_at, flags_at, csize_at, size_at in (
        (b"PK\x03\x04", 30, 6, 18, 22),
        (b"PK\x01\x02", 46, 8, 20, 24),
    ):
        at = out.find(signature)
        while at >= 0:
            if out[at + name_at : at + name_at + len(raw)] == raw:
                old_flags = struct.unpack_from("<H", out, at + flags_at)[0]
                struct.pack_into("<H", out, at + flags_at, old_flags | flags)
                if compress_size is not None:
                    struct.pack_into("<L", out, at + csize_at, compress_size)
                if file_size is not None:
                    struct.pack_into("<L", out, at + size_at, file_size)
            at = out.find(signature, at + 1)
    return bytes(out)


def rewrite(path: Path, transform) -> Path:  # type: ignore[no-untyped-def]
    path.write_bytes(transform(path.read_bytes()))
    return path


def text_of(book: Book) -> str:
    return "\n".join(chapter.text for chapter in book.chapters)


def chapter_texts(book: Book) -> list[str]:
    return [chapter.text for chapter in book.chapters]


def read_fast(path: Path, seconds: float = 5.0) -> Book:
    """The book, read within `seconds` of this thread's CPU time: a guard against hostile
    input that would make reading blow up (minutes), on CPU time, which a busy machine does
    not stretch as it stretches the wall clock."""
    started = time.thread_time()
    try:
        return read_epub(path)
    finally:
        assert time.thread_time() - started < seconds


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("TOP SECRET MARKER\n")
    return path


# --- not an EPUB at all ---------------------------------------------------------------------


def test_not_a_zip_and_an_empty_file(tmp_path: Path) -> None:
    for name, data in (
        ("notes.epub", b"just some text"),
        ("empty.epub", b""),
        ("pdf.epub", b"%PDF-1.7\n" + b"\x00" * 5000),
    ):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(BadEpub) as error:
            read_epub(tmp_path / name)
        assert str(error.value) == f"{name}: not an EPUB (it is not a zip archive)"


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.95, -10])
def test_truncated_zip(tmp_path: Path, keep: float) -> None:
    data = build(tmp_path).read_bytes()
    cut = int(len(data) * keep) if keep > 0 else len(data) + int(keep)
    path = tmp_path / "cut.epub"
    path.write_bytes(data[:cut])
    with pytest.raises(BadEpub) as error:
        read_epub(path)
    assert str(error.value) == (
        "cut.epub: the archive is incomplete or damaged (was the download or copy cut short?)"
    )


def test_a_folder_or_a_missing_file(tmp_path: Path) -> None:
    (tmp_path / "folder.epub").mkdir()
    with pytest.raises(BadEpub, match=r"^folder\.epub: the file can't be opened \(Is a direc"):
        read_epub(tmp_path / "folder.epub")
    with pytest.raises(BadEpub, match=r"^gone\.epub: the file can't be opened \(No such file"):
        read_epub(tmp_path / "gone.epub")


def test_damaged_entry_data_leaves_that_chapter_out(tmp_path: Path) -> None:
    files = book_files(
        {"c1.xhtml": ONE + "<p>" + "Some words to compress. " * 200 + "</p>", "c2.xhtml": TWO}
    )
    path = build(tmp_path, files)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("OEBPS/c1.xhtml")
    start = info.header_offset + 30 + len(info.filename)
    data[start + 40 : start + 60] = b"\xff" * 20  # inside the deflate stream
    path.write_bytes(bytes(data))
    book = read_epub(path)
    assert [c.title for c in book.chapters] == ["Two"]
    assert len(book.warnings) == 1
    assert book.warnings[0].startswith("c1.xhtml can't be unpacked (")
    assert book.warnings[0].endswith("); its text was left out.")
    # The same damage in the only chapter: nothing left to narrate, and the message says why.
    files = book_files({"c1.xhtml": ONE + "<p>" + "Some words to compress. " * 200 + "</p>"})
    path = build(tmp_path, files, name="one.epub")
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("OEBPS/c1.xhtml")
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename)
    data[start + 40 : start + 60] = b"\xff" * 20
    path.write_bytes(bytes(data))
    with pytest.raises(BadEpub) as error:
        read_epub(path)
    assert str(error.value) == (
        "one.epub has no text to narrate (the archive is damaged: its "
        "text documents can't be unpacked)"
    )


# --- the mimetype entry ---------------------------------------------------------------------

MIMETYPE_WARNINGS = {
    "missing": "The archive has no “mimetype” entry; it was read as an EPUB anyway.",
    "wrong": "The archive’s “mimetype” entry says “application/zip” instead of "
    "“application/epub+zip”; the book was read anyway.",
    "compressed": "The archive’s “mimetype” entry is compressed; the book was read anyway.",
    "last": "The archive’s “mimetype” entry is not the first entry; the book was read anyway.",
}


@pytest.mark.parametrize("case", MIMETYPE_WARNINGS)
def test_mimetype_problems_are_warnings(tmp_path: Path, case: str) -> None:
    files = book_files()
    method = {}
    if case == "missing":
        del files["mimetype"]
    elif case == "wrong":
        files["mimetype"] = "application/zip"
    elif case == "compressed":
        method["mimetype"] = zipfile.ZIP_DEFLATED
    else:
        files["mimetype"] = files.pop("mimetype")
    book = read_epub(write_zip(tmp_path / "b.epub", files, method=method))
    assert [c.title for c in book.chapters] == ["One", "Two"]
    assert book.warnings == (MIMETYPE_WARNINGS[case],)


def test_a_good_mimetype_gives_no_warning(tmp_path: Path) -> None:
    assert read_epub(build(tmp_path)).warnings == ()


# --- container and package ------------------------------------------------------------------

PACKAGE_CASES = {
    "no container": (
        {"META-INF/container.xml": None},
        "b.epub: not an EPUB (it has no META-INF/container.xml)",
    ),
    "container not XML": (
        {"META-INF/container.xml": "<container><rootfiles>"},
        "b.epub: META-INF/container.xml is not valid XML (",
    ),
    "container names nothing": (
        {"META-INF/container.xml": "<container/>"},
        "b.epub: META-INF/container.xml does not name a package file",
    ),
    "missing OPF": (
        {"OEBPS/content.opf": None},
        "b.epub: its package file OEBPS/content.opf is missing",
    ),
    "OPF outside": (
        {"META-INF/container.xml": CONTAINER.replace("OEBPS/", "../../")},
        "b.epub: its package file “../../content.opf” points outside the book",
    ),
    "OPF not XML": (
        {"OEBPS/content.opf": "this is not < xml"},
        "b.epub: its package file OEBPS/content.opf is not valid XML (",
    ),
    "OPF without spine": (
        {
            "OEBPS/content.opf": '<package xmlns="http://www.idpf.org/2007/opf">'
            "<manifest/></package>"
        },
        "b.epub: its package file OEBPS/content.opf has no spine",
    ),
    "OPF is not a package": (
        {"OEBPS/content.opf": "<html/>"},
        "b.epub: its package file OEBPS/content.opf has no package element",
    ),
    "empty spine": (
        {"OEBPS/content.opf": package(["c1.xhtml"], [])},
        ("b.epub has no text to narrate (its reading order lists no text documents)"),
    ),
}


@pytest.mark.parametrize("case", PACKAGE_CASES)
def test_unreadable_package_gets_a_clear_message(tmp_path: Path, case: str) -> None:
    change, message = PACKAGE_CASES[case]
    files = book_files()
    for name, data in change.items():
        if data is None:
            del files[name]
        else:
            files[name] = data
    with pytest.raises(BadEpub) as error:
        read_epub(write_zip(tmp_path / "b.epub", files))
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value).rstrip()


def test_package_with_xml_errors_is_read_as_far_as_possible(tmp_path: Path) -> None:
    files = book_files(title="Pride & Prejudice&nbsp;<i>Illustrated</i>")
    book = read_epub(write_zip(tmp_path / "b.epub", files))
    assert [c.title for c in book.chapters] == ["One", "Two"]
    assert book.title == "Pride & Prejudice Illustrated"
    assert len(book.warnings) == 1
    assert book.warnings[0].startswith("The package file OEBPS/content.opf has XML errors (")
    assert book.warnings[0].endswith("); it was read as far as possible.")


def test_container_path_with_a_leading_slash_is_read_from_the_root(tmp_path: Path) -> None:
    files = book_files()
    files["META-INF/container.xml"] = CONTAINER.replace('"OEBPS/', '"/OEBPS/')
    assert len(read_epub(write_zip(tmp_path / "b.epub", files)).chapters) == 2


# --- missing files --------------------------------------------------------------------------


def test_missing_spine_document_is_left_out_with_a_warning(tmp_path: Path) -> None:
    files = book_files({"c1.xhtml": ONE, "c2.xhtml": TWO, "c3.xhtml": "<p>Three.</p>"})
    del files["OEBPS/c2.xhtml"]
    book = read_epub(write_zip(tmp_path / "b.epub", files))
    assert [c.title for c in book.chapters] == ["One", "Chapter 2"]
    assert book.warnings == (
        ("c2.xhtml (in the reading order) is missing from the archive; its text was left out."),
    )


def test_all_spine_documents_missing(tmp_path: Path) -> None:
    files = book_files()
    del files["OEBPS/c1.xhtml"], files["OEBPS/c2.xhtml"]
    with pytest.raises(BadEpub) as error:
        read_epub(write_zip(tmp_path / "b.epub", files))
    assert str(error.value) == (
        "b.epub has no text to narrate (the text documents in its "
        "reading order are missing from the archive)"
    )


def test_missing_stylesheet_font_and_image_do_not_stop_the_book(tmp_path: Path) -> None:
    files = book_files(
        extra={
            "style.css": b"p {}",
            "font.otf": b"OTTO",
            "pic.png": PNG,
            "cover.jpg": b"\xff\xd8\xff",
        }
    )
    for name in ("style.css", "font.otf", "pic.png", "cover.jpg"):
        del files[f"OEBPS/{name}"]
    book = read_epub(write_zip(tmp_path / "b.epub", files))
    assert [c.title for c in book.chapters] == ["One", "Two"]
    assert book.cover is None
    assert book.warnings == (
        (
            "4 files the book lists are missing from the archive (style.css, "
            "font.otf, pic.png, …); the book was read without them."
        ),
    )


def test_names_from_the_file_reach_warnings_without_control_characters(tmp_path: Path) -> None:
    files = book_files(extra={"evil%0A%1B[31m.css": b""})
    del files["OEBPS/evil%0A%1B[31m.css"]
    book = read_epub(write_zip(tmp_path / "b.epub", files))
    assert book.warnings == (
        (
            "1 file the book lists is missing from the archive (evil??[31m.css); "
            "the book was read without them."
        ),
    )


def test_spine_entry_naming_no_manifest_item(tmp_path: Path) -> None:
    files = book_files()
    files["OEBPS/content.opf"] = str(files["OEBPS/content.opf"]).replace(
        "</spine>", '<itemref idref="ghost"/></spine>'
    )
    book = read_epub(write_zip(tmp_path / "b.epub", files))
    assert book.warnings == ("The reading order names a missing item “ghost”; it was ignored.",)


# --- DRM ------------------------------------------------------------------------------------


def encryption(*refs: tuple[str, str]) -> str:
    data = "".join(
        f'<enc:EncryptedData><enc:EncryptionMethod Algorithm="{algorithm}"/>'
        f'<enc:CipherData><enc:CipherReference URI="{uri}"/></enc:CipherData>'
        "</enc:EncryptedData>"
        for uri, algorithm in refs
    )
    return (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        f'xmlns:enc="http://www.w3.org/2001/04/xmlenc#">{data}</encryption>'
    )


AES = "http://www.w3.org/2001/04/xmlenc#aes128-cbc"
IDPF_FONTS = "http://www.idpf.org/2008/embedding"
ADOBE_FONTS = "http://ns.adobe.com/pdf/enc#RC"


@pytest.mark.parametrize("uri", ["OEBPS/c1.xhtml", "OEBPS/my%20chapter.xhtml"])
def test_drm_encrypted_text_is_refused(tmp_path: Path, uri: str) -> None:
    files = book_files({"c1.xhtml": ONE, "my chapter.xhtml": TWO})
    files["OEBPS/c1.xhtml"] = b"\x8a\x13\x00binary ciphertext"
    files["META-INF/encryption.xml"] = encryption((uri, AES), ("OEBPS/font.otf", AES))
    with pytest.raises(BadEpub) as error:
        read_epub(write_zip(tmp_path / "drm.epub", files))
    assert str(error.value) == (
        "drm.epub: this book is DRM-protected (its text is encrypted); "
        "Audiopub can only narrate DRM-free EPUBs"
    )


def test_font_obfuscation_is_not_drm(tmp_path: Path) -> None:
    files = book_files(extra={"a.otf": b"\x01obfuscated", "b.ttf": b"\x02obfuscated"})
    files["META-INF/encryption.xml"] = encryption(
        ("OEBPS/a.otf", IDPF_FONTS), ("OEBPS/b.ttf", ADOBE_FONTS)
    )
    book = read_epub(write_zip(tmp_path / "fonts.epub", files))
    assert [c.title for c in book.chapters] == ["One", "Two"]
    assert book.warnings == ()


def test_unreadable_encryption_xml_is_a_warning(tmp_path: Path) -> None:
    files = book_files()
    files["META-INF/encryption.xml"] = "<encryption"
    book = read_epub(write_zip(tmp_path / "b.epub", files))
    assert book.warnings == (
        (
            "META-INF/encryption.xml could not be read; if the text is "
            "encrypted it will not be readable."
        ),
    )


# --- names that leave the book, links -------------------------------------------------------


def symlink(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def test_entries_outside_the_book_and_links_are_never_read_or_written(
    tmp_path: Path, secret: Path
) -> None:
    work = tmp_path / "job"
    work.mkdir()
    bait = page("<p>You should never hear this sentence.</p>")
    # In the spine: a symbolic link to the secret, and hrefs that climb out of the book.
    outside = ["../../evil.xhtml", f"../../..{secret}"]
    files = book_files({"c1.xhtml": ONE, "link.xhtml": "", **dict.fromkeys(outside, "")})
    for name in ("link.xhtml", *outside):
        del files[f"OEBPS/{name}"]
    files.update(
        dict.fromkeys(
            ["../../evil.xhtml", "/abs/evil.xhtml", "C:/evil.xhtml", "OEBPS\\..\\..\\evil.xhtml"],
            bait,
        )
    )
    path = write_zip(work / "b.epub", files)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr(*symlink("OEBPS/link.xhtml", str(secret)))
    before = tree(tmp_path)
    cwd = os.getcwd()
    os.chdir(work)
    try:
        book = read_epub(path)
    finally:
        os.chdir(cwd)
    assert tree(tmp_path) == before  # nothing written anywhere
    assert [c.title for c in book.chapters] == ["One"]
    assert "never hear" not in text_of(book) and "SECRET" not in text_of(book)
    assert book.warnings == (
        (
            "Ignored 5 archive entries whose names point outside the book or that are links: "
            "../../evil.xhtml, /abs/evil.xhtml, C:/evil.xhtml, …."
        ),
        "link.xhtml (in the reading order) is missing from the archive; its text was left out.",
        "../../evil.xhtml (in the reading order) points outside the book; its text was left out.",
        (
            f"../../..{secret} (in the reading order) points outside the book; its text was left "
            "out."
        ),
    )


# --- zip bombs ------------------------------------------------------------------------------


def test_compression_ratio_is_checked_from_the_headers(tmp_path: Path) -> None:
    files = book_files({"c1.xhtml": ONE + " " * 3_000_000, "c2.xhtml": TWO})
    with pytest.raises(BadEpub) as error:
        read_fast(build(tmp_path, files, name="bomb.epub"), 2)
    assert str(error.value).startswith("bomb.epub: refused: OEBPS/c1.xhtml is compressed ")
    assert str(error.value).endswith(" to 1, far beyond any real book (zip bombs look like this)")


def test_total_size_is_checked_from_the_headers(tmp_path: Path) -> None:
    # Twelve stored entries whose headers claim 100 MB each (ratio 1:1): 1.2 GB in all.
    files = book_files(unlisted={f"OEBPS/big{i}.bin": b"x" * 1000 for i in range(12)})
    path = build(
        tmp_path,
        files,
        name="big.epub",
        method={f"OEBPS/big{i}.bin": zipfile.ZIP_STORED for i in range(12)},
    )
    data = path.read_bytes()
    for i in range(12):
        data = patch_headers(
            data, f"OEBPS/big{i}.bin", file_size=100_000_000, compress_size=100_000_000
        )
    path.write_bytes(data)
    with pytest.raises(BadEpub) as error:
        read_fast(path, 2)
    assert str(error.value) == (
        "big.epub: refused: it would unpack to 1.2 GB, over the 1.1 GB "
        "limit for an EPUB (zip bombs look like this)"
    )


def test_total_size_limit_is_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings, "EPUB_MAX_UNPACKED_BYTES", 100_000)
    files = book_files(extra={"pic.png": PNG + os.urandom(200_000)})
    with pytest.raises(BadEpub, match=r"would unpack to 20\d\.\d kB, over the 100\.0 kB limit"):
        read_epub(build(tmp_path, files))


def test_other_zipped_formats_get_the_same_limits_in_their_own_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Word, OpenDocument and zipped FB2 books are opened by the same archive reader.
    monkeypatch.setattr(settings, "EPUB_MAX_UNPACKED_BYTES", 100_000)
    path = tmp_path / "big.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("word/media/pic.png", PNG + os.urandom(200_000))
    with pytest.raises(BadEpub, match=r"over the 100\.0 kB limit for a Word document"):
        EpubArchive(path, kind="a Word document", mimetype=None)
    with pytest.raises(BadEpub, match=r"^notes\.docx: not a Word document \(it is not a zip"):
        (tmp_path / "notes.docx").write_bytes(b"just text")
        EpubArchive(tmp_path / "notes.docx", kind="a Word document", mimetype=None)


def test_a_lying_header_gets_no_more_than_it_promised(tmp_path: Path) -> None:
    # 50 MB of spaces deflate to ~50 kB; the headers say 100 kB, which passes every limit.
    bomb = page(ONE + " " * 50_000_000)
    files = book_files({"c1.xhtml": "", "c2.xhtml": TWO})
    files["OEBPS/c1.xhtml"] = bomb
    path = rewrite(
        build(tmp_path, files),
        lambda data: patch_headers(data, "OEBPS/c1.xhtml", file_size=100_000),
    )
    tracemalloc.start()
    try:
        book = read_fast(path, 3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000  # the 50 MB were never in memory
    assert [c.title for c in book.chapters] == ["Two"]
    assert book.warnings[0].startswith("c1.xhtml can't be unpacked (Bad CRC-32")


def test_reads_stop_at_the_header_size_even_if_zipfile_did_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with EpubArchive(build(tmp_path)) as archive:
        monkeypatch.setattr(
            archive._zip, "open", lambda info: io.BytesIO(b"x" * (info.file_size + 100_000))
        )
        with pytest.raises(BadEpub) as error:
            archive.read("OEBPS/c1.xhtml")
    assert str(error.value) == (
        "b.epub: refused: OEBPS/c1.xhtml unpacks to more than its "
        "header says (zip bombs look like this)"
    )


def test_what_is_read_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings, "EPUB_MAX_READ_BYTES", 50_000)
    files = book_files({"c1.xhtml": ONE + "<p>" + "Plenty of words. " * 6000 + "</p>"})
    with pytest.raises(BadEpub) as error:
        read_epub(build(tmp_path, files))
    assert str(error.value) == (
        "b.epub: refused: its text and images unpack to more than "
        "50.0 kB, far more than any real book"
    )


def test_a_page_too_large_to_parse_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "EPUB_MAX_DOCUMENT_BYTES", 100_000)
    files = book_files({"c1.xhtml": ONE + "<p>x</p>" * 20_000, "c2.xhtml": TWO})
    book = read_epub(build(tmp_path, files))
    assert [c.title for c in book.chapters] == ["Two"]
    assert book.warnings == (
        ("c1.xhtml is 160.2 kB, too large for one page of a book; its text was left out."),
    )


def test_too_many_entries(tmp_path: Path) -> None:
    files = book_files(unlisted={f"OEBPS/x/{i}": b"" for i in range(settings.EPUB_MAX_ENTRIES)})
    with pytest.raises(BadEpub) as error:
        read_fast(build(tmp_path, files), 5)
    assert str(error.value) == (
        "b.epub: refused: its archive lists more than 10,000 files, far more than any real book"
    )


@pytest.mark.parametrize(
    ("method", "flags", "reason"),
    [
        (zipfile.ZIP_BZIP2, 0, "it uses a compression method EPUBs don't allow"),
        (zipfile.ZIP_LZMA, 0, "it uses a compression method EPUBs don't allow"),
        (zipfile.ZIP_DEFLATED, 0x1, "it is password-protected"),
    ],
)
def test_entries_that_cannot_be_unpacked_safely(
    tmp_path: Path, method: int, flags: int, reason: str
) -> None:
    path = build(tmp_path, method={"OEBPS/c1.xhtml": method})
    path.write_bytes(patch_headers(path.read_bytes(), "OEBPS/c1.xhtml", flags=flags))
    book = read_epub(path)
    assert [c.title for c in book.chapters] == ["Two"]
    assert book.warnings == (f"c1.xhtml can't be unpacked ({reason}); its text was left out.",)
    with EpubArchive(path) as archive, pytest.raises(DamagedEntry):
        archive.read("OEBPS/c1.xhtml")


def test_a_refused_book_does_not_affect_the_next(tmp_path: Path) -> None:
    bomb = build(tmp_path, book_files({"c1.xhtml": ONE + " " * 3_000_000}), name="bomb.epub")
    good = build(tmp_path, name="good.epub")
    results: list[object] = []

    def read(path: Path) -> None:
        try:
            results.append(read_epub(path))
        except BadEpub as exc:
            results.append(exc)

    threads = [threading.Thread(target=read, args=(p,)) for p in (bomb, good, bomb, good)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(type(r).__name__ for r in results) == ["BadEpub", "BadEpub", "Book", "Book"]


# --- XML attacks ----------------------------------------------------------------------------

LAUGHS = '<!ENTITY lol0 "lol">' + "".join(
    f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)
)
BILLION_LAUGHS = f"<!DOCTYPE html [{LAUGHS}]>"


def test_billion_laughs_in_a_chapter_is_not_expanded(tmp_path: Path) -> None:
    # lol9 would be 3 GB; lol3 (3 kB) is small enough that libxml2's own amplification limit
    # lets it through, so only our parser settings keep it out of the text.
    files = book_files({"c1.xhtml": "", "c2.xhtml": "", "c3.xhtml": TWO})
    files["OEBPS/c1.xhtml"] = page("<h1>Laughs</h1><p>Start &lol9; end.</p>", BILLION_LAUGHS)
    files["OEBPS/c2.xhtml"] = page("<h1>Giggles</h1><p>Start &lol3; end.</p>", BILLION_LAUGHS)
    book = read_fast(build(tmp_path, files), 2)
    assert "lol" not in text_of(book)
    assert chapter_texts(book)[1:] == [
        "Giggles\n\nStart end.",
        "Two\n\nThe second chapter follows.",
    ]


def test_billion_laughs_in_an_html_page_is_not_expanded() -> None:
    # HTML that is not XHTML has its own parser (safe_xml.parse_html): it reads no DTD at all.
    root = parse_html(
        f"{BILLION_LAUGHS}<html><body><p>Start &lol9; end.</p></body></html>".encode()
    )
    assert root is not None
    assert "lollol" not in "".join(root.itertext())


@pytest.mark.parametrize("where", ["OEBPS/content.opf", "META-INF/container.xml"])
def test_billion_laughs_in_the_package_is_refused_fast(tmp_path: Path, where: str) -> None:
    files = book_files()
    if where == "OEBPS/content.opf":
        files[where] = package(
            ["c1.xhtml", "c2.xhtml"],
            ["c1.xhtml", "c2.xhtml"],
            title="&lol9;",
            doctype=BILLION_LAUGHS,
        )
    else:
        files[where] = CONTAINER.replace("?>", "?>" + BILLION_LAUGHS, 1).replace(
            'version="1.0" xmlns', 'version="&lol9;" xmlns'
        )
    with pytest.raises(BadEpub) as error:
        read_fast(build(tmp_path, files), 2)
    what = "its package file OEBPS/content.opf" if where.endswith(".opf") else where
    assert str(error.value).startswith(f"b.epub: {what} is not valid XML (")
    assert "lollol" not in str(error.value)


@pytest.fixture
def listener() -> Iterator[tuple[str, list[bytes]]]:
    """A local HTTP-ish server that records every connection: none may come."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.1)
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            seen.append(conn.recv(1024))
            conn.sendall(b'HTTP/1.0 200 OK\r\n\r\n<!ENTITY leak "NETWORK MARKER">')
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}", seen
    stop.set()
    thread.join(2)
    server.close()


def test_external_entities_and_dtds_fetch_nothing(
    tmp_path: Path, secret: Path, listener: tuple[str, list[bytes]]
) -> None:
    url, seen = listener
    doctypes = [
        f'<!DOCTYPE html [<!ENTITY x SYSTEM "file://{secret}">]>',
        '<!DOCTYPE html [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
        f'<!DOCTYPE html SYSTEM "file://{secret}">',
        f'<!DOCTYPE html [<!ENTITY % p SYSTEM "file://{secret}"> %p;]>',
        f'<!DOCTYPE html [<!ENTITY x SYSTEM "{url}/entity">]>',
        f'<!DOCTYPE html SYSTEM "{url}/dtd">',
        f'<!DOCTYPE html [<!ENTITY % p SYSTEM "{url}/pe"> %p;]>',
    ]
    pages = {f"c{i}.xhtml": "" for i in range(len(doctypes))}
    files = book_files(pages)
    for i, doctype in enumerate(doctypes):
        files[f"OEBPS/c{i}.xhtml"] = page(
            f"<h1>Page {i}</h1><p>Before &x;&leak; after.</p>"
            f'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file://{secret}" '
            'parse="text"/>',
            doctype,
        )
    files["OEBPS/content.opf"] = package(
        list(pages), list(pages), title="T &x;", doctype=doctypes[0]
    )
    book = read_fast(build(tmp_path, files), 5)
    text = text_of(book)
    assert "MARKER" not in text and "root:" not in text and "MARKER" not in book.title
    assert text.count("Before after.") == len(doctypes)
    assert seen == []


# --- nothing to narrate ---------------------------------------------------------------------


def test_image_only_comic(tmp_path: Path) -> None:
    pages = {f"p{i}.xhtml": f'<div><img src="p{i}.png" alt=""/></div>' for i in range(5)}
    files = book_files(pages, extra={f"p{i}.png": PNG for i in range(5)})
    with pytest.raises(BadEpub) as error:
        read_epub(build(tmp_path, files, name="comic.epub"))
    assert str(error.value) == (
        "comic.epub has no text to narrate (all 5 of its pages are "
        "pictures with no text in them, as in a scanned or drawn book; "
        "Audiopub reads text only)"
    )


def test_empty_chapters_only(tmp_path: Path) -> None:
    files = book_files({"a.xhtml": "<p> </p>", "b.xhtml": "<div>\u00a0\u200b</div><p>* * *</p>"})
    with pytest.raises(BadEpub, match=r"^empty\.epub has no text to narrate \(its pages hold"):
        read_epub(build(tmp_path, files, name="empty.epub"))


def test_a_chapter_without_text_is_skipped_with_a_note_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    nav = (
        '<nav xmlns:epub="http://www.idpf.org/2007/ops" epub:type="toc"><ol>'
        '<li><a href="c1.xhtml">One</a></li><li><a href="blank.xhtml">Plate</a></li>'
        '<li><a href="c2.xhtml">Two</a></li></ol></nav>'
    )
    files = book_files(
        {
            "c1.xhtml": ONE,
            "blank.xhtml": '<img src="x.png" alt=""/>',
            "c2.xhtml": TWO,
            "nav.xhtml": nav,
        }
    )
    files["OEBPS/content.opf"] = str(files["OEBPS/content.opf"]).replace(
        'href="nav.xhtml"', 'href="nav.xhtml" properties="nav"'
    )
    with caplog.at_level(logging.WARNING, logger="audiopub.book.epub.reader"):
        book = read_epub(build(tmp_path, files))
    assert [c.title for c in book.chapters] == ["One", "Two"]
    assert book.warnings == ("Left out “Plate”: it has no text to narrate.",)
    assert "b.epub: Left out “Plate”: it has no text to narrate." in caplog.messages


# --- odd text -------------------------------------------------------------------------------


def test_characters_outside_the_bmp_and_control_characters(tmp_path: Path) -> None:
    body = (
        "<p>Smile \U0001f600 at \U0001d407\U0001d41e\U0001d425\U0001d425\U0001d428 and "
        "\U00020000 plus \U0001f1eb\U0001f1f7.</p>"
        "<p>Bell\x07 tab\t null&#0; escape\x1b del\x7f c1\x85 private\ue000 end.</p>"
    )
    files = book_files({"c1.xhtml": ONE + body})
    book = read_epub(build(tmp_path, files))
    text = text_of(book)
    assert "Hello" in text  # mathematical bold letters fold to plain ones
    assert "\U0001f600" in text and "\U00020000" in text
    assert not any(ord(c) < 32 and c != "\n" or 0x7F <= ord(c) < 0xA0 for c in text)


WORDS = (
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "and",
    "then",
    "some",
    "more",
    "words",
    "follow",
    "until",
    "morning",
    "light",
    "comes",
)


def test_references_to_surrogates_and_invalid_code_points(tmp_path: Path) -> None:
    # Found by the fuzzer: libxml2's recovery kept "&#xD800;" as bytes that are not UTF-8, and
    # lxml raised UnicodeDecodeError on reading the tag whose namespace held it.
    files = book_files({"c1.xhtml": ONE, "c2.xhtml": TWO})
    files["OEBPS/c2.xhtml"] = (
        '<html xmlns="http://www.w3.org/1999/xhtml&#xD800;"><body><h1 id="&#xDFFF;">Two</h1>'
        "<p>Bad &#xD800; refs &#0; &#x110000; &#99999999999; &#xFFFE; here.</p></body></html>"
    )
    book = read_epub(build(tmp_path, files))
    assert [c.title for c in book.chapters] == ["One", "Two"]
    assert book.chapters[1].text.startswith("Two\n\nBad ")
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in text_of(book))


def test_extremely_long_words_and_lines(tmp_path: Path) -> None:
    word = "Pneumono" + "ultramicroscopic" * 60_000  # ~1 MB, one word
    rng = random.Random(6)  # varied words: a 2 MB run of one word is refused as a zip bomb
    line = " ".join(rng.choice(WORDS) for _ in range(300_000)) + "."  # ~2 MB, one paragraph
    files = book_files(
        {
            "c1.xhtml": f"<h1>Long</h1><p>{word}</p><p>{line}</p>",
            "c2.xhtml": "<p>"
            + "-" * 200_000
            + "</p><p>"
            + "[" * 50_000
            + "1"
            + "]2" * 50_000
            + " x.</p>",
        }
    )
    book = read_fast(build(tmp_path, files), 20)
    assert book.chapters[0].paragraphs == ("Long", word, line)
    assert book.chapters[1].paragraphs == ("2 x.",)  # "[[1]2]2" → "[2]2" → "2"
    # A guard against quadratic chunking (minutes on 2 MB), not a speed target: this thread's
    # CPU time, which a busy machine does not stretch as it stretches the wall clock.
    started = time.thread_time()
    word_chunks = chunk_paragraphs([word], 400)
    line_chunks = chunk_paragraphs([line], 400)
    assert time.thread_time() - started < 5
    assert all(1 <= len(c.text) <= 400 for c in word_chunks + line_chunks)
    assert "".join(c.text for c in word_chunks) == word
    assert " ".join(c.text for c in line_chunks) == line


def test_deep_nesting_is_bounded(tmp_path: Path) -> None:
    deep = "<div>" * 5000 + "Deep text." + "</div>" * 5000
    files = book_files({"c1.xhtml": ONE, "c2.xhtml": deep})
    book = read_fast(build(tmp_path, files), 5)
    assert book.chapters[0].title == "One"
    assert [w for w in book.warnings if "c2.xhtml" in w] == [
        "c2.xhtml: its markup is nested more than 2,048 elements deep, far beyond any real "
        "book; its text from there on was left out."
    ]


def nested(levels: int, text: str, tag: str = "span") -> str:
    return f"<{tag}>" * levels + text + f"</{tag}>" * levels


def test_paragraphs_nested_255_deep_are_read(tmp_path: Path) -> None:
    """Spans in spans, 255 deep, in 200 paragraphs: past libxml2's default depth of 256,
    which used to drop them all without a word."""
    texts = [f"Paragraph {n} is here." for n in range(200)]
    paragraphs = "".join(f"<p>{nested(255, text)}</p>" for text in texts)
    files = book_files({"c1.xhtml": ONE, "c2.xhtml": "<h1>Two</h1>" + paragraphs})
    book = read_epub(build(tmp_path, files))
    assert book.chapters[1].paragraphs == ("Two", *texts)
    assert book.warnings == ()


@pytest.mark.parametrize("levels", [1000, 2000])
def test_nesting_up_to_the_parser_limit_is_read(tmp_path: Path, levels: int) -> None:
    """Deeper than Python's recursion limit: the page is walked without recursion."""
    body = f"<h1>Two</h1><p>Before.</p>{nested(levels, 'Deep text.', 'div')}<p>After.</p>"
    files = book_files({"c1.xhtml": ONE, "c2.xhtml": body})
    book = read_epub(build(tmp_path, files))
    assert book.chapters[1].paragraphs == ("Two", "Before.", "Deep text.", "After.")
    assert book.warnings == ()


@pytest.mark.parametrize("levels", [1000, 2000])
def test_svg_text_nested_up_to_the_parser_limit_is_read(tmp_path: Path, levels: int) -> None:
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg"><text y="10">'
        f"{nested(levels, 'Deep words.', 'tspan')}</text></svg>"
    )
    files = book_files({"c1.xhtml": ONE, "c2.xhtml": f"<h1>Two</h1>{svg}<p>After.</p>"})
    book = read_epub(build(tmp_path, files))
    assert book.chapters[1].paragraphs == ("Two", "Deep words.", "After.")


def test_nesting_past_the_parser_limit_names_the_loss(tmp_path: Path) -> None:
    """10,000 deep: what comes before is read, the rest is named as lost, nothing crashes."""
    body = f"<h1>Two</h1><p>Before.</p>{nested(10_000, 'Deep text.')}<p>After.</p>"
    files = book_files({"c1.xhtml": ONE, "c2.xhtml": body, "c3.xhtml": TWO.replace("Two", "3")})
    book = read_epub(build(tmp_path, files))
    assert book.chapters[1].paragraphs == ("Two", "Before.")
    assert book.chapters[2].paragraphs == ("3", "The second chapter follows.")
    assert book.warnings == (
        "c2.xhtml: its markup is nested more than 2,048 elements deep, far beyond any real "
        "book; its text from there on was left out.",
    )


# --- covers too large to use ------------------------------------------------------------------


def png_header(width: int, height: int) -> bytes:
    """A PNG's signature and IHDR claiming `width`×`height` (all the reader looks at)."""
    ihdr = b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + ihdr + struct.pack(">I", zlib.crc32(ihdr))


def test_a_cover_over_the_byte_limit_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "EPUB_MAX_COVER_BYTES", 10_000)
    files = book_files(extra={"cover.png": png_header(64, 64) + os.urandom(20_000)})
    book = read_epub(build(tmp_path, files))
    assert book.cover is None and [c.title for c in book.chapters] == ["One", "Two"]
    assert book.warnings == (
        "The cover cover.png is 20.0 kB, too large to use (the limit is "
        "10.0 kB); the book has no cover.",
    )


def test_a_cover_of_too_many_pixels_is_not_used(tmp_path: Path) -> None:
    """20000×20000 pixels (1.2 GB decoded) is refused from its header, and says so: ffmpeg
    failed on it later and called it damaged."""
    files = book_files(extra={"cover.png": png_header(20_000, 20_000) + b"\x00" * 64})
    book = read_epub(build(tmp_path, files))
    assert book.cover is None
    assert book.warnings == (
        "The cover cover.png is 20,000×20,000 pixels, too large to use; the book has no cover.",
    )


def test_a_cover_within_the_limits_is_used(tmp_path: Path) -> None:
    files = book_files(extra={"cover.png": png_header(4000, 6000) + b"\x00" * 64})
    book = read_epub(build(tmp_path, files))
    assert book.cover is not None and book.warnings == ()


# --- scripts a voice can't read -------------------------------------------------------------


def book_in(tmp_path: Path, text: str, language: str) -> Book:
    files = book_files({"c1.xhtml": f"<h1>1</h1><p>{text}</p>"}, language=language)
    return read_epub(build(tmp_path, files, name=f"{language}.epub"))


ARABIC = "كان يا ما كان في قديم الزمان وسالف العصر والأوان. " * 20
CHINESE = "很久很久以前，在一个遥远的国度里，住着一位国王。" * 20
JAPANESE = "むかしむかし、ある村におじいさんとおばあさんが住んでいました。" * 20
HEBREW = "בראשית ברא אלוהים את השמים ואת הארץ. " * 20


@pytest.mark.parametrize(
    ("text", "language", "script"),
    [
        (ARABIC, "ar", "Arabic script"),
        (CHINESE, "zh", "Chinese characters (Han script)"),
        (JAPANESE, "ja", "Japanese kana"),
        (HEBREW, "he", "Hebrew script"),
    ],
)
def test_rtl_and_cjk_books_with_a_voice_that_cannot_read_them(
    tmp_path: Path, text: str, language: str, script: str
) -> None:
    book = book_in(tmp_path, text, language)  # the book itself reads fine
    assert book.language == language
    with pytest.raises(BadEpub) as error:
        check_speakable(book, "en-US")
    share = unsupported_script_share(text_of(book), "en-US")[0]
    assert share > 0.9
    assert str(error.value) == (
        f"This book is mostly in {script}: {share:.0%} of its letters. "
        "The voice en-US can't read it; choose a voice for the book's "
        "language."
    )
    check_speakable(book, language)  # a voice for the book's language passes
    check_speakable(book, "multi")  # and so does a voice whose language is unknown
    with pytest.raises(BadEpub, match=r"The voice en_US-joe-medium can't read it"):
        check_speakable(book, "en_US", voice="en_US-joe-medium")


def test_a_few_foreign_words_are_fine(tmp_path: Path) -> None:
    text = "The sign over the door said " + "مرحبا" + " and a line of Greek: λόγος. " * 3
    book = book_in(tmp_path, text * 5, "en")
    share, script = unsupported_script_share(text_of(book), "en")
    assert 0 < share < 0.3 and script in ("Arabic", "Greek")
    check_speakable(book, "en-GB")


def test_script_of() -> None:
    assert [script_of(c) for c in "aЖλא ب中かカ한1 .\U0001d400"] == [
        "Latin",
        "Cyrillic",
        "Greek",
        "Hebrew",
        None,
        "Arabic",
        "Han",
        "Kana",
        "Kana",
        "Hangul",
        None,
        None,
        None,
        "Latin",
    ]
    assert unsupported_script_share("", "en") == (0.0, None)
    assert unsupported_script_share("Привет", "ru-RU") == (0.0, None)
    assert unsupported_script_share("Привет", "en") == (1.0, "Cyrillic")
    assert unsupported_script_share("abc", "sr-Cyrl") == (1.0, "Latin")
    assert unsupported_script_share("日本", "zh-Hant") == (0.0, None)
