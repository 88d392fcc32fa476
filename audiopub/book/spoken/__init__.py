"""The spoken form of a chunk: the words a narrator says for its written text.

"Dr. Watson paid £5 on 12 March 1850" is read "Doctor Watson paid five pounds on the twelfth
of March eighteen fifty". Engines get words, never symbols: espeak-ng (Piper) has rules of its
own for some numbers but not for currency, fractions, Roman numerals or most abbreviations,
and Supertonic reads characters.

Each supported language has its own rule module in this package (`en`, `de`, `fr`, `es`;
English's and Spanish's money, dates, units and number words have modules of their own). They
share the rule machinery (`common`), Roman numerals (`roman`), currencies (`currency`), money
in the continental languages (`money`) and codes read digit by digit (`codes`). Any other
language, or none, gets only the language-neutral cleanups: vulgar fractions become digits
("½" → "1/2") and primes become ASCII marks, which is what the text cleaner did before it kept
them. Its numbers stay digits for the engine's own rules; no English words are ever put into
another language's text.

`spoken_form` is pure and never raises. Most prose has nothing to change, so a chunk without a
digit, symbol, capital-letter numeral or abbreviation candidate is returned as it is, after one
regex search. A number longer than any quantity (a row of thousands of digits) is read digit by
digit before the rules run, and they run on the text around it: no rule converts it to an int
(Python refuses one of over 4,300 digits), and none scans its words.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from audiopub.book.scripts import primary_subtag
from audiopub.book.spoken import de, en, es, fr
from audiopub.book.spoken.common import VULGAR_CLASS, VULGAR_FRACTIONS, digit_words, spaced

__all__ = ["spoken_form", "supported_languages"]

_MODULES = {"en": en, "de": de, "fr": fr, "es": es}

# Anything a rule of any language could change: digits, symbols, a capital-letter numeral of
# two letters or more, a one-letter numeral after a name, or a numeral that starts the chunk.
# Each language adds its abbreviations.
_COMMON = (
    rf"[\d{VULGAR_CLASS}°′″£$€%&§#×−]"
    r"|\b[IVXLCDM]{2,}\b|\b[A-ZÀ-Þ][a-zà-ÿ]+\s+[IVXL]\b"
    r"|^\s*[\"'(]?[IVXLCDM]+(?:[.:)]|\s*$)"
)
_CANDIDATE = {key: re.compile(f"{_COMMON}|{module.TRIGGER}") for key, module in _MODULES.items()}
_SAY: dict[str, Callable[[str], str]] = {key: module.say for key, module in _MODULES.items()}

# A written number: digits with grouping or decimal marks between them ("1,250.5", "1.250,5",
# "10 000"; a space groups only before three digits), as any language's rules may join them.
_WRITTEN_NUMBER = re.compile(r"\d+(?:(?:[.,]|[ \u00a0\u202f](?=\d{3}(?!\d)))\d+)*")
# Up to this many digits a number is the rules' to read (they read one of over 15 digits digit
# by digit, keeping "point" before decimals); a longer one is read digit by digit here.
_LONGEST_NUMBER = 32

_NEUTRAL = {
    **{char: f"{numerator}/{denominator}" for char, (numerator, denominator) in
       VULGAR_FRACTIONS.items()},
    "′": "'",
    "″": '"',
}  # fmt: skip
_NEUTRAL_TABLE = str.maketrans(_NEUTRAL)


def _language_key(language: str | None) -> str | None:
    """ "en-US", "EN_gb", "fr" → the primary subtag, if its rules exist."""
    if not language:
        return None
    primary = primary_subtag(language)
    return primary if primary in _SAY else None


def spoken_form(text: str, language: str | None) -> str:
    """The words a narrator says for `text` (one chunk, written form), in `language`.

    `language` is a BCP 47 tag ("en-US", "de", "fr-FR", "es"). An unsupported language or None
    gets only the language-neutral cleanups, never another language's words.
    """
    key = _language_key(language)
    if key is None:
        return text.translate(_NEUTRAL_TABLE)
    if not _CANDIDATE[key].search(text):
        return text
    return _around_long_numbers(text, key)


def _around_long_numbers(text: str, key: str) -> str:
    """The language's rules on `text`, each number of over `_LONGEST_NUMBER` digits read digit
    by digit instead, and the rules run on the text between them."""
    say = _SAY[key]
    out: list[str] = []
    start = 0
    for match in _WRITTEN_NUMBER.finditer(text):
        written = match.group()
        if len(written) <= _LONGEST_NUMBER or _digit_count(written) <= _LONGEST_NUMBER:
            continue
        out.append(say(text[start : match.start()]))
        out.append(spaced(match, digit_words(written, key)))
        start = match.end()
    out.append(say(text[start:]))
    return "".join(out)


def _digit_count(written: str) -> int:
    return sum(char.isdigit() for char in written)


def supported_languages() -> tuple[str, ...]:
    """The primary language subtags that have rules of their own."""
    return tuple(_SAY)
