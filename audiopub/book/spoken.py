"""The spoken form of a chunk: the words a narrator says for its written text.

"Dr. Watson paid £5 on 12 March 1850" is read "Doctor Watson paid five pounds on the twelfth
of March eighteen fifty". Engines get words, never symbols: espeak-ng (Piper) has rules of its
own for some numbers but not for currency, fractions, Roman numerals or most abbreviations,
and Supertonic reads characters.

Each supported language has its own rule module (`spoken_en`, `spoken_de`, `spoken_fr`,
`spoken_es`; English's money, dates and units have modules of their own). They share Roman
numerals (`spoken_roman`), currencies (`spoken_currency`), money in the continental languages
(`spoken_money`) and codes read digit by digit (`spoken_codes`). Any other language, or none,
gets only the language-neutral cleanups: vulgar fractions become digits ("½" → "1/2") and
primes become ASCII marks, which is what the text cleaner did before it kept them. Its numbers
stay digits for the engine's own rules; no English words are ever put into another language's text.

`spoken_form` is pure and never raises. Most prose has nothing to change, so a chunk without a
digit, symbol, capital-letter numeral or abbreviation candidate is returned as it is, after one
regex search.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from audiopub.book import spoken_de, spoken_en, spoken_es, spoken_fr
from audiopub.book.scripts import primary_subtag
from audiopub.book.spoken_common import VULGAR_CLASS, VULGAR_FRACTIONS

__all__ = ["spoken_form", "supported_languages"]

_MODULES = {"en": spoken_en, "de": spoken_de, "fr": spoken_fr, "es": spoken_es}

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
    return _SAY[key](text)


def supported_languages() -> tuple[str, ...]:
    """The primary language subtags that have rules of their own."""
    return tuple(_SAY)
