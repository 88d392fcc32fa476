"""The spoken-form table: tests/data/spoken_cases.tsv, one written text and its spoken form a
line, by language and category (money, currency, dates, times, fractions, ranges, units,
ordinals, codes, decades, numbers, book text, and text that must stay unchanged)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from audiopub.book.spoken import spoken_form

_TABLE = Path(__file__).parent / "data" / "spoken_cases.tsv"


def _cases() -> list[tuple[str, str, str, str]]:
    with _TABLE.open(encoding="utf-8", newline="") as file:
        lines = (line for line in file if not line.startswith("#"))
        reader = csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [(row["language"], row["category"], row["written"], row["spoken"]) for row in reader]


CASES = _cases()


def test_the_table_covers_every_language_and_unchanged_text() -> None:
    assert len(CASES) >= 300
    assert {language for language, *_ in CASES} == {"en", "de", "es", "fr"}
    unchanged = [written for _, category, written, spoken in CASES if written == spoken]
    assert len(unchanged) >= 10


@pytest.mark.parametrize(
    ("language", "category", "written", "spoken"),
    CASES,
    ids=[f"{language}-{category}-{index}" for index, (language, category, *_) in enumerate(CASES)],
)
def test_spoken_case(language: str, category: str, written: str, spoken: str) -> None:
    assert spoken_form(written, language) == spoken


@pytest.mark.parametrize("language", ["en", "de", "es", "fr"])
def test_spoken_forms_are_left_as_they_are(language: str) -> None:
    """What the stage says is final: running it again changes nothing."""
    for case_language, _category, _written, spoken in CASES:
        if case_language == language:
            assert spoken_form(spoken, language) == spoken, spoken
