"""English spoken forms: what a narrator says for numbers, symbols and abbreviations.

One job, English's rules; a little over 400 lines because English gets the most of them (units,
coordinates, regnal names, clock times), most of it tables and patterns read side by side.

Covers cardinals, ordinals ("21st", old "3d"), years ("1999" → "nineteen ninety-nine", a plain
four-digit number from 1000 to 2099 is read as a year), decades ("1880s"), ranges, decimals,
fractions ("3/4", "½", "2½"), percentages, currency (£ $ € with pence/cents), clock times
("7:45 a.m." → "seven forty-five in the morning": words every engine says well, where "a m"
is read as the article "a"), dates ("12 March 1850", "March 12, 1850"), units after numbers,
degrees and coordinates, Roman numerals where the context makes them numbers, and common
abbreviations ("Dr.", "St.", "No. 5", "pp. 12–14", "c. 1850", "e.g.", "etc.").

Deliberately not covered: pre-decimal money ("£3 10s. 6d."), phone numbers and other digit
strings with hyphens (each group is read as a number), abbreviated month names, "4th July"
style dates in other orders, units that are also words without a full stop ("in", "l").
A full stop that ends an abbreviation and the sentence ("etc. Then") is kept.
"""

from __future__ import annotations

import re

from audiopub.book import spoken_roman
from audiopub.book.spoken_common import (
    VULGAR_CLASS,
    VULGAR_FRACTIONS,
    Rule,
    apply_rules,
    digit_words,
    match_case,
    number_words,
    sentence_stop,
    spaced,
    word_alternation,
)

LANG = "en"


def cardinal(value: int) -> str:
    return number_words(value, LANG)


def ordinal(value: int) -> str:
    return number_words(value, LANG, "ordinal")


def year(value: int) -> str:
    """Years as people say them: "nineteen ninety-nine", "two thousand and five"."""
    return number_words(value, LANG, "year") if 1000 <= value <= 2099 else cardinal(value)


def _int(digits: str) -> int:
    return int(digits.replace(",", ""))


def number(text: str) -> str:
    """A written amount ("1,250", "3.75", "007") in words; four-digit years stay cardinals."""
    whole, _, decimals = text.partition(".")
    if len(whole) > 1 and whole.startswith("0"):
        words = digit_words(whole, LANG)
    else:
        words = cardinal(_int(whole)) if whole else "zero"
    if decimals:
        words += " point " + digit_words(decimals, LANG)
    return words


def _is_one(text: str) -> bool:
    return text.replace(",", "") in ("1", "1.0")


# A written number: "12", "1,250", "3.75" (never the tail of a longer number or a word).
_NUM = r"(?<![\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"

# --- units, degrees ---------------------------------------------------------------------------

_UNITS = {
    "km": ("kilometre", "kilometres"), "m": ("metre", "metres"), "cm": ("centimetre",
    "centimetres"), "mm": ("millimetre", "millimetres"), "kg": ("kilogram", "kilograms"),
    "g": ("gram", "grams"), "mg": ("milligram", "milligrams"), "ft": ("foot", "feet"),
    "in.": ("inch", "inches"), "yd": ("yard", "yards"), "yds": ("yard", "yards"),
    "mi": ("mile", "miles"), "lb": ("pound", "pounds"), "lbs": ("pound", "pounds"),
    "oz": ("ounce", "ounces"), "mph": ("mile an hour", "miles an hour"),
    "km/h": ("kilometre an hour", "kilometres an hour"), "kph": ("kilometre an hour",
    "kilometres an hour"),
}  # fmt: skip
_UNIT = re.compile(rf"{_NUM}\s?({word_alternation(list(_UNITS))})(?![\w/])(\.)?")


def _say_unit(match: re.Match[str]) -> str:
    amount, unit, stop = match.groups()
    singular, plural = _UNITS[unit]
    words = f"{number(amount)} {singular if _is_one(amount) else plural}"
    # "in." carries its own full stop; any other unit's stop is the sentence's.
    return words + (sentence_stop(match) if stop or unit.endswith(".") else "")


