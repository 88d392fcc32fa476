"""Roman numerals that are numbers, for every language: headings, list items, regnal names.

A numeral is read only where its context marks it as a number, because the same letters are
often words ("I", "MIX", "CIVIL", "DID", "LIVID", "MIMIC"; malformed numerals are never read):

- after a heading word: "CHAPTER IX", "Book II", "Kapitel IV", "Chapitre IV", "Capítulo IV";
- at the start of a chunk, as a numbered heading or list item: "II. THE RED-HEADED LEAGUE",
  "IV: The Cylinder Opens", or a chunk that is only a numeral ("I", "XII."). A one-letter
  numeral there ("I.", "V.", "C.") is also an initial ("C. S. Lewis") or the pronoun, so it is
  read only before a colon, at the end of the chunk, or before a word in capitals;
- after a name, as a regnal number: "Charles II", "Louis XIV". Numerals of up to XL only, and
  a one-letter one ("Charles I", "Karl V.") only after a known regnal name, so "Then I" and
  "Malcolm X" stay as they are.

Numerals in running text without such a context ("a MIX of", "page xiv" without "p.") stay.
The words for the numbers come from the language module, so nothing here says "Roman".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from audiopub.book.spoken.common import Rule, match_case, roman_value, title_word, word_alternation

# Given names that rulers with "I", "V" or "X" after them bear, in the four languages.
REGNAL_NAMES = frozenset({
    "Alexander", "Alfonso", "Alfred", "Anne", "Catherine", "Charles", "Christian", "Clement",
    "Constantine", "Edward", "Elizabeth", "Ferdinand", "Francis", "Frederick", "George",
    "Gregory", "Gustav", "Henry", "Innocent", "Isabella", "James", "John", "Leo", "Leopold",
    "Louis", "Mary", "Napoleon", "Nicholas", "Otto", "Paul", "Peter", "Philip", "Pius",
    "Richard", "Robert", "Rudolf", "Stephen", "Victor", "William", "Friedrich", "Heinrich",
    "Karl", "Ludwig", "Wilhelm", "Franz", "Maximilian", "Henri", "François", "Napoléon",
    "Philippe", "Jean", "Guillaume", "Léon", "Pie", "Felipe", "Carlos", "Fernando", "Isabel",
    "Juan", "Enrique", "Pedro", "Jaime", "Luis", "Sancho", "Juana",
})  # fmt: skip


@dataclass(frozen=True)
class RomanWords:
    """How one language reads Roman numerals."""

    heading_words: Collection[str]  # "Chapter": a numeral after it is a cardinal
    cardinal: Callable[[int], str]
    regnal: Callable[[int, str], str]  # (number, name) → "the Second", "quatorze"
    # Words after which a numeral is a cardinal, not regnal: "World War II", "Mark IV".
    cardinal_after: Collection[str] = ()
    regnal_dot: bool = False  # German writes "Karl V." with an ordinal full stop


def roman_rules(words: RomanWords) -> list[Rule]:
    """The rules, in the order they must run, for one language."""
    heading = re.compile(
        rf"\b({word_alternation(list(words.heading_words))})(\s+)([IVXLCDM]+|[ivxlcdm]+)\b"
        r"(?![\w'’-])"
    )
    item = re.compile(r"^(\s*[\"'(]?)([IVXLCDM]+)(?=([.:)]|\s*$)(\s+\S+)?)")
    regnal = re.compile(
        r"\b([A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ]+)(\s+)([IVXL]+)\b"
        + (r"(\.(?=\s+[a-zà-ÿ,;]))?" if words.regnal_dot else "()")
        + r"(?![\w-])"
    )

    def say_heading(match: re.Match[str]) -> str:
        word, space, numeral = match.groups()
        value = roman_value(numeral)
        if value is None or not word[0].isupper():
            return match.group()
        return f"{title_word(word)}{space}{words.cardinal(value)}"

    def say_item(match: re.Match[str]) -> str:
        lead, numeral, mark, next_word = match.groups()
        value = roman_value(numeral)
        if value is None or value > 100:
            return match.group()
        if len(numeral) == 1 and mark == "." and next_word and not _capitals(next_word):
            return match.group()  # "I. think" is unlikely; "C. S. Lewis" is an initial
        return lead + match_case(words.cardinal(value), "A")

    def say_regnal(match: re.Match[str]) -> str:
        name, space, numeral, _dot = match.groups()
        value = roman_value(numeral)
        if value is None or value > 40:
            return match.group()
        if name in words.cardinal_after:
            return f"{name}{space}{words.cardinal(value)}"
        if len(numeral) == 1 and name not in REGNAL_NAMES:
            return match.group()
        return f"{name}{space}{words.regnal(value, name)}"

    return [(heading, say_heading), (item, say_item), (regnal, say_regnal)]


def _capitals(word: str) -> bool:
    """Is this a word in capitals ("SCANDAL", "A"), as a heading's title is?"""
    letters = word.strip().strip("\"'(")
    return bool(letters) and letters.isupper() and not letters.endswith(".")


def trigger(words: RomanWords) -> str:
    """A regex fragment that finds a heading numeral, for the quick check in `spoken`."""
    return rf"\b(?:{word_alternation(list(words.heading_words))})\s+[IVXLCDMivxlcdm]"
