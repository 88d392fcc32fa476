"""Numbers longer than any quantity in the spoken-form stage: read digit by digit in every
language and every context (money, units, ordinals, dates, fractions…), never converted to an
int (Python refuses one of over 4,300 digits), and the text around them still read."""

from __future__ import annotations

import io
import re

import pytest

from audiopub.book.spoken import spoken_form
from audiopub.cli import main

LANGUAGES = ["en", "de", "fr", "es"]
_HUGE = "7" * 5000
_SEVENS = {"en": "seven", "de": "sieben", "fr": "sept", "es": "siete"}
_DIGIT = re.compile(r"\d")

# Where a language's rules read a number: each with a 5,000-digit one in it.
_CONTEXTS = [
    _HUGE,
    "1" + ",777" * 1700,  # thousands grouped the English way
    "1" + ".777" * 1700,  # and the continental ways
    "1" + " 777" * 1700,
    "1" + "\u00a0777" * 1700,
    "٣" * 5000,  # digits of another script, which int() reads too
    "3." + _HUGE,  # a decimal part
    "3," + _HUGE,
    f"${_HUGE}",
    f"£{_HUGE}.50",
    f"€{_HUGE},50",
    f"{_HUGE} €",
    f"{_HUGE} Mio. €",
    f"${_HUGE} million",
    f"{_HUGE}th",
    f"{_HUGE}e",
    f"{_HUGE}.",
    f"{_HUGE}%",
    f"{_HUGE} km",
    f"{_HUGE}½",
    f"{_HUGE} 1/2",
    f"1/{_HUGE}",
    f"{_HUGE}/{_HUGE}",
    f"{_HUGE}:1",
    f"{_HUGE}-{_HUGE}",
    f"-{_HUGE}",
    f"v1.{_HUGE}",
    f"No. {_HUGE}",
    f"Room {_HUGE}",
    f"call {_HUGE}",
    f"{_HUGE}B",
    f"AB{_HUGE}",
    f"12 March {_HUGE}",
    f"12.3.{_HUGE}",
    f"{_HUGE}s. 6d.",
    f"{_HUGE} Uhr",
    f"Chapter {_HUGE}",
]


@pytest.mark.parametrize("language", LANGUAGES)
def test_five_thousand_digits_are_read_digit_by_digit(language: str) -> None:
    spoken = spoken_form(_HUGE, language)
    assert spoken.split() == [_SEVENS[language]] * 5000


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("text", _CONTEXTS, ids=lambda text: text.replace(_HUGE, "N")[:20])
def test_a_huge_number_in_any_context_leaves_no_digit(text: str, language: str) -> None:
    assert not _DIGIT.search(spoken_form(text, language))


@pytest.mark.timeout(60)  # linear: about a second each; a quadratic reading never ends
@pytest.mark.parametrize("language", LANGUAGES)
def test_a_million_digits_are_read(language: str) -> None:
    # Read once, in about a second: no rule scans the million words it becomes.
    assert not _DIGIT.search(spoken_form("7" * 1_000_000, language))


def test_the_text_around_a_huge_number_is_still_read() -> None:
    spoken = spoken_form(f"It cost $5 on 12 March, then {_HUGE} pounds, and 3 more.", "en")
    assert spoken.startswith("It cost five dollars on the twelfth of March, then seven seven")
    assert spoken.endswith("seven pounds, and three more.")


def test_a_huge_number_touching_a_word_is_spaced_from_it() -> None:
    assert spoken_form(f"AB{'7' * 40}x", "en") == "AB " + " ".join(["seven"] * 40) + " x"


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        # Numbers of up to 32 digits are the rules' to read, as before.
        ("1,250", "one thousand two hundred and fifty"),
        ("3.14159", "three point one four one five nine"),
        (
            "3.14159265358979323846",
            "three point one four one five nine two six five three five eight nine seven nine "
            "three two three eight four six",
        ),
        ("1" * 16, " ".join(["one"] * 16)),
    ],
)
def test_numbers_up_to_the_limit_are_read_as_before(text: str, spoken: str) -> None:
    assert spoken_form(text, "en") == spoken


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_spoken_command_reads_a_huge_number(
    language: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{_HUGE}\nIt is {_HUGE} km away.\n"))
    assert main(["spoken", "--language", language]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert not any(_DIGIT.search(line) for line in lines)