_DIRECTIONS = {"N": "north", "S": "south", "E": "east", "W": "west"}
_COORDINATE = re.compile(
    rf"{_NUM}\s?°\s*(?:{_NUM}['′]\s*)?(?:{_NUM}[\"″]\s*)?(?:([NSEW])\b(\.)?)?(?:\s*([CF])\b)?"
)


def _plural(amount: str, singular: str) -> str:
    return f"{number(amount)} {singular if _is_one(amount) else singular + 's'}"


def _say_degrees(match: re.Match[str]) -> str:
    degrees, minutes, seconds, direction, stop, scale = match.groups()
    parts = [_plural(degrees, "degree")]
    if minutes:
        parts.append(_plural(minutes, "minute"))
    if seconds:
        parts.append(_plural(seconds, "second"))
    if direction:
        parts.append(_DIRECTIONS[direction] + (sentence_stop(match, match.end(5)) if stop else ""))
    if scale:
        parts.append("Celsius" if scale == "C" else "Fahrenheit")
    trailing = match.group()[len(match.group().rstrip()) :]
    return " ".join(parts) + trailing


# 6′ 2″: feet and inches (a prime after degrees is minutes, handled above).
_FEET_INCHES = re.compile(rf"{_NUM}′(?:\s*{_NUM}″)?|{_NUM}″")


def _say_feet_inches(match: re.Match[str]) -> str:
    feet, inches, only_inches = match.groups()
    if only_inches:
        return number(only_inches) + (" inch" if _is_one(only_inches) else " inches")
    words = number(feet) + (" foot" if _is_one(feet) else " feet")
    if inches:
        words += " " + number(inches) + (" inch" if _is_one(inches) else " inches")
    return words


# --- money, per cent, times, dates ------------------------------------------------------------

_CURRENCIES = {"£": ("pound", "pounds", "penny", "pence"), "$": ("dollar", "dollars", "cent",
               "cents"), "€": ("euro", "euros", "cent", "cents")}  # fmt: skip
_MONEY = re.compile(
    r"([£$€])\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d\d))?(?!\d)(?:\s+(thousand|million|billion)\b)?"
)


def _say_money(match: re.Match[str]) -> str:
    symbol, whole, cents, scale = match.groups()
    one, many, minor_one, minor_many = _CURRENCIES[symbol]
    amount = _int(whole)
    if scale:
        return f"{cardinal(amount)} {scale} {many}"
    words = [f"{cardinal(amount)} {one if amount == 1 else many}"] if amount or not cents else []
    if cents and int(cents):
        minor = int(cents)
        words.append(f"{cardinal(minor)} {minor_one if minor == 1 else minor_many}")
    return " and ".join(words) or f"zero {many}"


_PERCENT = re.compile(rf"{_NUM}\s?%")

_TIME = re.compile(
    r"(?<![\d:])([01]?\d|2[0-3])(?::([0-5]\d))?(?(2)(?!\d)|(?=\s?[aApP]\.?[mM]\b))"
    r"(?:\s?([aApP])\.?\s?[mM]\b(\.)?)?"
)


def _say_time(match: re.Match[str]) -> str:
    hour, minutes, half, stop = match.groups()
    words = cardinal(int(hour))
    if minutes:
        if minutes == "00":
            words += " o'clock" if half else " hundred" if len(hour) == 2 else " o'clock"
        elif minutes.startswith("0"):
            words += " oh " + cardinal(int(minutes))
        else:
            words += " " + cardinal(int(minutes))
    if half:
        if half in "aA":
            words += " at night" if hour == "12" else " in the morning"
        else:
            words += (
                " noon"
                if hour == "12" and minutes in (None, "00")
                else (" in the afternoon" if int(hour) < 6 or hour == "12" else " in the evening")
            )
        if stop:
            words += sentence_stop(match)
    return words


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip
_MONTH = "|".join(_MONTHS)
_DAY_MONTH = re.compile(
    rf"\b(?:(the|The)\s+)?([0-3]?\d)(?:st|nd|rd|th)?\s+({_MONTH})\b(?:,?\s+(\d{{3,4}})\b)?"
)
_MONTH_DAY = re.compile(
    rf"\b({_MONTH})\s+([0-3]?\d)(?:st|nd|rd|th)?\b(?!:)(?:(,?\s+)(\d{{3,4}})\b)?"
)


