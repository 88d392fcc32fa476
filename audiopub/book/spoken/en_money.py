"""English money: "$4.50", "£ 30,000", "¥30 billion", "USD 5", "$250-$300", "£3 10s. 6d.".

The amount comes first and the currency last, as a narrator says it, and a scale word belongs
to the amount: "$2.5 million" is "two point five million dollars". Hundredths are said as
cents or pence where the currency has them and the written form implies them ("$20.5" is
"twenty dollars and fifty cents"); currencies without ("¥2.5") keep the decimal. A full stop
before three figures is a decimal point ("$20.506", "$20.010" → "twenty dollars and one cent")
unless they are "000" or the number has more groups ("$1.250.000"). A range names the
currency once, at its end ("two hundred and fifty to three hundred dollars"); an amount per
unit says "per" ("$30/mo" → "thirty dollars per month").

Pre-decimal British money is read where its marks are unambiguous: "10s." after an amount in
pounds or a shilling figure that is not a round ten ("26s." → "twenty-six shillings"), pence
"d." after shillings or where the figure can't be an old ordinal ("8d.", but not "3d." alone,
which is "third" in old books).
"""

from __future__ import annotations

import re

from audiopub.book.spoken.common import Rule, sentence_stop
from audiopub.book.spoken.currency import CODES, SYMBOLS, Currency, currency
from audiopub.book.spoken.en_words import (
    LANG,
    PER_ALTERNATION,
    cardinal,
    number,
    per_words,
    to_int,
)

_SYMBOL = "|".join(re.escape(symbol) for symbol in sorted(SYMBOLS, key=len, reverse=True))
_CODE = "|".join(CODES)
# "1,250", "3.75", "2.000" (a full stop may group thousands, as continental books and
# translations write them; see `_whole_and_decimals`), "20.5", ".05".
_AMOUNT = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+(?!\d)|\d+(?:\.\d+)?|\.\d+)"
_SCALES = {"thousand": "thousand", "million": "million", "billion": "billion",
           "trillion": "trillion", "k": "thousand", "K": "thousand", "m": "million",
           "M": "million", "mn": "million", "bn": "billion", "b": "billion", "B": "billion",
           "tn": "trillion"}  # fmt: skip
# A letter scale may stand apart at the end of a phrase: "¥30 b", "£2 m", "$5 bn.".
_SCALE = (
    r"(?:(?:\s+|-)(thousand|million|billion|trillion)\b"
    r"|(?:\s(?=(?:mn|bn|m|b|tn)\b(?![\w'’]|\s+[a-z])))?(k|K|m|M|mn|bn|b|B|tn)\b)"
)
_RANGE_TO = r"(?:\s*[-–]\s*|\s+to\s+)"
# "$30/mo", "£10/wk", "$0.5/hr": an amount per unit of time or quantity.
_PER = rf"(?:\s?/\s?({PER_ALTERNATION})\b(?!/))?"

# "$5", "-$5", "£ 4", "$2.5 million", "$5bn", "$250-$300", "$5 to $10 million".
_BEFORE = re.compile(
    rf"([-−]\s?)?(?<![\w$])({_SYMBOL})\s?{_AMOUNT}(?!\d){_SCALE}?"
    rf"(?:{_RANGE_TO}(?:{_SYMBOL})?\s?{_AMOUNT}(?!\d){_SCALE}?)?{_PER}"
)
# "USD 5", "EUR 2.5 million".
_CODE_BEFORE = re.compile(
    rf"\b({_CODE})\s?{_AMOUNT}(?!\d){_SCALE}?(?:{_RANGE_TO}{_AMOUNT}(?!\d){_SCALE}?)?{_PER}"
)
# "5 EUR", "30 €", "2.5 million USD", "5-10 EUR".
_AFTER = re.compile(
    rf"(?<![\w.,]){_AMOUNT}{_SCALE}?(?:{_RANGE_TO}{_AMOUNT}{_SCALE}?)?\s?"
    rf"(?:({_CODE})\b|({_SYMBOL})(?!\w)){_PER}"
)


def _scale(word: str | None, letter: str | None) -> str | None:
    written = word or letter
    return _SCALES[written] if written else None


_GROUPED = re.compile(r"\d{1,3}(?:\.\d{3}){2,}|\d{1,3}\.000")


def _whole_and_decimals(amount: str) -> tuple[int, str]:
    # "1.250.000" and "2.000" group thousands; one full stop before other digits is a decimal
    # point ("$10.250" is ten dollars and a quarter).
    if _GROUPED.fullmatch(amount):
        return int(amount.replace(".", "")), ""
    whole, _, decimals = amount.partition(".")
    if len(decimals) > 2 and not decimals[2:].strip("0"):
        decimals = decimals[:2]  # "$20.010": cents written with a trailing zero
    return to_int(whole or "0"), decimals


