"""French spoken forms: numbers, dates, money, times and common abbreviations.

Covers cardinals with spaces or "." between thousands and "," before decimals ("10 000",
"3,5" → "trois virgule cinq"), years (read as cardinals, as French does), ordinals written
"1er", "1re", "2e", "2ème", "XIXe" ("dix-neuvième siècle"), dates ("1er mai"), currency (€ $ £),
per cent, clock times ("7 h 45", "7h45", "7:45"), Roman numerals in headings ("Chapitre IV")
and after rulers' names ("Louis XIV" → "Louis quatorze", "François Ier" → "François premier"),
and abbreviations ("M." before a name, "Mme", "Mlle", "n°", "p.", "etc.", "c.-à-d.").

Deliberately not covered: feminine "une" for "1" before a feminine noun, "mil" in years, and
liaison-sensitive spellings; engines read those from the words as they are.
"""

from __future__ import annotations

import re

from audiopub.book import spoken_codes, spoken_money, spoken_roman
from audiopub.book.spoken_common import (
    VULGAR_CLASS,
    Rule,
    apply_rules,
    comma_decimal,
    digit_words,
    fraction_of,
    fraction_words,
    mixed_number_words,
    number_words,
    roman_value,
    sentence_stop,
    spaced,
    unit_rule,
    word_alternation,
)

LANG = "fr"


def cardinal(value: int) -> str:
    return number_words(value, LANG)


def ordinal(value: int) -> str:
    return number_words(value, LANG, "ordinal")


def number(text: str) -> str:
    return comma_decimal(text, LANG, "virgule")


# "10 000", "1.250", "3,5", "12" (a space between groups only after one to three digits).
_NUM = r"(?<![\w.,])(\d{1,3}(?:[ .]\d{3})+(?:,\d+)?|\d+(?:,\d+)?)(?![\w]|[.,]\d)"

# "1er", "1re", "2e", "2ème", "2nd"; "XIXe", "Ier".
_ORDINAL = re.compile(r"(?<![\w.,])(\d+)(er|re|ère|e|ème|nd|nde)\b")
# One letter only as "Ier"/"Ire", or "Ve"/"Xe" before "siècle": "Le" and "Ce" are words.
_ROMAN_ORDINAL = re.compile(r"\b([IVXLC]{2,}|I(?=er|re|ère)|[VX](?=e\s+siècle))(er|re|ère|e|ème)\b")


def _say_ordinal(digits: int, suffix: str) -> str:
    if digits == 1:
        return "première" if suffix in ("re", "ère") else "premier"
    return ordinal(digits)


def _say_roman_ordinal(match: re.Match[str]) -> str:
    value = roman_value(match.group(1))
    return match.group() if value is None else _say_ordinal(value, match.group(2))


def _feminine(words: str) -> str:
    """ "vingt et un" → "vingt et une": numbers before a feminine noun ("livres")."""
    return re.sub(r"\bun$", "une", words)


_MONEY = spoken_money.MoneyWords(
    lang=LANG,
    number=number,
    cardinal=cardinal,
    scales={
        "million": ("million", "millions"),
        "millions": ("million", "millions"),
        "milliard": ("milliard", "milliards"),
        "milliards": ("milliard", "milliards"),
        "billion": ("billion", "billions"),
        "billions": ("billion", "billions"),
    },  # fmt: skip
    before_currency=lambda name: " d'" if name[:1].lower() in "aeiouéèêh" else " de ",
    minor_join=" ",
    one=lambda feminine: "une" if feminine else "un",
    feminine=_feminine,
)


_CODES = spoken_codes.CodeWords(
    digits=lambda digits: digit_words(digits, LANG),
    cardinal=cardinal,
    at="arobase",
    dot="point",
    slash="barre oblique",
    point="point",
    version="version",
    plus="plus",
)
# Superscript ordinal marks ("1ᵉʳ", "XIXᵉ", "1.ᵉʳ", "2ᵒ") as the rules read them.
_SUPERSCRIPTS = str.maketrans({"ᵉ": "e", "ʳ": "r", "ᵈ": "d", "ᵒ": "º", "ᵃ": "ª", "ˢ": "s"})
# "01 23 45 67 89": French telephone numbers are read in pairs.
_PHONE = re.compile(r"(?<![\w.,])0\d(?:[ .]\d\d){4}(?![\w.,]\d|\d)")


def _phone_pair(pair: str) -> str:
    return f"zéro {cardinal(int(pair[1]))}" if pair[0] == "0" else cardinal(int(pair))


# Units after a number: one and many ("1 km" → "un kilomètre").
_UNITS = {
    "km": ("kilomètre", "kilomètres"), "m": ("mètre", "mètres"), "cm": ("centimètre",
    "centimètres"), "mm": ("millimètre", "millimètres"), "kg": ("kilo", "kilos"),
    "g": ("gramme", "grammes"), "l": ("litre", "litres"), "ml": ("millilitre", "millilitres"),
    "km/h": ("kilomètre par heure", "kilomètres par heure"),
}  # fmt: skip
_UNIT, _say_unit = unit_rule(_UNITS, number, ("un",))


_SLASH_FRACTION = re.compile(r"(?<![\w./,])(\d{1,2})/(\d{1,2})(?![\w/]|[.,]\d)")


def _slash_fraction(match: re.Match[str]) -> str:
    numerator, denominator = int(match.group(1)), int(match.group(2))
    if denominator < 2:
        return match.group()
    return spaced(match, fraction_of(numerator, denominator, _VULGAR_WORDS, cardinal, ordinal))


_TIME = re.compile(r"(?<![\d.,:])([01]?\d|2[0-3])(?:\s?h\s?|:)([0-5]\d)?(?!\w)")