def _say_day_month(match: re.Match[str]) -> str:
    the, day, month, when = match.groups()
    if not 1 <= int(day) <= 31:
        return match.group()
    words = f"{the or 'the'} {ordinal(int(day))} of {month}"
    return words + (f" {year(int(when))}" if when else "")


def _say_month_day(match: re.Match[str]) -> str:
    month, day, comma, when = match.groups()
    if not 1 <= int(day) <= 31:
        return match.group()
    return f"{month} {ordinal(int(day))}" + (f"{comma}{year(int(when))}" if when else "")


# --- abbreviations ----------------------------------------------------------------------------

# Before a number (or a Roman numeral): "No. 5", "pp. 12–14", "vol. II", "fig. 3".
_NUMBER_ABBREVIATIONS = {
    "no": ("number", "numbers"), "nos": ("numbers", "numbers"), "p": ("page", "pages"),
    "pp": ("pages", "pages"), "vol": ("volume", "volumes"), "vols": ("volumes", "volumes"),
    "ch": ("chapter", "chapters"), "chap": ("chapter", "chapters"), "fig": ("figure", "figures"),
    "figs": ("figures", "figures"), "art": ("article", "articles"), "para": ("paragraph",
    "paragraphs"), "§": ("section", "sections"), "§§": ("sections", "sections"),
    "#": ("number", "numbers"),
}  # fmt: skip
_RANGE = r"(?:\s*(?:–|-|\bto\b|\band\b)\s*(\d+|[ivxlcdm]+|[IVXLCDM]+)\b)?"
_NUMBERED = re.compile(
    r"(?<![\w.])(?i:(no|nos|pp?|vols?|chap|ch|figs?|art|para)\.|(§§?|#))\s*"
    rf"(\d+|[ivxlcdm]+\b|[IVXLCDM]+\b){_RANGE}"
)


def _numbered_item(text: str) -> str | None:
    if text.isdigit():
        return cardinal(int(text))
    value = spoken_roman.roman_value(text)
    return cardinal(value) if value else None


def _say_numbered(match: re.Match[str]) -> str:
    word, symbol, first, last = match.groups()
    key = (word or symbol).lower()
    if key in ("no", "nos", "#") and not first.isdigit():
        return match.group()  # "No. I don't" is the word no and the pronoun
    one, many = _NUMBER_ABBREVIATIONS[key]
    first_words = _numbered_item(first)
    last_words = _numbered_item(last) if last else None
    if first_words is None or (last and last_words is None):
        return match.group()
    joiner = " and " if last and " and " in match.group() else " to "
    spoken = match_case(many if last else one, word or "a") + " " + first_words
    return spoken + (joiner + last_words if last_words else "")


_CIRCA = re.compile(r"(?<![\w.])(?:c|ca|circ)\.\s*(\d{3,4})(?!\d)")

