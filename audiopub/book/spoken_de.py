"""German spoken forms: numbers, dates, money, times and common abbreviations.

Covers cardinals with "." between thousands and "," before decimals ("1.250", "3,5" → "drei
Komma fünf"), years ("1850" → "achtzehnhundertfünfzig"), ordinals written with a full stop
before a month or a lower-case word or after an article ("am 3. Mai", "der 2. Band"), dates,
currency (€ $ £, before or after the amount), per cent, clock times with "Uhr", Roman numerals
in headings ("Kapitel IV") and after rulers' names ("Karl V." → "Karl der Fünfte", always
nominative), and abbreviations ("z. B.", "Nr.", "S." before a number, "Dr.", "ca.", "usw.").

Deliberately not covered: grammatical case and gender of number words beyond "ein" before a
noun and "-en" after "am/vom/zum/im/dem/den/des" (so "Karl V." is "der Fünfte" even where
German would say "des Fünften"), and ordinals before a capitalised noun without an article
("3. Tag"), which cannot be told from a sentence that ends in a number.
"""

from __future__ import annotations

import re

from audiopub.book import spoken_codes, spoken_money, spoken_roman
from audiopub.book.spoken_common import (
    VULGAR_CLASS,
    VULGAR_FRACTIONS,
    Rule,
    apply_rules,
    comma_decimal,
    digit_words,
    number_words,
    sentence_stop,
    spaced,
    word_alternation,
)

LANG = "de"


def cardinal(value: int) -> str:
    return number_words(value, LANG)


def ordinal(value: int) -> str:
    return number_words(value, LANG, "ordinal")


def number(text: str) -> str:
    return comma_decimal(text, LANG, "Komma")


# "1.250", "1.250.000,50", "3,5", "12" (never the tail of a longer number or a word).
_NUM = r"(?<![\w.,])(\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d+(?:,\d+)?)(?![\w]|[.,]\d)"

_MONTHS = "Januar Februar März April Mai Juni Juli August September Oktober November Dezember"
_MONTH = "|".join(_MONTHS.split())
# After these words an ordinal takes "-en": "am dritten Mai", "vom zweiten Band", "seinem
# hundertsten Geburtstag"; after the others "-e" or "-er" (see _say_ordinal).
_DATIVE = {"am", "vom", "zum", "zur", "im", "dem", "den", "des", "beim", "Am", "Vom", "Zum",
           "Zur", "Im", "Beim"}  # fmt: skip
_ARTICLES = _DATIVE | {"der", "die", "das", "Der", "Die", "Das"}
# Possessives, "ein", "kein", "dies-", "jed-": the ending on them says the ordinal's.
_DETERMINER = re.compile(
    r"(?i:ein|kein|mein|dein|sein|ihr|unser|euer|dies|jed|jen)(em|en|es|er|e)?"
)
_ORDINAL = re.compile(
    rf"(?:\b(\w+)\s+)?(?<![\d.,])(\d{{1,3}})\.(?=\s+(?:{_MONTH}|[a-zäöüß]|[A-ZÄÖÜ]))(?=\s+(\S+))"
)


def _say_ordinal(match: re.Match[str]) -> str:
    before, digits, following = match.groups()
    is_month = following.strip(",.;") in _MONTHS.split()
    determiner = _DETERMINER.fullmatch(before) if before else None
    if not (is_month or following[:1].islower() or before in _ARTICLES or determiner):
        return match.group()  # "bis 1850. Dann": a number that ends a sentence
    words = ordinal(int(digits))
    if determiner:
        ending = determiner.group(1)
        words += "n" if ending in ("em", "en", "es", "er") else "" if ending == "e" else "r"
    elif before in _DATIVE:
        words += "n"
    elif not before or before not in _ARTICLES:
        words += "r" if is_month else ""
    return (before + " " if before else "") + words


_MONEY = spoken_money.MoneyWords(
    lang=LANG,
    number=number,
    cardinal=cardinal,
    scales={
        "Million": ("Million", "Millionen"),
        "Millionen": ("Million", "Millionen"),
        "Mio.": ("Million", "Millionen"),
        "Milliarde": ("Milliarde", "Milliarden"),
        "Milliarden": ("Milliarde", "Milliarden"),
        "Mrd.": ("Milliarde", "Milliarden"),
        "Billion": ("Billion", "Billionen"),
        "Billionen": ("Billion", "Billionen"),
        "million": ("Million", "Millionen"),
        "billion": ("Milliarde", "Milliarden"),
    },  # fmt: skip
    before_currency=lambda _name: " ",
    minor_join=" ",
    one=lambda feminine: "eine" if feminine else "ein",
    feminine_scales=True,
)

