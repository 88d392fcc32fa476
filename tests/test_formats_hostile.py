"""Hostile books in the formats other than EPUB: entity bombs and deep nesting in FB2 and
HTML, zip bombs in Word, OpenDocument and zipped FB2 files, a PDF that never ends. Each is
refused with a message, or read without harm, in bounded time (as tests/test_epub_hostile.py
does for EPUBs)."""

from __future__ import annotations

import time
import zipfile
from pathlib import Path

import pytest

from audiopub.book.reading import read_book
from audiopub.errors import BadBook

LAUGHS = (
    '<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{n} "{("&lol" + (str(n - 1) if n > 1 else "") + ";") * 10}">'
        for n in range(1, 10)
    )
    + "]>"
)


def _fb2(body: str) -> str:
    return (
        '<?xml version="1.0"?>\n'
        + LAUGHS
        + '<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0"><description>'
        "<title-info><book-title>B</book-title></title-info></description>"
        f"<body><section><title><p>Chapter 1</p></title>{body}</section></body></FictionBook>"
    )


@pytest.mark.parametrize("suffix", [".fb2", ".html", ".xhtml"])
def test_billion_laughs_are_not_expanded(tmp_path: Path, suffix: str) -> None:
    if suffix == ".fb2":
        data = _fb2("<p>Before &lol9; after.</p>")
    else:
        data = (
            '<?xml version="1.0"?>' * (suffix == ".xhtml")
            + LAUGHS
            + "<html><body><h1>Chapter 1</h1><p>Before &lol9; after.</p></body></html>"
        )
    path = tmp_path / f"laughs{suffix}"
    path.write_text(data)
    started = time.monotonic()
    book = read_book(path)
    assert time.monotonic() - started < 10
    text = " ".join(c.text for c in book.chapters)
    assert "Before" in text  # libxml2 may stop at the bomb: what follows it can be lost
    assert text.count("lol") < 5


def test_an_external_entity_is_not_fetched(tmp_path: Path) -> None:
    path = tmp_path / "secret.fb2"
    path.write_text(
        '<?xml version="1.0"?><!DOCTYPE f [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        '<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0">'
        "<body><section><p>Hello &x; there.</p></section></body></FictionBook>"
    )
    text = read_book(path).chapters[0].text
    assert "root:" not in text and "Hello" in text


@pytest.mark.parametrize("suffix", [".html", ".fb2"])
def test_deep_nesting_is_read_without_recursion(tmp_path: Path, suffix: str) -> None:
    deep = "<div>" * 5000 + "Lost in the middle." + "</div>" * 5000
    path = tmp_path / f"deep{suffix}"
    if suffix == ".fb2":
        path.write_text(_fb2(f"<p>Start.</p><cite>{deep.replace('div', 'cite')}</cite>"))
    else:
        path.write_text(f"<html><body><p>Start.</p>{deep}</body></html>")
    book = read_book(path)
    assert "Start." in book.chapters[0].text
    assert any("nested" in warning for warning in book.warnings)


def _bomb(path: Path, entry: str, others: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in others.items():
            zf.writestr(name, data)
        # 64 MB of spaces deflate ~1000:1, as zip bombs do.
        zf.writestr(entry, b"<x>" + b" " * (64 << 20) + b"</x>")
    return path


@pytest.mark.parametrize(
    ("name", "entry", "others"),
    [
        ("bomb.docx", "word/document.xml", {"[Content_Types].xml": b"<Types/>"}),
        (
            "bomb.odt",
            "content.xml",
            {"mimetype": b"application/vnd.oasis.opendocument.text"},
        ),
        ("bomb.fb2.zip", "book.fb2", {}),
    ],
)
def test_zip_bombs_are_refused(tmp_path: Path, name: str, entry: str, others: dict) -> None:  # type: ignore[type-arg]
    path = _bomb(tmp_path / name, entry, others)
    with pytest.raises(BadBook, match="zip bombs look like this"):
        read_book(path)


def test_a_damaged_word_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "cut.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("word/document.xml", b"<w:document")
    with pytest.raises(BadBook, match=r"cut\.docx.*(could not be parsed|no text to narrate)"):
        read_book(path)


def test_a_damaged_pdf_is_refused_not_hung(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n%%EOF")
    with pytest.raises(BadBook, match="broken.pdf"):
        read_book(path)