# Titles before a name: their full stop never ends a sentence. "Mr" without the stop too.
_TITLES = {
    "Dr": "Doctor", "Mr": "Mister", "Mrs": "Missus", "Ms": "Miz", "Messrs": "Messers",
    "Prof": "Professor", "Capt": "Captain", "Col": "Colonel", "Gen": "General",
    "Lieut": "Lieutenant", "Lt": "Lieutenant", "Sgt": "Sergeant", "Rev": "Reverend",
    "Hon": "Honourable", "Gov": "Governor", "Mt": "Mount",
}  # fmt: skip
_TITLE = re.compile(rf"\b({word_alternation(list(_TITLES))})(?:\.|(?=\s+[A-Z]))(?=\s)")
# "St." is "Saint" before a name and "Street" after one ("Baker St.").
_SAINT = re.compile(r"\bSt\.?(?=\s+[A-Z])")
_STREET = re.compile(r"\b([A-Z][a-z]+\s+)St\.(?=\s|$|[,;:])")

# Abbreviations that can end a sentence: their full stop stays when it does.
_ENDING = {
    "etc": "et cetera", "&c": "et cetera", "viz": "namely", "approx": "approximately",
    "Jr": "Junior", "Sr": "Senior", "vs": "versus", "cf": "compare", "e.g": "for example",
    "i.e": "that is", "a.k.a": "also known as",
}  # fmt: skip
_ENDING_LOWER = {key.lower(): words for key, words in _ENDING.items()}
_ENDING_ABBREVIATION = re.compile(
    rf"(?<![\w.])({word_alternation(list(_ENDING))})\.(?=[\s,;:)]|$)", re.IGNORECASE
)


def _say_ending(match: re.Match[str]) -> str:
    key = match.group(1).lower()
    words = _ENDING_LOWER[key]
    if key in ("e.g", "i.e", "cf", "vs") and match.end() < len(match.string):
        return words  # never ends a sentence: "e.g. London" goes on
    return words + sentence_stop(match)


# --- numbers ----------------------------------------------------------------------------------

_DECADE = re.compile(r"(?<![\w.,'’])(1\d|20)(\d)0(?:'|’)?s\b")


def _say_decade(match: re.Match[str]) -> str:
    century, tens = match.groups()
    words = year(int(century + tens + "0"))
    return (words[:-1] + "ies") if words.endswith("y") else words + "s"


_ORDINAL = re.compile(r"(?<![\w.,])(\d+)(st|nd|rd|th|(?<=[23])d)\b")
_YEAR_RANGE = re.compile(r"(?<![\w.,])(1\d{3}|20\d\d)\s*(?:–|-|\bto\b)\s*(\d{4}|\d\d)(?![\w.,]?\d)")


def _say_year_range(match: re.Match[str]) -> str:
    start, end = match.groups()
    end_words = year(int(end)) if len(end) == 4 else cardinal(int(end))
    return f"{year(int(start))} to {end_words}"


_MIXED_FRACTION = re.compile(rf"(?<![\w.,])(\d+)\s?([{VULGAR_CLASS}])")
_VULGAR = re.compile(rf"[{VULGAR_CLASS}]")
_FRACTION = re.compile(r"(?<![\w./])(\d{1,3})/(\d{1,3})(?![\w/]|\.\d)")
_DENOMINATORS = {2: ("half", "halves"), 4: ("quarter", "quarters")}


def fraction(numerator: int, denominator: int) -> str:
    if denominator in _DENOMINATORS:
        one, many = _DENOMINATORS[denominator]
    else:
        one = ordinal(denominator)
        many = one + "s"
    return f"{cardinal(numerator)} {one if numerator == 1 else many}"


def _say_mixed(match: re.Match[str]) -> str:
    whole, char = match.groups()
    numerator, denominator = VULGAR_FRACTIONS[char]
    part = fraction(numerator, denominator)
    if numerator == 1:
        part = "a " + part.split(" ", 1)[1]
    return f"{cardinal(int(whole))} and {part}"


def _say_fraction(match: re.Match[str]) -> str:
    numerator, denominator = int(match.group(1)), int(match.group(2))
    if denominator < 2 or numerator > 100:
        return match.group()
    return fraction(numerator, denominator)


_NUMBER = re.compile(r"(?<![\d,.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])")


