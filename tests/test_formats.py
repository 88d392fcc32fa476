"""Books in every format other than EPUB (audiopub.book.reading), on real documents: the
opening of The War of the Worlds written as text, Markdown, HTML, Word, OpenDocument, FB2 and
PDF by scripts/make_test_documents.py."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from documents import make_documents, script

from audiopub import settings
from audiopub.book.formats.assemble import build_book, is_heading_text
from audiopub.book.formats.pdf import Line, Page, book_text
from audiopub.book.models import Book
from audiopub.book.reading import BOOK_SUFFIXES, UPLOAD_TYPES, read_book
from audiopub.book.text import normalise_text
from audiopub.cli import main
from audiopub.errors import BadBook

FORMATS = ["txt", "md", "html", "docx", "odt", "fb2", "fb2.zip", "pdf"]


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_documents(tmp_path_factory.mktemp("documents"))


@pytest.fixture(scope="module")
def source() -> list:  # type: ignore[type-arg]
    return script().source_chapters()


@pytest.fixture(scope="module")
def books(documents: dict[str, Path]) -> dict[str, Book]:
    return {kind: read_book(documents[kind]) for kind in FORMATS}


def _words(text: str) -> list[str]:
    return re.findall(r"[\w']+", normalise_text(text).casefold())


@pytest.mark.parametrize("kind", FORMATS)
def test_each_format_reads_its_chapters_whole_and_in_order(
    kind: str, books: dict[str, Book], source: list
) -> None:  # type: ignore[type-arg]
    book = books[kind]
    assert book.title == "The War of the Worlds"
    if kind != "md":
        assert book.authors == ("H. G. Wells",)
    narrated = [book.chapters[i - 1] for i in book.default_selection]
    assert len(narrated) == len(source)
    for chapter, original in zip(narrated, source):
        assert original.title in chapter.title
        assert re.search(r"\b(?:I|II|III)\b", chapter.title)
        # Every word, in order: nothing lost, nothing from elsewhere (running heads, page
        # numbers, notes, the printed contents) in between.
        expected = [w for p in original.paragraphs for w in _words(p)]
        assert [w for p in chapter.paragraphs[1:] for w in _words(p)] == expected
        assert len(chapter.paragraphs) == len(original.paragraphs) + 1  # heading, paragraphs
    # A title page where the file has one is listed, not narrated.
    assert all(c.front_matter for c in book.chapters if c not in narrated)


def test_the_text_file_leaves_out_gutenberg_boilerplate_contents_and_italic_marks(
    books: dict[str, Book],
) -> None:
    book = books["txt"]
    text = "\n".join(c.text for c in book.chapters)
    assert "Gutenberg" not in text
    assert "Section 1" not in text and "Redistributing" not in text
    assert "_" not in text
    assert book.language == "en"
    assert text.count("The Falling Star") == 1  # the heading, not the contents line too


def test_the_pdf_is_read_without_running_heads_and_page_numbers(
    documents: dict[str, Path], books: dict[str, Book]
) -> None:
    book = books["pdf"]
    for chapter in book.chapters:
        for paragraph in chapter.paragraphs:
            assert "THE WAR OF THE WORLDS" not in paragraph
            assert not re.fullmatch(r"\d+", paragraph)
    text = " ".join(c.text for c in book.chapters)
    hyphenated = documents["pdf"].with_suffix(".hyphenated").read_text("utf-8").split()
    assert hyphenated  # the writer did split words at line ends
    for word in hyphenated:
        assert re.search(rf"\b{word}\b", text)
    assert not re.search(r"[a-z]- [a-z]", text)


def test_a_scanned_pdf_is_refused_with_a_reason(documents: dict[str, Path]) -> None:
    with pytest.raises(BadBook, match=r"no text layer.*pictures.*OCR"):
        read_book(documents["scan"])


def test_a_pdf_over_the_page_limit_or_time_limit_is_refused(
    documents: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "PDF_MAX_PAGES", 2)
    with pytest.raises(BadBook, match="more than 2 pages"):
        read_book(documents["pdf"])
    monkeypatch.setattr(settings, "PDF_MAX_PAGES", 3_000)
    monkeypatch.setattr(settings, "PDF_MAX_SECONDS", 0.05)
    with pytest.raises(BadBook, match=r"took over 0 s"):
        read_book(documents["pdf"])


def test_a_pdf_that_needs_too_much_memory_is_refused(
    documents: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "PDF_MAX_MEMORY_BYTES", 40_000_000)
    with pytest.raises(BadBook, match=r"needed more than 40\.0 MB of memory"):
        read_book(documents["pdf"])


def test_a_pdf_without_an_outline_has_chapters_at_its_larger_lines() -> None:
    body = "It was a dark and stormy night; the rain fell in torrents."
    pages = [
        Page(
            612,
            792,
            [
                Line(72, 700, 300, 718, f"Chapter {n}: The Storm", 18.0),
                *[Line(72, 680 - 14 * i, 540, 691 - 14 * i, body, 11.0) for i in range(10)],
            ],
        )
        for n in (1, 2)
    ]
    book = build_book(book_text(pages, [], "storm.pdf"), "storm.pdf", "storm")
    assert [c.title for c in book.chapters] == ["Chapter 1: The Storm", "Chapter 2: The Storm"]
    assert book.chapters[0].paragraphs[1].count("dark and stormy") == 10


def test_a_kindle_book_without_calibre_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("ebook-convert"):
        pytest.skip("Calibre is installed here")
    book = tmp_path / "book.azw3"
    book.write_bytes(b"\0" * 60 + b"BOOKMOBI" + b"\0" * 200)
    with pytest.raises(BadBook, match=r"book\.azw3: .*ebook-convert.*install Calibre"):
        read_book(book)


def test_what_is_not_a_book_is_named(tmp_path: Path) -> None:
    binary = tmp_path / "x.bin"
    binary.write_bytes(b"\x00\x01\x02garbage")
    with pytest.raises(BadBook, match="not a book Audiopub can read"):
        read_book(binary)
    old_word = tmp_path / "x.doc"
    old_word.write_bytes(b"\xd0\xcf\x11\xe0" + b"\0" * 100)
    with pytest.raises(BadBook, match=r"old Word \(\.doc\).*save it as \.docx"):
        read_book(old_word)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n  \n")
    with pytest.raises(BadBook, match="no text to narrate"):
        read_book(empty)


def test_the_format_comes_from_the_bytes_or_the_given_name(
    documents: dict[str, Path], tmp_path: Path
) -> None:
    # An upload is kept under a random name: the person's name tells a text file's format.
    kept = tmp_path / "0123abcd.epub"
    kept.write_bytes(documents["md"].read_bytes())
    book = read_book(kept, "book.md")
    assert [c.title for c in book.chapters][1].startswith("Chapter I:")
    pdf = tmp_path / "upload"
    pdf.write_bytes(documents["pdf"].read_bytes())
    assert read_book(pdf).chapters[0].title.startswith("Chapter I:")


@pytest.mark.parametrize(
    "text",
    [
        "CHAPTER I.",
        "Chapter 12",
        "CHAPTER XIV. The Fight",
        "BOOK TWO",
        "Book One: The Coming of the Martians",
        "I.",
        "XII",
        "Kapitel 3",
        "Chapitre III",
        "Capítulo 2",
        "PROLOGUE",
        "Part the First",
        "I. A SCANDAL IN BOHEMIA",
        "XII. THE ADVENTURE OF THE COPPER BEECHES",
    ],
)
def test_headings_in_the_text_are_found(text: str) -> None:
    assert is_heading_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "chapter 12 of the act",
        "Chapter 12 of the act says that nobody may sell a horse on a Sunday, and nobody did.",
        "I said so.",
        "I. Then we went home.",
        "It was the best of times.",
        "",
    ],
)
def test_sentences_are_not_headings(text: str) -> None:
    assert not is_heading_text(text)


def test_chapters_lists_what_convert_numbers(
    documents: dict[str, Path], books: dict[str, Book], capsys: pytest.CaptureFixture[str]
) -> None:
    for kind in ("txt", "pdf"):
        assert main(["chapters", str(documents[kind])]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0] == "The War of the Worlds by H. G. Wells"
        rows = [line.split(None, 1) for line in out[1:]]
        book = books[kind]
        assert [int(number) for number, _ in rows] == [c.index + 1 for c in book.chapters]
        for (_, rest), chapter in zip(rows, book.chapters):
            assert rest.startswith(chapter.title[:50])
            assert f"{chapter.char_count:,} chars" in rest
        assert "title page" in out[1] if book.chapters[0].front_matter else True


def test_the_upload_accepts_every_format() -> None:
    accepted = UPLOAD_TYPES.split(",")
    for suffix in BOOK_SUFFIXES:
        assert suffix in accepted
    assert "application/pdf" in accepted


def test_the_help_names_every_format_read(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    said = " ".join(capsys.readouterr().out.split())  # as one line, however argparse wraps it
    assert "EPUBs into" not in said
    for name in ("EPUB", "PDF", "Word", "OpenDocument", "FB2", "HTML", "Markdown", "plain text"):
        assert name in said
    assert "convert books into chapterised .m4b files" in said
