"""English number words every English rule shares: cardinals, ordinals, years, written amounts.

Kept apart from the rules so the money, date and unit modules can use them without importing
the module that runs them all.
"""

from __future__ import annotations

import re

from audiopub.book.spoken.common import digit_words, number_words

LANG = "en"

# A written number: "12", "1,250", "3.75", ".5" (never the tail of a longer number or a word).
NUM = r"(?<![\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"


def cardinal(value: int) -> str:
    return number_words(value, LANG)


def ordinal(value: int) -> str:
    return number_words(value, LANG, "ordinal")


def year(value: int) -> str:
    """Years as people say them: "nineteen ninety-nine", "two thousand and five"."""
    return number_words(value, LANG, "year") if 1000 <= value <= 2099 else cardinal(value)


def to_int(digits: str) -> int:
    return int(digits.replace(",", ""))


def number(text: str) -> str:
    """A written amount ("1,250", "3.75", "007") in words; four-digit years stay cardinals."""
    whole, _, decimals = text.partition(".")
    if len(whole) > 1 and whole.startswith("0"):
        words = digit_words(whole, LANG)
    else:
        words = cardinal(to_int(whole)) if whole else ""
    if decimals:
        words += " point " + digit_words(decimals, LANG)
    return words.strip()


def is_one(text: str) -> bool:
    return text.replace(",", "") in ("1", "1.0")


def counted(amount: str, one: str, many: str) -> str:
    """ "1" → "one metre", "2.5" → "two point five metres"."""
    return f"{number(amount)} {one if is_one(amount) else many}"


def code_digits(digits: str) -> str:
    """Digits of a code or phone number, one by one, with "oh" for a zero inside it as
    English speakers say it ("401" → "four oh one"); a leading zero is "zero"."""
    words = [digit_words(digit, LANG) for digit in digits if digit.isdigit()]
    return " ".join("oh" if word == "zero" and index else word for index, word in enumerate(words))


_DENOMINATORS = {2: ("half", "halves"), 4: ("quarter", "quarters")}


def fraction(numerator: int, denominator: int) -> str:
    """ "three quarters", "one twenty-eight-thousandth": a many-word ordinal is hyphenated."""
    if denominator in _DENOMINATORS:
        one, many = _DENOMINATORS[denominator]
    else:
        one = ordinal(denominator).replace(" ", "-")
        many = one + "s"
    return f"{cardinal(numerator)} {one if numerator == 1 else many}"


def and_a(numerator: int, denominator: int) -> str:
    """The part after "two and": "a half", "three quarters"."""
    part = fraction(numerator, denominator)
    return "a " + part.split(" ", 1)[1] if numerator == 1 else part


# What an amount is per ("$30/mo", "15/kg"): the word said after "per".
PER_UNITS = {
    "s": "second", "sec": "second", "second": "second", "min": "minute", "minute": "minute",
    "h": "hour", "hr": "hour", "hour": "hour", "d": "day", "day": "day", "night": "night",
    "wk": "week", "week": "week", "mo": "month", "mth": "month", "month": "month",
    "yr": "year", "year": "year", "annum": "annum", "kg": "kilogram", "g": "gram",
    "lb": "pound", "oz": "ounce", "t": "tonne", "l": "litre", "litre": "litre", "liter": "liter",
    "ml": "millilitre", "gal": "gallon", "m": "metre", "km": "kilometre", "mi": "mile",
    "mile": "mile", "ft": "foot", "sq ft": "square foot", "m2": "square metre",
    "m²": "square metre", "kWh": "kilowatt hour", "GB": "gigabyte", "MB": "megabyte",
    "unit": "unit", "item": "item", "piece": "piece", "person": "person", "head": "head",
    "share": "share", "seat": "seat", "ticket": "ticket", "page": "page", "word": "word",
    "copy": "copy", "pair": "pair", "dozen": "dozen", "user": "user", "capita": "capita",
}  # fmt: skip
PER_ALTERNATION = "|".join(re.escape(unit) for unit in sorted(PER_UNITS, key=len, reverse=True))


def per_words(unit: str) -> str:
    return PER_UNITS[unit]
