"""`likely_names` and `audiopub names`: the words to check before a long run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from epub_factory import build_epub

from audiopub.book.epub.reader import read_epub
from audiopub.book.lexicons.names import NameCandidate, first_use, likely_names
from audiopub.book.models import Book, Chapter
from audiopub.cli import main

EPUBS = Path(__file__).parent / "data" / "epubs"


def _book(*paragraphs: str, language: str | None = "en", title: str = "One") -> Book:
    return Book("A Book", ("Ann Author",), language, (Chapter(0, title, (title, *paragraphs)),))


def _words(book: Book, **options: object) -> list[str]:
    return [c.word for c in likely_names(book, **options)]  # type: ignore[arg-type]


def test_a_rare_name_mid_sentence_is_found_with_its_count_and_first_sentence() -> None:
    book = _book(
        "The boy ran to Bagheera at dawn. He stayed.",
        "Then Bagheera's eyes shone, and Bagheera spoke.",
    )
    assert likely_names(book) == [NameCandidate("Bagheera", 3, "The boy ran to Bagheera at dawn.")]


def test_sentence_initial_and_quotation_initial_ordinary_words_are_not_names() -> None:
    book = _book(
        "Yesterday the wolves came. Meanwhile nothing stirred.",
        'He said, "Nevertheless we stay." She sighed: Perhaps it was so.',
    )
    assert likely_names(book) == []


def test_pronoun_roman_numerals_capitals_and_headings_are_not_names() -> None:
    book = _book(
        "Then I went; I'm sure I did, in Book XIV and part iv, iv and iv.",
        "We read CHAPTER headings and the R2D2 manual and saw a K there.",
        title="The Strange Adventure of Tumblewick Hall",
    )
    assert likely_names(book) == []


def test_ordinary_words_capitalised_in_titles_are_not_names() -> None:
    # "Quagmire" is rare, but written lower-case mid-sentence as often as capitalised.
    book = _book(
        "He fell into the Quagmire Song book.", "The quagmire was deep, and the quagmire was cold."
    )
    assert likely_names(book) == []


def test_common_capitalised_words_are_left_to_the_voice() -> None:
    assert likely_names(_book("We went to London on Monday with Mary.")) == []


def test_rare_lower_case_words_count_only_when_repeated() -> None:
    once = _book("He was full of curtiosity.")
    thrice = _book("He was full of curtiosity, such curtiosity, all curtiosity.")
    assert likely_names(once) == []
    assert [(c.word, c.count) for c in likely_names(thrice)] == [("curtiosity", 3)]


def test_ranked_by_frequency_and_limited() -> None:
    book = _book(
        "They met Akela once.",
        "They met Tabaqui, and Tabaqui met Mowgli.",
        "Then Mowgli, Mowgli and Mowgli ran.",
    )
    assert _words(book) == ["Mowgli", "Tabaqui", "Akela"]
    assert _words(book, limit=2) == ["Mowgli", "Tabaqui"]


def test_without_a_word_list_only_the_book_decides() -> None:
    book = _book(
        "They went to London with Mowgli.", "In London the london fog was thick.", language=None
    )
    assert _words(book) == ["Mowgli"]
    # a language wordfreq has no list for is treated the same, not as a neighbour
    assert _words(book, language="tlh") == ["Mowgli"]


def test_examples_are_trimmed_around_the_word() -> None:
    long_sentence = "And " + "so it went on and on, " * 20 + "until Bagheera came back at last."
    (candidate,) = likely_names(_book(long_sentence))
    assert len(candidate.example) <= 200 and "Bagheera" in candidate.example
    assert candidate.example.startswith("…")
    assert "Bagheera" in candidate.excerpt(40) and len(candidate.excerpt(40)) <= 40


def test_names_from_a_generated_epub(tmp_path: Path) -> None:
    path = build_epub(
        tmp_path / "b.epub",
        [
            ("Chapter I", ["The wolf found Mowgli by the river.", "Later Mowgli slept."]),
            ("Chapter II", ["Only Bagheera knew."]),
        ],
    )
    assert [(c.word, c.count) for c in likely_names(read_epub(path))] == [
        ("Mowgli", 2),
        ("Bagheera", 1),
    ]


def test_just_so_stories() -> None:
    words = _words(read_epub(EPUBS / "pg2781-just-so-stories.epub"), limit=40)
    for name in (
        "Taffy",
        "Tegumai",
        "Suleiman-bin-Daoud",
        "Stickly-Prickly",
        "Djinn",
        "Baviaan",
        "Parsee",
        "Kolokolo",
    ):
        assert name in words
    assert not {"The", "And", "Then", "Best", "Beloved", "I"} & set(words)


def test_names_command_prints_a_ranked_table(capsys: pytest.CaptureFixture[str]) -> None:
    path = EPUBS / "pg2781-just-so-stories.epub"
    assert main(["names", str(path), "--limit", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5
    rank, word, count, *example = lines[0].split()
    assert (rank, word, count) == ("1", "Taffy", "94")
    assert "Taffy" in " ".join(example)


def test_names_command_reports_a_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.epub"
    bad.write_text("not a zip")
    assert main(["names", str(bad)]) == 1
    assert "not an EPUB" in capsys.readouterr().err


def test_first_use_finds_the_first_sentence_with_a_word_or_pattern() -> None:
    book = _book(
        "Nobody came. The ship left with Captain Quillfeather aboard.",
        "Then quillfeather laughed.",
        title="Quillfeather",
    )
    assert first_use(book, re.compile(r"(?<!\w)quillfeather(?!\w)", re.IGNORECASE)) == (
        "Quillfeather",
        "The ship left with Captain Quillfeather aboard.",
    )  # not the heading
    assert first_use(book, re.compile(r"q\w+r laughed")) == (
        "quillfeather laughed",
        "Then quillfeather laughed.",
    )
    assert first_use(book, re.compile("x*")) is None  # matches nothing but empty text
    assert first_use(book, re.compile("Bagheera")) is None
