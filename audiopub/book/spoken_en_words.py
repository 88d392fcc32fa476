"""English number words every English rule shares: cardinals, ordinals, years, written amounts.

Kept apart from the rules so the money, date and unit modules can use them without importing
the module that runs them all.
"""

from __future__ import annotations

from audiopub.book.spoken_common import digit_words, number_words

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