def _say_time(match: re.Match[str]) -> str:
    hour, minutes = match.groups()
    if ":" in match.group() and not minutes:
        return match.group()
    value = int(hour)
    words = "une heure" if value == 1 else f"{cardinal(value)} heures"
    if minutes and minutes != "00":
        words += " " + cardinal(int(minutes))
    return words


_NUMBERED = {
    "p.": "page",
    "pp.": "pages",
    "n°": "numéro",
    "no": "numéro",
    "No": "numéro",
    "nº": "numéro",
    "vol.": "volume",
    "chap.": "chapitre",
    "fig.": "figure",
}
_NUMBERED_ABBREVIATION = re.compile(rf"(?<![\w.])({word_alternation(list(_NUMBERED))})(?=\s*\d)")
_ABBREVIATIONS = {
    "Mme": "Madame",
    "Mmes": "Mesdames",
    "Mlle": "Mademoiselle",
    "Mlles": "Mesdemoiselles",
    "MM.": "Messieurs",
    "Dr": "docteur",
    "Dr.": "docteur",
    "Me": "Maître",
    "Mgr": "Monseigneur",
    "etc.": "et cetera",
    "c.-à-d.": "c'est-à-dire",
    "cf.": "confer",
    "env.": "environ",
    "av. J.-C.": "avant Jésus-Christ",
    "apr. J.-C.": "après Jésus-Christ",
    "St": "Saint",
    "Ste": "Sainte",
}
_BEFORE_NAMES = {"Me", "St", "Ste", "Dr"}
_NAME_FOLLOWS = re.compile(r"[\s-]+[A-ZÀ-Þ]")
_MAY_END = {"etc.", "av. J.-C.", "apr. J.-C.", "env."}
_ABBREVIATION = re.compile(rf"(?<![\w.])({word_alternation(list(_ABBREVIATIONS))})(?![\w])(?!-\w)")


def _say_abbreviation(match: re.Match[str]) -> str:
    written = match.group(1)
    if written in _BEFORE_NAMES and not _NAME_FOLLOWS.match(match.string, match.end()):
        return written  # "Me" is also the pronoun "me"
    words = _ABBREVIATIONS[written]
    return words + sentence_stop(match) if written in _MAY_END else words


# "M. Dupont": "Monsieur" only before a capitalised name.
_MONSIEUR = re.compile(r"(?<![\w.])M\.(?=\s+[A-ZÀ-Þ][a-zà-ÿ])")

_ROMAN = spoken_roman.RomanWords(
    heading_words=(
        "Chapitre",
        "CHAPITRE",
        "Livre",
        "LIVRE",
        "Tome",
        "TOME",
        "Partie",
        "PARTIE",
        "Acte",
        "ACTE",
        "Scène",
        "SCÈNE",
        "Chant",
        "Volume",
        "Section",
        "Lettre",
    ),
    cardinal=cardinal,
    regnal=lambda value, _name: "premier" if value == 1 else cardinal(value),
    cardinal_after=("Guerre",),
)

_VULGAR_WORDS = {
    (1, 2): "un demi",
    (1, 3): "un tiers",
    (2, 3): "deux tiers",
    (1, 4): "un quart",
    (3, 4): "trois quarts",
}


def _fraction(char: str) -> str:
    return fraction_words(char, _VULGAR_WORDS, cardinal, ordinal)


def _mixed(match: re.Match[str]) -> str:
    return mixed_number_words(match.group(1), match.group(2), "et", "demi", _fraction, cardinal)


RULES: list[Rule] = [
    (_ABBREVIATION, _say_abbreviation),
    (_MONSIEUR, "Monsieur"),
    (_NUMBERED_ABBREVIATION, lambda m: _NUMBERED[m.group(1)]),
    (_ROMAN_ORDINAL, _say_roman_ordinal),
    *spoken_roman.roman_rules(_ROMAN),
    (_PHONE, lambda m: ", ".join(_phone_pair(pair) for pair in re.findall(r"\d\d", m.group()))),
    *spoken_codes.code_rules(_CODES),
    (_ORDINAL, lambda m: spaced(m, _say_ordinal(int(m.group(1)), m.group(2)))),
    *spoken_money.money_rules(_MONEY),
    (re.compile(rf"{_NUM}\s?%"), lambda m: number(m.group(1)) + " pour cent"),
    (_UNIT, _say_unit),
    (_TIME, _say_time),
    (re.compile(rf"(?<![\w.,])(\d+)\s?([{VULGAR_CLASS}])"), _mixed),
    (re.compile(f"[{VULGAR_CLASS}]"), lambda m: spaced(m, _fraction(m.group()))),
    (_SLASH_FRACTION, _slash_fraction),
    (re.compile(r"(?<=\d)\s*–\s*(?=\d)"), " à "),
    (re.compile(r"(?<![\w-])[-−](?=\d)"), "moins "),
    (re.compile(r"\s*&\s*"), " et "),
    (re.compile(r"§\s*"), "paragraphe "),
    (re.compile(_NUM), lambda m: spaced(m, number(m.group(1)))),
    (re.compile(r"\d+"), lambda m: spaced(m, cardinal(int(m.group())))),
]

# Words that send a chunk through the rules (see `spoken`).
TRIGGER = (
    rf"{spoken_codes.TRIGGER}|[ᵉᵒᵃ]"
    rf"|(?<![\w.])(?:{word_alternation([*_ABBREVIATIONS, *_NUMBERED, 'M.'])})"
    rf"|{spoken_roman.trigger(_ROMAN)}|\b[IVXLC]+(?:er|re|e)\b"
)


def say(text: str) -> str:
    return apply_rules(text.translate(_SUPERSCRIPTS), RULES)