def amount_words(amount: str, scale: str | None) -> str:
    """The amount alone, as it is said before the currency's name ("two point five million")."""
    whole, decimals = _whole_and_decimals(amount)
    if amount.startswith("."):
        words = number("." + decimals)  # "$.506": "point five zero six"
    else:
        words = number(f"{whole}.{decimals}" if decimals else str(whole))
    return f"{words} {scale}" if scale else words


def money_words(amount: str, scale: str | None, money: Currency) -> str:
    """An amount and its currency: "twenty dollars and fifty cents", "two million dollars"."""
    whole, decimals = _whole_and_decimals(amount)
    if scale or (decimals and (not money.minor_one or len(decimals) > 2)):
        many = money.many if scale or amount_words(amount, None) != "one" else money.one
        return f"{amount_words(amount, scale)} {many}"
    words = [f"{cardinal(whole)} {money.one if whole == 1 else money.many}"]
    minor = int(decimals.ljust(2, "0")) if decimals else 0
    if minor:
        minor_words = f"{cardinal(minor)} {money.minor_one if minor == 1 else money.minor_many}"
        words = [*words, minor_words] if whole else [minor_words]
    return " and ".join(words)


def _range(
    first: str, first_scale: str | None, last: str, last_scale: str | None, money: Currency
) -> str:
    """ "$250-$300" → "two hundred and fifty to three hundred dollars": the currency once."""
    last_words = money_words(last, last_scale, money)
    if "." in first and money.minor_one and not first_scale:
        return f"{money_words(first, None, money)} to {last_words}"
    return (
        f"{amount_words(first, first_scale if first_scale != last_scale else None)} to {last_words}"
    )


def _say(
    sign: str | None,
    written: str,
    first: str,
    first_scale: str | None,
    last: str | None,
    last_scale: str | None,
    per: str | None,
) -> str:
    money = currency(written, LANG)
    if last:
        words = _range(first, first_scale, last, last_scale, money)
    else:
        words = money_words(first, first_scale, money)
    return ("minus " if sign else "") + words + (f" per {per_words(per)}" if per else "")


def _say_before(match: re.Match[str]) -> str:
    sign, symbol, first, word1, letter1, last, word2, letter2, per = match.groups()
    return _say(sign, symbol, first, _scale(word1, letter1), last, _scale(word2, letter2), per)


def _say_code_before(match: re.Match[str]) -> str:
    code, first, word1, letter1, last, word2, letter2, per = match.groups()
    return _say(None, code, first, _scale(word1, letter1), last, _scale(word2, letter2), per)


def _say_after(match: re.Match[str]) -> str:
    first, word1, letter1, last, word2, letter2, code, symbol, per = match.groups()
    scales = _scale(word1, letter1), _scale(word2, letter2)
    return _say(None, code or symbol, first, scales[0], last, scales[1], per)


# --- pounds, shillings and pence ----------------------------------------------------------------

_SHILLINGS = re.compile(
    r"(?:(?<=pounds )|(?<=pound )|(?<![\w.,])(?=\d*[1-9]s\.))(\d{1,3})\s?s\."
    r"(?:\s*(\d{1,2})\s?d\.)?"
)
_PENCE = re.compile(r"(?<![\w.,])(\d{1,2})\s?d\.")


def _shillings(count: int) -> str:
    return f"{cardinal(count)} {'shilling' if count == 1 else 'shillings'}"


def _pence(count: int) -> str:
    return f"{cardinal(count)} {'penny' if count == 1 else 'pence'}"


def _say_shillings(match: re.Match[str]) -> str:
    shillings, pence = match.groups()
    words = _shillings(int(shillings))
    if pence:
        words += " and " + _pence(int(pence))
    return words + sentence_stop(match)


def _say_pence(match: re.Match[str]) -> str:
    digits = match.group(1)
    if digits[-1] in "23" and not match.string[: match.start()].endswith("shillings "):
        return match.group()  # "the 3d." is the old way to write "the third"
    return _pence(int(digits)) + sentence_stop(match)


# "99p", "50¢": pence and cents on their own.
_PENCE_ONLY = re.compile(r"(?<![\w.,])(\d{1,3})p\b")
_CENTS_ONLY = re.compile(r"(?<![\w.,])(\d{1,3})\s?¢")

RULES: list[Rule] = [
    (_BEFORE, _say_before),
    (_CODE_BEFORE, _say_code_before),
    (_AFTER, _say_after),
    (_SHILLINGS, _say_shillings),
    (_PENCE, _say_pence),
    (_PENCE_ONLY, lambda m: _pence(int(m.group(1)))),
    (
        _CENTS_ONLY,
        lambda m: f"{cardinal(int(m.group(1)))} {'cent' if m.group(1) == '1' else 'cents'}",
    ),
]
