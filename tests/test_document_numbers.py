"""Numbers in a Word or OpenDocument file's markup (outline levels, counts of spaces) are read
as ASCII digits within bounds: "²", "³" or a value of thousands of digits is a number the file
doesn't give, never a traceback."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from lxml import etree

from audiopub.book.formats.attributes import whole_number
from audiopub.book.formats.odt import _own_text
from audiopub.book.models import Book
from audiopub.book.reading import read_book

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_ODT_MIMETYPE = "application/vnd.oasis.opendocument.text"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_BODY = [
    "The tide had turned before the boats came back, and the harbour filled with their noise.",
    "Nobody on the quay asked where they had been, for everybody already knew the answer.",
]
_HUGE = "7" * 5000  # over Python's 4,300-digit limit for int("…")


# --- the helper ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", 0),
        ("3", 3),
        (" 03\n", 3),  # XML Schema allows whitespace around an integer
        ("000000000000000000000000004", 4),
        ("9", 9),
        ("10", 9),  # past the maximum: the maximum
        (_HUGE, 9),
        ("0" * 5000 + "5", 5),
    ],
)
def test_ascii_digits_are_a_number_within_the_maximum(value: str, expected: int) -> None:
    assert whole_number(value, 9) == expected


@pytest.mark.parametrize(
    "value", [None, "", " ", "²", "³", "٣", "١٢", "𝟐", "-1", "+1", "1.5", "1e3", "one", "2 3"]
)
def test_anything_but_ascii_digits_is_no_number(value: str | None) -> None:
    assert whole_number(value, 9) is None


def test_a_long_value_is_bounded_without_converting_it() -> None:
    assert whole_number("9" * 1_000_000, 100) == 100
    assert whole_number("1" + "0" * 2, 100) == 100
    assert whole_number("101", 100) == 100


# --- Word -----------------------------------------------------------------------------------------


def _docx(path: Path, body: str, styles: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(
            "word/document.xml",
            f'<w:document xmlns:w="{_W}"><w:body>{body}</w:body></w:document>',
        )
        if styles is not None:
            zf.writestr("word/styles.xml", f'<w:styles xmlns:w="{_W}">{styles}</w:styles>')
    return path


def _paragraph(text: str, properties: str = "") -> str:
    return f"<w:p><w:pPr>{properties}</w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"


def _chapter_titles(book: Book) -> list[str]:
    return [chapter.title for chapter in book.chapters]


def _docx_with_outline(tmp_path: Path, value: str) -> Book:
    body = "".join(
        [
            _paragraph("The Harbour", f'<w:outlineLvl w:val="{value}"/>'),
            *(_paragraph(text) for text in _BODY),
            _paragraph("The Quay", '<w:outlineLvl w:val="0"/>'),
            *(_paragraph(text) for text in _BODY),
        ]
    )
    return read_book(_docx(tmp_path / "outline.docx", body))


def test_a_paragraph_outline_level_makes_a_chapter(tmp_path: Path) -> None:
    assert _chapter_titles(_docx_with_outline(tmp_path, "0")) == ["The Harbour", "The Quay"]


@pytest.mark.parametrize("value", ["²", "٣", _HUGE, "9"])
def test_a_paragraph_outline_level_that_is_no_heading_level(tmp_path: Path, value: str) -> None:
    assert "The Harbour" not in _chapter_titles(_docx_with_outline(tmp_path, value))


def _docx_with_style_outline(tmp_path: Path, value: str) -> Book:
    styles = (
        '<w:style w:styleId="Part"><w:name w:val="Part"/>'
        f'<w:pPr><w:outlineLvl w:val="{value}"/></w:pPr></w:style>'
        '<w:style w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>'
    )
    body = "".join(
        [
            _paragraph("The Harbour", '<w:pStyle w:val="Part"/>'),
            *(_paragraph(text) for text in _BODY),
            _paragraph("The Quay", '<w:pStyle w:val="Heading1"/>'),
            *(_paragraph(text) for text in _BODY),
        ]
    )
    return read_book(_docx(tmp_path / "styles.docx", body, styles))


def test_a_style_outline_level_makes_a_chapter(tmp_path: Path) -> None:
    assert _chapter_titles(_docx_with_style_outline(tmp_path, "0")) == ["The Harbour", "The Quay"]


@pytest.mark.parametrize("value", ["³", "١", _HUGE, "9"])
def test_a_style_outline_level_that_is_no_heading_level(tmp_path: Path, value: str) -> None:
    # "9" is Word's level for body text: a style that says so makes no headings.
    assert _chapter_titles(_docx_with_style_outline(tmp_path, value))[-1] == "The Quay"
    assert "The Harbour" not in _chapter_titles(_docx_with_style_outline(tmp_path, value))


# --- OpenDocument ---------------------------------------------------------------------------------


def _odt(path: Path, body: str) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", _ODT_MIMETYPE, compress_type=zipfile.ZIP_STORED)
        zf.writestr(
            "content.xml",
            f'<office:document-content xmlns:office="{_OFFICE}" xmlns:text="{_TEXT}">'
            f"<office:body><office:text>{body}</office:text></office:body>"
            "</office:document-content>",
        )
    return path


def _odt_with_levels(tmp_path: Path, first: str, second: str) -> Book:
    paragraphs = "".join(f"<text:p>{text}</text:p>" for text in _BODY)
    body = (
        f'<text:h text:outline-level="{first}">The Harbour</text:h>{paragraphs}'
        f'<text:h text:outline-level="{second}">The Quay</text:h>{paragraphs}'
    )
    return read_book(_odt(tmp_path / "levels.odt", body))


@pytest.mark.parametrize("value", ["1", "²", "٢", _HUGE, ""])
def test_an_odt_heading_with_any_outline_level_is_a_chapter(tmp_path: Path, value: str) -> None:
    # A level the file doesn't give in ASCII digits is level 1, as a missing one is.
    assert _chapter_titles(_odt_with_levels(tmp_path, value, "1")) == ["The Harbour", "The Quay"]


@pytest.mark.parametrize("count", ["3", "¹", "٣", _HUGE])
def test_odt_spaces_with_any_count_are_read(tmp_path: Path, count: str) -> None:
    body = (
        f'<text:h>The Harbour</text:h><text:p>Wide<text:s text:c="{count}"/>gap. {_BODY[0]}'
        f"</text:p><text:p>{_BODY[1]}</text:p>"
    )
    book = read_book(_odt(tmp_path / "spaces.odt", body))
    assert book.chapters[0].paragraphs[1].startswith("Wide gap.")  # spaces are tidied later


@pytest.mark.parametrize(
    ("count", "spaces"), [("3", 3), ("0", 0), ("¹", 1), ("٣", 1), (_HUGE, 100)]
)
def test_odt_spaces_are_counted_in_ascii_digits(count: str, spaces: int) -> None:
    paragraph = etree.fromstring(
        f'<text:p xmlns:text="{_TEXT}">Wide<text:s text:c="{count}"/>gap</text:p>'
    )
    assert _own_text(paragraph) == "Wide" + " " * spaces + "gap"