# "25.12.2020": a date, each part an ordinal but the year.
_NUMERIC_DATE = re.compile(r"(?:\b(\w+)\s+)?(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d.]\d)")


def _say_numeric_date(match: re.Match[str]) -> str:
    before, day, month, when = match.groups()
    if not (1 <= int(day) <= 31 and 1 <= int(month) <= 12):
        return match.group()
    ending = "n" if before in _DATIVE else "" if before in _ARTICLES else "r"
    year_words = (
        number_words(int(when), LANG, "year") if 1100 <= int(when) <= 1999 else cardinal(int(when))
    )
    spoken = f"{ordinal(int(day))}{ending} {ordinal(int(month))}{ending} {year_words}"
    return (before + " " if before else "") + spoken


_CODES = spoken_codes.CodeWords(
    digits=lambda digits: digit_words(digits, LANG),
    cardinal=cardinal,
    at="at",
    dot="Punkt",
    slash="Schrägstrich",
    point="Punkt",
    version="Version",
    plus="plus",
)


# Units after a number: German uses the same word for one and many ("1 Meter", "5 Meter").
_UNITS = {
    "km": "Kilometer",
    "m": "Meter",
    "cm": "Zentimeter",
    "mm": "Millimeter",
    "kg": "Kilogramm",
    "g": "Gramm",
    "km/h": "Kilometer pro Stunde",
}
_UNIT = re.compile(rf"{_NUM}\s?({word_alternation(list(_UNITS))})(?![\w/])")

_TIME = re.compile(r"(?<![\d.,:])([01]?\d|2[0-3])(?:[:.]([0-5]\d))?\s?Uhr\b")


def _say_time(match: re.Match[str]) -> str:
    hour, minutes = match.groups()
    words = "ein" if hour.lstrip("0") == "1" else cardinal(int(hour))
    words += " Uhr"
    if minutes and minutes != "00":
        words += " " + cardinal(int(minutes))
    return words


# Before a number only: "Nr. 5", "S. 12", "Bd. 3", "Kap. 4", "Abb. 2".
_NUMBERED = {"Nr": "Nummer", "S": "Seite", "Bd": "Band", "Kap": "Kapitel", "Abb": "Abbildung"}
_NUMBERED_ABBREVIATION = re.compile(
    rf"\b({word_alternation(list(_NUMBERED))})\.(?=\s*(?:\d|[IVXLC]+\b))"
)
_ABBREVIATIONS = {
    "z. B.": "zum Beispiel",
    "z.B.": "zum Beispiel",
    "d. h.": "das heißt",
    "d.h.": "das heißt",
    "u. a.": "unter anderem",
    "u.a.": "unter anderem",
    "usw.": "und so weiter",
    "bzw.": "beziehungsweise",
    "ca.": "zirka",
    "vgl.": "vergleiche",
    "evtl.": "eventuell",
    "v. Chr.": "vor Christus",
    "n. Chr.": "nach Christus",
    "Jh.": "Jahrhundert",
    "Dr.": "Doktor",
    "Prof.": "Professor",
    "Hr.": "Herr",
    "Hrn.": "Herrn",
    "Fr.": "Frau",
    "St.": "Sankt",
    "Std.": "Stunden",
    "Min.": "Minuten",
    "Sek.": "Sekunden",
    "Tsd.": "Tausend",
    "Mio.": "Millionen",
    "Mrd.": "Milliarden",
}
# Abbreviations that may end a sentence ("… Äpfel, Birnen usw. Dann"): the full stop stays.
_MAY_END = {"Std.", "Min.", "Sek.", "usw.", "u. a.", "u.a.", "v. Chr.", "n. Chr.", "Jh.", "evtl."}
_ABBREVIATION = re.compile(rf"(?<![\w.])({word_alternation(list(_ABBREVIATIONS))})(?!\w)")


def _say_abbreviation(match: re.Match[str]) -> str:
    written = match.group(1)
    words = _ABBREVIATIONS[written]
    return words + sentence_stop(match) if written in _MAY_END else words