def _say_number(match: re.Match[str]) -> str:
    text = match.group(1)
    if len(text) == 4 and text.isdigit() and not text.startswith("0"):
        return spaced(match, year(int(text)))
    return spaced(match, number(text))


_SYMBOLS: list[Rule] = [
    (re.compile(r"(?<=\d)\s?×\s?(?=\d)"), " by "),
    (re.compile(r"\s*×\s*"), " times "),
    (re.compile(r"(?<![\w-])[-−](?=\d)"), "minus "),
    # Only an en dash is a range: "555-1234" keeps its hyphen.
    (re.compile(r"(?<=\d)\s*–\s*(?=\d)"), " to "),
    (re.compile(r"\s*&\s*"), " and "),
]

_HEADINGS = ("Chapter", "Book", "Part", "Volume", "Section", "Act", "Scene", "Canto", "Stave",
             "Letter", "Appendix", "Lecture", "Psalm", "Article", "Plate")  # fmt: skip
# After these a numeral is a cardinal: "World War II" is "World War two".
_CARDINAL_AFTER = ("War", "Mark", "Type", "Class", "Phase", "Grade", "Level", "Stage", "Apollo",
                   "Vatican", "Bowl")  # fmt: skip
_ROMAN = spoken_roman.RomanWords(
    heading_words=[*_HEADINGS, *(word.upper() for word in _HEADINGS)],
    cardinal=cardinal,
    regnal=lambda value, _name: "the " + ordinal(value).capitalize(),
    cardinal_after=_CARDINAL_AFTER,
)

RULES: list[Rule] = [
    (re.compile(r"&c\.(?=[\s,;:)]|$)"), lambda m: "et cetera" + sentence_stop(m)),
    (_ENDING_ABBREVIATION, _say_ending),
    (_TITLE, lambda m: _TITLES[m.group(1)]),
    (_SAINT, "Saint"),
    (_STREET, lambda m: m.group(1) + "Street" + sentence_stop(m)),
    *spoken_roman.roman_rules(_ROMAN),
    (_TIME, _say_time),  # before "p." is read as "page": "3 p.m."
    (_NUMBERED, _say_numbered),
    (_CIRCA, lambda m: "circa " + year(int(m.group(1)))),
    (_COORDINATE, _say_degrees),
    (_FEET_INCHES, _say_feet_inches),
    (_MONEY, _say_money),
    (_PERCENT, lambda m: number(m.group(1)) + " percent"),
    (_DAY_MONTH, _say_day_month),
    (_MONTH_DAY, _say_month_day),
    (_UNIT, _say_unit),
    (_DECADE, _say_decade),
    (_ORDINAL, lambda m: spaced(m, ordinal(int(m.group(1))))),
    (_YEAR_RANGE, _say_year_range),
    (_MIXED_FRACTION, _say_mixed),
    (_VULGAR, lambda m: spaced(m, fraction(*VULGAR_FRACTIONS[m.group()]))),
    (_FRACTION, _say_fraction),
    *_SYMBOLS,
    (_NUMBER, _say_number),
    (re.compile(r"§§?\s*"), lambda m: "sections " if len(m.group().strip()) == 2 else "section "),
    # Whatever digits the rules above left ("1.2.3") are read one number at a time.
    (re.compile(r"\d+"), lambda m: spaced(m, number(m.group()))),
]


def say(text: str) -> str:
    return apply_rules(text, RULES)


# Words that send a chunk through the rules: the abbreviations above (see `spoken`).
_TRIGGER_ABBREVIATIONS = [*_ENDING, *_NUMBER_ABBREVIATIONS, "c", "ca", "circ"]
TRIGGER = (
    rf"\b(?:{word_alternation([*_TITLES, 'St'])})\b|{spoken_roman.trigger(_ROMAN)}"
    rf"|(?i:(?<![\w.])(?:{word_alternation(_TRIGGER_ABBREVIATIONS)})\.)"
)
