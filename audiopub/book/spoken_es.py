"""Spanish spoken forms: numbers, dates, money, times and common abbreviations.

Covers cardinals with "." or spaces between thousands and "," before decimals ("3,5" → "tres
coma cinco"), years (read as cardinals, as Spanish does), ordinals written "1.º", "1º", "1.ª",
currency (€ $ £), per cent, clock times ("7:45" → "siete y cuarenta y cinco"), Roman numerals
in headings ("Capítulo IV") and after rulers' names ("Felipe II" → "Felipe segundo"; ordinals
up to ten, cardinals beyond: "Alfonso XIII" → "Alfonso trece"), and abbreviations ("Sr.",
"Sra.", "Dr.", "p. ej.", "núm.", "n.º", "pág.", "etc.").

Deliberately not covered: gender of number words beyond "un" before a noun and "segunda" after
a queen's name, and "y cuarto"/"y media" readings of times.
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
    sentence_stop,
    spaced,
    unit_rule,
    word_alternation,
)

LANG = "es"


def cardinal(value: int) -> str:
    return number_words(value, LANG)


def ordinal(value: int, feminine: bool = False) -> str:
    words = number_words(value, LANG, "ordinal")
    return words[:-1] + "a" if feminine and words.endswith("o") else words


def number(text: str) -> str:
    return comma_decimal(text, LANG, "coma")


_NUM = r"(?<![\w.,])(\d{1,3}(?:[ .]\d{3})+(?:,\d+)?|\d+(?:,\d+)?)(?![\w]|[.,]\d)"

# "1.º", "1º", "2.ª", "3.er" (primer), "1.os".
_ORDINAL = re.compile(r"(?<![\w.,])(\d{1,2})\.?(º|ª|er|os|as)(?!\w)")


def _say_ordinal(match: re.Match[str]) -> str:
    value, mark = int(match.group(1)), match.group(2)
    if value > 10:
        return cardinal(value)
    if mark == "er":
        return "primer" if value == 1 else "tercer" if value == 3 else ordinal(value)
    words = ordinal(value, feminine=mark in ("ª", "as"))
    return words + "s" if mark in ("os", "as") else words


def _feminine(words: str) -> str:
    """ "doscientos uno" → "doscientas una": numbers before a feminine noun ("libras")."""
    words = re.sub(r"ientos\b(?! mill)", "ientas", words)
    return re.sub(r"(?<!\w)(veinti)?(uno|ún|un)$", lambda m: (m.group(1) or "") + "una", words)


_MONEY = spoken_money.MoneyWords(
    lang=LANG,
    number=number,
    cardinal=cardinal,
    scales={
        "millón": ("millón", "millones"),
        "millones": ("millón", "millones"),
        "billón": ("billón", "billones"),
        "billones": ("billón", "billones"),
        "mil millones": ("mil millones", "mil millones"),
    },  # fmt: skip
    before_currency=lambda _name: " de ",
    minor_join=" con ",
    one=lambda feminine: "una" if feminine else "un",
    feminine=_feminine,
    masculine=lambda words: re.sub(r"veintiuno$", "veintiún", re.sub(r"\buno$", "un", words)),
)


_CODES = spoken_codes.CodeWords(
    digits=lambda digits: digit_words(digits, LANG),
    cardinal=cardinal,
    at="arroba",
    dot="punto",
    slash="barra",
    point="punto",
    version="versión",
    plus="más",
)
# Superscript ordinal marks ("1ᵉʳ", "XIXᵉ", "1.ᵉʳ", "2ᵒ") as the rules read them.
_SUPERSCRIPTS = str.maketrans({"ᵉ": "e", "ʳ": "r", "ᵈ": "d", "ᵒ": "º", "ᵃ": "ª", "ˢ": "s"})
# Units after a number: one and many ("1 km" → "un kilómetro").
_UNITS = {
    "km": ("kilómetro", "kilómetros"), "m": ("metro", "metros"), "cm": ("centímetro",
    "centímetros"), "mm": ("milímetro", "milímetros"), "kg": ("kilo", "kilos"),
    "g": ("gramo", "gramos"), "l": ("litro", "litros"), "ml": ("mililitro", "mililitros"),
    "km/h": ("kilómetro por hora", "kilómetros por hora"),
}  # fmt: skip
_UNIT, _say_unit = unit_rule(_UNITS, number, ("uno", "un"))


_SLASH_FRACTION = re.compile(r"(?<![\w./,])(\d{1,2})/(\d{1,2})(?![\w/]|[.,]\d)")


def _slash_fraction(match: re.Match[str]) -> str:
    numerator, denominator = int(match.group(1)), int(match.group(2))
    if denominator < 2:
        return match.group()
    return spaced(match, fraction_of(numerator, denominator, _VULGAR_WORDS, cardinal, ordinal))


_TIME = re.compile(r"(?<![\d.,:])([01]?\d|2[0-3]):([0-5]\d)(?!\d)")


def _say_time(match: re.Match[str]) -> str:
    hour, minutes = int(match.group(1)), int(match.group(2))
    words = "una" if hour == 1 else cardinal(hour)  # "la una"
    return words if minutes == 0 else f"{words} y {cardinal(minutes)}"


_NUMBERED = {
    "núm.": "número",
    "n.º": "número",
    "nº": "número",
    "pág.": "página",
    "págs.": "páginas",
    "p.": "página",
    "vol.": "volumen",
    "cap.": "capítulo",
}
_NUMBERED_ABBREVIATION = re.compile(rf"(?<![\w.])({word_alternation(list(_NUMBERED))})(?=\s*\d)")
_ABBREVIATIONS = {
    "Sr.": "señor",
    "Sra.": "señora",
    "Srta.": "señorita",
    "Sres.": "señores",
    "Dr.": "doctor",
    "Dra.": "doctora",
    "Dña.": "doña",
    "D.": "don",
    "Ud.": "usted",
    "Uds.": "ustedes",
    "Vd.": "usted",
    "p. ej.": "por ejemplo",
    "etc.": "etcétera",
    "aprox.": "aproximadamente",
    "a. C.": "antes de Cristo",
    "d. C.": "después de Cristo",
    "Sto.": "santo",
    "Sta.": "santa",
}
_MAY_END = {"etc.", "a. C.", "d. C.", "aprox."}
_ABBREVIATION = re.compile(rf"(?<![\w.])({word_alternation(list(_ABBREVIATIONS))})(?!\w)")
_NAME_FOLLOWS = re.compile(r"\s+[A-ZÁÉÍÓÚÑ][a-záéíóúñ]")


def _say_abbreviation(match: re.Match[str]) -> str:
    written = match.group(1)
    if written == "D." and not _NAME_FOLLOWS.match(match.string, match.end()):
        return written  # "D." is "don" only before a name; otherwise an initial
    words = _ABBREVIATIONS[written]
    return words + sentence_stop(match) if written in _MAY_END else words


_QUEENS = {"Isabel", "Juana", "María", "Catalina"}
_ROMAN = spoken_roman.RomanWords(
    heading_words=(
        "Capítulo",
        "CAPÍTULO",
        "Libro",
        "LIBRO",
        "Parte",
        "PARTE",
        "Tomo",
        "TOMO",
        "Acto",
        "ACTO",
        "Escena",
        "ESCENA",
        "Canto",
        "Volumen",
        "Carta",
    ),
    cardinal=cardinal,
    regnal=lambda value, name: ordinal(value, name in _QUEENS) if value <= 10 else cardinal(value),
    cardinal_after=("Guerra",),
)

_VULGAR_WORDS = {
    (1, 2): "un medio",
    (1, 3): "un tercio",
    (2, 3): "dos tercios",
    (1, 4): "un cuarto",
    (3, 4): "tres cuartos",
}


def _fraction(char: str) -> str:
    return fraction_words(char, _VULGAR_WORDS, cardinal, ordinal)


def _mixed(match: re.Match[str]) -> str:
    return mixed_number_words(match.group(1), match.group(2), "y", "medio", _fraction, cardinal)


def _say_number(match: re.Match[str]) -> str:
    words = number(match.group(1))
    rest = match.string[match.end() :]
    if _FEMININE_NOUN.match(rest):
        return spaced(match, _feminine(words))  # "200 personas" → "doscientas personas"
    if words.endswith("uno") and _NOUN_FOLLOWS.match(rest):
        words = words[:-1]  # "1 libro" → "un libro", "21 libros" → "veintiún libros"
        words = words[:-2] + "ún" if words.endswith("iun") else words
    return spaced(match, words)


# A feminine noun after the number: most nouns ending in "-a(s)" are, but not these.
_FEMININE_NOUN = re.compile(
    r" (?:(?!(?:d[ií]as?|mapas?|problemas?|temas?|sistemas?|programas?|idiomas?|planetas?|"
    r"climas?|poemas?|para|contra|hasta|nada|era|esta|una|las?)\b)[a-záéíóúñ]+as?"
    # and common feminine nouns that don't end in "-a"
    r"|[a-záéíóúñ]+(?:ción|sión|dad|tud)(?:es)?|mujer(?:es)?|vez|veces|noches?|leyes|ley"
    r"|calles?|partes?|manos?|flor(?:es)?|llaves?|clases?|frases?|fuentes?|muertes?|torres?)\b"
)
# A noun after the number ("1 libro"), not "1 de mayo" or "1 y 2".
_NOUN_FOLLOWS = re.compile(r" (?!(?:de|del|y|o|a|en|por|para|que)\b)[a-záéíóúñ]")

RULES: list[Rule] = [
    (_ABBREVIATION, _say_abbreviation),
    (_NUMBERED_ABBREVIATION, lambda m: _NUMBERED[m.group(1)]),
    *spoken_roman.roman_rules(_ROMAN),
    *spoken_codes.code_rules(_CODES),
    (_ORDINAL, lambda m: spaced(m, _say_ordinal(m))),
    *spoken_money.money_rules(_MONEY),
    (re.compile(rf"{_NUM}\s?%"), lambda m: number(m.group(1)) + " por ciento"),
    (_UNIT, _say_unit),
    (_TIME, _say_time),
    (re.compile(rf"(?<![\w.,])(\d+)\s?([{VULGAR_CLASS}])"), _mixed),
    (re.compile(f"[{VULGAR_CLASS}]"), lambda m: spaced(m, _fraction(m.group()))),
    (_SLASH_FRACTION, _slash_fraction),
    (re.compile(r"(?<=\d)\s*–\s*(?=\d)"), " a "),
    (re.compile(r"(?<![\w-])[-−](?=\d)"), "menos "),
    (re.compile(r"\s*&\s*"), " y "),
    (re.compile(r"§\s*"), "párrafo "),
    (re.compile(_NUM), _say_number),
    (re.compile(r"\d+"), lambda m: spaced(m, cardinal(int(m.group())))),
]

# Words that send a chunk through the rules (see `spoken`).
TRIGGER = (
    rf"{spoken_codes.TRIGGER}|[ᵉᵒᵃ]"
    rf"|(?<![\w.])(?:{word_alternation([*_ABBREVIATIONS, *_NUMBERED])})"
    rf"|{spoken_roman.trigger(_ROMAN)}"
)


def say(text: str) -> str:
    return apply_rules(text.translate(_SUPERSCRIPTS), RULES)