_ROMAN = spoken_roman.RomanWords(
    heading_words=(
        "Kapitel",
        "KAPITEL",
        "Buch",
        "BUCH",
        "Teil",
        "TEIL",
        "Band",
        "BAND",
        "Akt",
        "Aufzug",
        "Szene",
        "Abschnitt",
        "Gesang",
        "Brief",
    ),
    cardinal=cardinal,
    regnal=lambda value, _name: "der " + ordinal(value).capitalize(),
    cardinal_after=("Weltkrieg",),
    regnal_dot=True,
)


def _say_number(match: re.Match[str]) -> str:
    text = match.group(1)
    if len(text) == 4 and text.isdigit() and 1100 <= int(text) <= 1999:
        return spaced(match, number_words(int(text), LANG, "year"))
    words = number(text)
    rest = match.string[match.end() :]
    if words == "eins" and rest[:1] == " " and rest[1:2].isalpha():
        # "1 Mann" → "ein Mann", "1 Million" → "eine Million"
        words = "eine" if _FEMININE_SCALE.match(rest) else "ein"
    return spaced(match, words)


_FEMININE_SCALE = re.compile(r" (?:Million|Milliarde|Billion)\b")

_VULGAR_WORDS = {(1, 2): "ein halb", (1, 3): "ein Drittel", (2, 3): "zwei Drittel",
                 (1, 4): "ein Viertel", (3, 4): "drei Viertel"}  # fmt: skip


_SLASH_FRACTION = re.compile(r"(?<![\w./,])(\d{1,2})/(\d{1,2})(?![\w/]|[.,]\d)")


def _fraction(char: str) -> str:
    return _fraction_of(*VULGAR_FRACTIONS[char])


def _fraction_of(numerator: int, denominator: int) -> str:
    if denominator < 2:
        return f"{cardinal(numerator)}/{cardinal(denominator)}"
    if (numerator, denominator) in _VULGAR_WORDS:
        return _VULGAR_WORDS[numerator, denominator]
    return f"{cardinal(numerator)} {ordinal(denominator).capitalize()}l"


RULES: list[Rule] = [
    (_ABBREVIATION, _say_abbreviation),
    (_NUMBERED_ABBREVIATION, lambda m: _NUMBERED[m.group(1)]),
    *spoken_roman.roman_rules(_ROMAN),
    (_NUMERIC_DATE, _say_numeric_date),
    *spoken_codes.code_rules(_CODES),
    (_TIME, _say_time),
    *spoken_money.money_rules(_MONEY),
    (re.compile(rf"{_NUM}\s?%"), lambda m: number(m.group(1)) + " Prozent"),
    (_UNIT, lambda m: f"{number(m.group(1))} {_UNITS[m.group(2)]}"),
    (_ORDINAL, _say_ordinal),
    (
        re.compile(rf"(?<![\w.,])(\d+)\s?([{VULGAR_CLASS}])"),
        lambda m: (
            f"{cardinal(int(m.group(1)))}einhalb"
            if m.group(2) == "½"
            else f"{cardinal(int(m.group(1)))} und {_fraction(m.group(2))}"
        ),
    ),
    (re.compile(f"[{VULGAR_CLASS}]"), lambda m: spaced(m, _fraction(m.group()))),
    (_SLASH_FRACTION, lambda m: spaced(m, _fraction_of(int(m.group(1)), int(m.group(2))))),
    (re.compile(r"(?<=\d)\s*–\s*(?=\d)"), " bis "),
    (re.compile(r"(?<![\w-])[-−](?=\d)"), "minus "),
    (re.compile(r"\s*&\s*"), " und "),
    (re.compile(r"§\s*"), "Paragraf "),
    (re.compile(_NUM), _say_number),
    (re.compile(r"\d+"), lambda m: spaced(m, cardinal(int(m.group())))),
]

# Words that send a chunk through the rules (see `spoken`).
TRIGGER = (
    rf"{spoken_codes.TRIGGER}"
    rf"|(?<![\w.])(?:{word_alternation([*_ABBREVIATIONS, *(k + '.' for k in _NUMBERED)])})"
    rf"|{spoken_roman.trigger(_ROMAN)}"
)


def say(text: str) -> str:
    return apply_rules(text, RULES)
