"""Books read as text are decoded as the standards say, whatever bytes they hold: byte-order
marks first, then UTF-8, then the declared or sniffed encoding (line by line only in a file of
two); control characters are left out with a note; deep Markdown nesting and scripts in
headings lose nothing and add nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from audiopub.book.formats.decoding import decode_text, looks_like_text
from audiopub.book.models import Book
from audiopub.book.reading import read_book
from audiopub.errors import BadBook


def _read(tmp_path: Path, name: str, data: bytes) -> Book:
    path = tmp_path / name
    path.write_bytes(data)
    return read_book(path)


def _text(book: Book) -> str:
    return " ".join(chapter.text for chapter in book.chapters)


@pytest.mark.parametrize(
    "control", ["\x1a", "\x07", "\x1b", "\x00", "\ufffe", "\x0b", "\x7f", "\x85"]
)
def test_control_characters_in_a_text_file_are_left_out_with_a_note(
    tmp_path: Path, control: str
) -> None:
    book = _read(tmp_path, "t.txt", f"CHAPTER I.\n\nThe {control}end.\n{control}".encode())
    assert [c.title for c in book.chapters] == ["CHAPTER I."]
    assert "The end." in _text(book)
    assert any("control character" in note for note in book.warnings)


def test_a_nul_after_the_first_bytes_is_left_out(tmp_path: Path) -> None:
    book = _read(tmp_path, "t.txt", b"CHAPTER I.\n\n" + b"Word. " * 800 + b"\x00Last.\n")
    assert _text(book).endswith("Word. Last.")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
@pytest.mark.parametrize("suffix", [".txt", ".md", ".html"])
def test_a_byte_order_mark_says_the_encoding(tmp_path: Path, encoding: str, suffix: str) -> None:
    text = {
        ".txt": "CHAPTER I.\n\nCafé naïve, Ærø.\n",
        ".md": "# Chapter One\n\nCafé naïve, Ærø.\n",
        ".html": "<html><body><h1>Chapter One</h1><p>Café naïve, Ærø.</p></body></html>",
    }[suffix]
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = "\ufeff".encode(encoding) + data
    assert "Café naïve, Ærø." in _text(_read(tmp_path, f"b{suffix}", data))


def test_an_fb2_in_utf16_is_read(tmp_path: Path) -> None:
    fb2 = (
        '<?xml version="1.0" encoding="UTF-16"?>'
        '<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0"><body><section>'
        "<title><p>Глава 1</p></title><p>Текст книги.</p></section></body></FictionBook>"
    )
    assert "Текст книги." in _text(_read(tmp_path, "b.fb2", fb2.encode("utf-16")))


def test_utf16_without_a_mark_is_told_by_its_zero_bytes(tmp_path: Path) -> None:
    data = "CHAPTER I.\n\nCafé naïve here.\n".encode("utf-16-le")
    assert "Café naïve here." in _text(_read(tmp_path, "b.txt", data))


def test_html_in_utf8_without_a_declaration_is_read_as_utf8(tmp_path: Path) -> None:
    page = "<!DOCTYPE html><html><body><h1>Café</h1><p>Café naïve.</p></body></html>"
    book = _read(tmp_path, "b.html", page.encode())
    assert book.chapters[0].title == "Café"
    assert "Café naïve." in _text(book)


def test_html_keeps_the_encoding_it_declares(tmp_path: Path) -> None:
    page = (
        '<html><head><meta charset="iso-8859-1"></head><body><h1>One</h1>'
        "<p>Café naïve.</p></body></html>"
    )
    assert "Café naïve." in _text(_read(tmp_path, "b.html", page.encode("latin-1")))


def test_markdown_in_utf8_is_read_as_utf8(tmp_path: Path) -> None:
    book = _read(tmp_path, "b.md", "# Chapter One\n\nNaïve café.\n".encode())
    assert "Naïve café." in _text(book)


def test_a_file_of_utf8_and_latin1_lines_reads_each_line_in_its_own(tmp_path: Path) -> None:
    data = "CHAPTER I.\n\nCafé one.\n".encode() + "Naïve two.\n".encode("latin-1")
    book = _read(tmp_path, "b.txt", data)
    assert "Café one. Naïve two." in _text(book)
    assert any("two encodings" in note for note in book.warnings)


def test_a_latin1_file_is_read_as_latin1_throughout(tmp_path: Path) -> None:
    book = _read(tmp_path, "b.txt", "CHAPTER I.\n\nCafé naïve.\n".encode("latin-1"))
    assert "Café naïve." in _text(book)
    assert book.warnings == ()


def test_an_fb2_that_says_utf8_but_is_in_windows_1251_is_read_and_says_so(
    tmp_path: Path,
) -> None:
    fb2 = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0"><body><section>'
        "<title><p>Глава 1</p></title><p>Это текст книги на русском языке.</p></section>"
        "</body></FictionBook>"
    )
    book = _read(tmp_path, "b.fb2", fb2.encode("cp1251"))
    assert "Это текст книги на русском языке." in _text(book)
    assert any("Windows-1251" in note for note in book.warnings)


def test_a_binary_file_is_still_not_a_book(tmp_path: Path) -> None:
    data = bytes(range(256)) * 16
    with pytest.raises(BadBook, match="is not a book Audiopub can read"):
        _read(tmp_path, "b.txt", data)
    assert not looks_like_text(data) and looks_like_text(b"Text with one \x00 in it.")


def test_decoding_drops_the_controls_and_counts_them() -> None:
    decoded = decode_text(b"a\x07b\tc\r\nd\x1b")
    assert decoded.text == "ab\tc\r\nd" and decoded.encoding == "utf-8"
    assert decoded.notes and "2 control characters" in decoded.notes[0]


def _nested_list(levels: int) -> str:
    return "".join("  " * level + "- x\n" for level in range(levels))


@pytest.mark.parametrize(
    "nesting",
    [
        _nested_list(10),
        _nested_list(200),
        "> " * 300 + "deep\n",
        "- > " * 300 + "deep\n",
        "1. " * 120 + "deep\n",
    ],
    ids=["list-10", "list-200", "quote-300", "list-and-quote-300", "ordered-120"],
)
def test_deep_markdown_nesting_keeps_the_chapters_after_it(tmp_path: Path, nesting: str) -> None:
    book = _read(tmp_path, "b.md", f"# One\n\nA.\n\n{nesting}\n# Two\n\nB.\n".encode())
    assert [c.title for c in book.chapters] == ["One", "Two"]
    assert book.chapters[1].text.endswith("B.")


def test_a_markdown_list_nested_past_the_limit_is_read_with_a_note(tmp_path: Path) -> None:
    book = _read(tmp_path, "b.md", f"# One\n\n{_nested_list(40)}\nEnd.\n".encode())
    assert _text(book).count("x") == 40
    assert any("nested more than" in note for note in book.warnings)


@pytest.mark.parametrize(
    ("name", "data"),
    [
        (
            "b.html",
            "<h1>Chapter One<script>document.title='pwn'</script></h1><p>Text.</p>"
            "<h1>Chapter Two<style>h1 {color: red}</style></h1><p>More.</p>",
        ),
        ("b.md", "# Chapter <script>alert(1)</script> One\n\nText.\n\n# Chapter Two\n\nMore.\n"),
    ],
)
def test_a_headings_script_is_not_its_title(tmp_path: Path, name: str, data: str) -> None:
    book = _read(tmp_path, name, data.encode())
    assert [c.title for c in book.chapters] == ["Chapter One", "Chapter Two"]
    assert "alert" not in _text(book) and "pwn" not in _text(book)


def test_a_div_left_open_in_the_nav_does_not_swallow_the_book(tmp_path: Path) -> None:
    page = (
        '<html><body><nav><div><a href="#c1">One</a> <a href="#c2">Two</a></nav>'
        '<h2 id="c1">One</h2><p>First text.</p><h2 id="c2">Two</h2><p>Second text.</p>'
        "</body></html>"
    )
    book = _read(tmp_path, "b.html", page.encode())
    assert [c.title for c in book.chapters] == ["One", "Two"]
    assert book.chapters[1].text.endswith("Second text.")


def test_an_fb2_in_utf8_with_a_few_stray_bytes_is_read_to_its_end(tmp_path: Path) -> None:
    fb2 = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0"><body><section>'
        "<title><p>Chapter 1</p></title><p>Café “one”. ** Last words here.</p></section>"
        "</body></FictionBook>"
    ).encode()
    book = _read(tmp_path, "b.fb2", fb2.replace(b"**", b"\x80\x81\xfe"))
    assert 'Café "one". Last words here.' in _text(book)  # quotes straightened as ever
    assert any("3 bytes that are not UTF-8" in note for note in book.warnings)


def test_a_character_reference_to_a_control_character_in_an_odt_is_left_out(
    tmp_path: Path,
) -> None:
    import zipfile

    content = (
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body>'
        '<office:text><text:h text:outline-level="1">One&#7;</text:h>'
        "<text:p>The bell&#7; rang.</text:p></office:text></office:body>"
        "</office:document-content>"
    )
    path = tmp_path / "b.odt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        archive.writestr("content.xml", content)
    book = read_book(path)
    assert book.chapters[0].title == "One" and "The bell rang." in _text(book)


def test_a_reversed_byte_order_mark_is_not_part_of_a_title(tmp_path: Path) -> None:
    page = "<html><head><title>&#xFFFE;The Book</title></head><body><h1>&#xFFFE;One</h1>"
    book = _read(tmp_path, "b.html", (page + "<p>Text.</p></body></html>").encode())
    assert book.title == "The Book" and book.chapters[0].title == "One"
