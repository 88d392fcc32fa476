"""`audiopub spoken`: the spoken-form stage on lines of text, from arguments or standard input,
and on whole chapters of real books."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from audiopub.book.epub.reader import read_epub
from audiopub.cli import main

_EPUBS = Path(__file__).parent / "data" / "epubs"
# What must never be left for an engine to read in English: digits and currency symbols. Codes
# read digit by digit come out as digit words, so no digit is right anywhere.
_LEFT_OVER = re.compile(r"[\d£$€¥₩₹]")
# Half-read forms: old money marks after a number in words ("ten s.", "four d."), and a year's
# apostrophe left before its words ("'eighty-five").
_TENS = "ten|eleven|twelve|teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_HALF_READ = re.compile(
    rf"\b(?:one|two|three|four|five|six|seven|eight|nine|{_TENS}) [sd]\.|['’](?:{_TENS})"
)


def test_each_argument_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spoken", "It cost $2.5 million.", "Due june 30."]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "It cost two point five million dollars.",
        "Due June thirtieth.",
    ]


@pytest.mark.parametrize("arguments", [["spoken"], ["spoken", "-"]])
def test_standard_input_line_by_line(
    arguments: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("Am 2. Mai.\n\nEs kostet €1 million.\n"))
    assert main([*arguments, "--language", "de"]) == 0
    assert capsys.readouterr().out == "Am zweiten Mai.\n\nEs kostet eine Million Euro.\n"


@pytest.mark.parametrize(
    ("book", "title"),
    [
        ("pg1661-adventures-of-sherlock-holmes.epub", "VI. THE MAN WITH THE TWISTED LIP"),
        ("pg1661-adventures-of-sherlock-holmes.epub", "V. THE FIVE ORANGE PIPS"),
        ("se-war-of-the-worlds.epub", "I: The Eve of the War"),
    ],
)
def test_a_real_chapter_has_no_digit_or_currency_symbol_left(
    book: str, title: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    read = read_epub(_EPUBS / book)
    chapter = next(chapter for chapter in read.chapters if chapter.title.startswith(title))
    lines = [" ".join(paragraph.split()) for paragraph in chapter.paragraphs]
    assert len(re.findall(r"\d+|[£$]", " ".join(lines))) >= 10  # a chapter with numbers in it
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    assert main(["spoken", "--language", read.language or "en"]) == 0
    spoken = capsys.readouterr().out.splitlines()
    assert len(spoken) == len(lines)
    left = [line for line in spoken if _LEFT_OVER.search(line) or _HALF_READ.search(line)]
    assert not left
    assert sum(a != b for a, b in zip(lines, spoken, strict=True)) >= 5
