"""Pieces every language's spoken-form rules share: number words, Roman numerals, full stops.

Number words come from num2words; this module only makes them safe to call (huge numbers are
read digit by digit, commas between groups go so engines don't pause inside a number) and
cached, since books repeat the same small numbers. Roman numerals are parsed strictly, so
words such as "CIVIL", "DID" or "LIVID" are never numbers. Whether a numeral is a number in
its context is each language's decision, not this module's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from num2words import num2words

Replacement = Callable[[re.Match[str]], str] | str
Rule = tuple[re.Pattern[str], Replacement]

# Longer numbers are IDs or serials, not amounts: read them digit by digit.
_MAX_DIGITS = 15

_ROMAN = re.compile(r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}

# Unicode vulgar fractions (normalise_text keeps them): numerator, denominator.
VULGAR_FRACTIONS = {
    "½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5),
    "⅖": (2, 5), "⅗": (3, 5), "⅘": (4, 5), "⅙": (1, 6), "⅚": (5, 6), "⅐": (1, 7),
    "⅛": (1, 8), "⅜": (3, 8), "⅝": (5, 8), "⅞": (7, 8), "⅑": (1, 9), "⅒": (1, 10),
    "↉": (0, 3),
}  # fmt: skip
VULGAR_CLASS = "".join(VULGAR_FRACTIONS)

# What may follow a full stop that ends a sentence: spaces, opening quotes, then a capital.
_CLOSING = "\"'’”)]»"
_SENTENCE_FOLLOWS = re.compile(r"\s+[\"'(\[«“‘¿¡]*[A-ZÀ-ÖØ-ÞĀ-Ž0-9]")


def roman_value(numeral: str) -> int | None:
    """The value of a well-formed Roman numeral (all upper or all lower case), else None."""
    if not numeral or not (numeral.isupper() or numeral.islower()):
        return None
    upper = numeral.upper()
    if not _ROMAN.fullmatch(upper):
        return None
    total = 0
    for char, following in zip(upper, upper[1:] + " "):
        value = _ROMAN_VALUES[char]
        total += -value if following != " " and _ROMAN_VALUES[following] > value else value
    return total


@lru_cache(maxsize=8192)
def number_words(value: int, lang: str, to: str = "cardinal") -> str:
    """`value` in words in `lang` ("cardinal", "ordinal" or "year"), without commas."""
    if abs(value) >= 10**_MAX_DIGITS:
        return digit_words(str(abs(value)), lang)
    try:
        words = num2words(value, lang=lang, to=to)
    except (ArithmeticError, NotImplementedError, ValueError, TypeError, KeyError, IndexError):
        words = num2words(value, lang=lang)
    return words.replace(",", "")


def digit_words(digits: str, lang: str) -> str:
    """ "0451" → "zero four five one": each digit on its own."""
    return " ".join(number_words(int(digit), lang) for digit in digits if digit.isdigit())


def sentence_stop(match: re.Match[str], end: int | None = None) -> str:
    """ "." when the full stop just before `end` (default: the match's end) also ends the
    sentence, so replacing "etc." keeps it: at the end of the text or before a capital."""
    text = match.string
    end = match.end() if end is None else end
    # Closing quotes or brackets after the stop still end the sentence: "at 7s. 6d.'"
    while end < len(text) and text[end] in _CLOSING:
        end += 1
    if end >= len(text) or not text[end:].strip():
        return "."
    return "." if _SENTENCE_FOLLOWS.match(text, end) else ""


def spaced(match: re.Match[str], words: str) -> str:
    """`words` with a space added where the match touched a letter or digit ("B12" → "B
    twelve"), so the words never run into their neighbours."""
    text, start, end = match.string, match.start(), match.end()
    if start > 0 and text[start - 1].isalnum():
        words = " " + words
    if end < len(text) and text[end].isalnum():
        words += " "
    return words


def match_case(word: str, model: str) -> str:
    """`word` capitalised like `model`'s first letter ("no." → "number", "No." → "Number")."""
    return word[:1].upper() + word[1:] if model[:1].isupper() else word


def title_word(word: str) -> str:
    """A heading word as a narrator says it: "CHAPTER" → "Chapter", "Book" stays."""
    return word.capitalize() if word.isupper() and len(word) > 1 else word


def apply_rules(text: str, rules: Sequence[Rule]) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


# Unit symbols written alike in the languages that read units with babel → the CLDR unit
# whose long names babel has in each ("km" → "length-kilometer"). Each language adds the
# symbols only it writes ("PS" in German, "seg" in Spanish).
UNIT_IDS: dict[str, str] = {
    "km": "length-kilometer", "m": "length-meter", "cm": "length-centimeter",
    "mm": "length-millimeter", "µm": "length-micrometer", "mi": "length-mile", "ft": "length-foot",
    "kg": "mass-kilogram", "g": "mass-gram", "mg": "mass-milligram", "t": "mass-tonne",
    "lb": "mass-pound", "lbs": "mass-pound", "oz": "mass-ounce", "l": "volume-liter",
    "L": "volume-liter", "ml": "volume-milliliter", "cl": "volume-centiliter",
    "dl": "volume-deciliter", "m³": "volume-cubic-meter", "cm³": "volume-cubic-centimeter",
    "km²": "area-square-kilometer", "m²": "area-square-meter", "cm²": "area-square-centimeter",
    "ha": "area-hectare", "km/h": "speed-kilometer-per-hour", "m/s": "speed-meter-per-second",
    "mph": "speed-mile-per-hour", "h": "duration-hour", "min": "duration-minute",
    "s": "duration-second", "ms": "duration-millisecond", "kWh": "energy-kilowatt-hour",
    "kcal": "energy-kilocalorie", "W": "power-watt", "kW": "power-kilowatt", "V": "electric-volt",
    "Hz": "frequency-hertz", "kHz": "frequency-kilohertz", "MHz": "frequency-megahertz",
    "°C": "temperature-celsius", "°F": "temperature-fahrenheit", "MB": "digital-megabyte",
    "GB": "digital-gigabyte",
}  # fmt: skip


def word_alternation(words: Sequence[str]) -> str:
    """A regex alternation of literal words, longest first so "Mrs" wins over "Mr"."""
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


def comma_decimal(text: str, lang: str, comma_word: str) -> str:
    """A number written the continental way ("1.250", "10 000", "3,75") in words."""
    whole, _, decimals = text.partition(",")
    whole = whole.replace(".", "").replace(" ", "")
    if len(whole) > 1 and whole.startswith("0"):
        words = digit_words(whole, lang)
    else:
        words = number_words(int(whole or "0"), lang)
    if decimals:
        words += f" {comma_word} " + digit_words(decimals, lang)
    return words


def fraction_words(
    char: str,
    named: dict[tuple[int, int], str],
    cardinal: Callable[[int], str],
    ordinal: Callable[[int], str],
) -> str:
    """A vulgar fraction in words: `named` ones as they are said ("un demi"), the rest as a
    cardinal and a plural ordinal ("cinq huitièmes"), the French and Spanish way."""
    return fraction_of(*VULGAR_FRACTIONS[char], named, cardinal, ordinal)


def fraction_of(
    numerator: int,
    denominator: int,
    named: dict[tuple[int, int], str],
    cardinal: Callable[[int], str],
    ordinal: Callable[[int], str],
) -> str:
    """ "1/2" → "un demi", "5/8" → "cinq huitièmes": `named` ones as they are said, the rest
    as a cardinal and an ordinal, plural after more than one."""
    if (numerator, denominator) in named:
        return named[numerator, denominator]
    return f"{cardinal(numerator)} {ordinal(denominator)}{'s' if numerator > 1 else ''}"


def mixed_number_words(
    whole: str,
    char: str,
    conjunction: str,
    half: str,
    fraction: Callable[[str], str],
    cardinal: Callable[[int], str],
) -> str:
    """ "2½" → "deux et demi" / "dos y medio": the whole number, the conjunction, the rest."""
    rest = half if char == "½" else fraction(char)
    return f"{cardinal(int(whole))} {conjunction} {rest}"


def unit_rule(
    units: Mapping[str, tuple[str, str]], number: Callable[[str], str], one_words: Sequence[str]
) -> tuple[re.Pattern[str], Callable[[re.Match[str]], str]]:
    """A number followed by one of `units` ({abbreviation: (one, many)}) and how it is said:
    "1 km" → "un kilómetro", "3 km" → "tres kilómetros". `one_words` are the number's words
    for 1, said "un" before the unit."""
    pattern = re.compile(
        r"(?<![\w.,])(\d{1,3}(?:[ .]\d{3})+(?:,\d+)?|\d+(?:,\d+)?)\s?"
        rf"({word_alternation(list(units))})(?![\w/])"
    )

    def say(match: re.Match[str]) -> str:
        amount, unit = match.groups()
        one, many = units[unit]
        words = number(amount)
        return f"un {one}" if words in one_words else f"{words} {many}"

    return pattern, say
