"""French spoken forms: numbers, dates, money, times and common abbreviations.

Covers cardinals with spaces or "." between thousands and "," before decimals ("10 000",
"3,5" → "trois virgule cinq", "3,14" → "trois virgule quatorze"), years (read as cardinals, as
French does), ordinals written "1er", "1re", "2e", "2ème", "1 000e", "XIXe" ("dix-neuvième
siècle"), dates ("1er mai", "02.03.2003", "17/06", "les 17-18 juin"), decades written the
English way ("les 80s" → "les années quatre-vingt"), fractions ("3/4", "1 1/2" → "un et
demi"), degrees ("20 °C"; a bare "1°" opening a list is "premier"), currency (€ $ £), per
cent, clock times ("7 h 45", "7h45", "7:45"), Roman numerals in headings ("Chapitre IV") and
after rulers' names ("Louis XIV" → "Louis quatorze", "François Ier" → "François premier"),
and abbreviations ("M." before a name, "Mme" or "Mᵐᵉ", "Mlle", "Dʳ", "n°", "p.", "etc.",
"c.-à-d.").

Deliberately not covered: feminine "une" for "1" before a feminine noun, "mil" in years, and
liaison-sensitive spellings; engines read those from the words as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from babel.dates import get_month_names

from audiopub.book.spoken import codes, money, roman
from audiopub.book.spoken.common import (
    VULGAR_CLASS,
    Rule,
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


# num2words keeps the plural "s" of "quatre-vingts", "cents", "millions" before "-ième".
_ORDINAL_PLURAL = re.compile(r"(vingt|cent|million|milliard)sième")


def ordinal(value: int) -> str:
    return _ORDINAL_PLURAL.sub(r"\1ième", number_words(value, LANG, "ordinal"))


def number(text: str) -> str:
    """ "1 818,303" → "mille huit cent dix-huit virgule trois cent trois"."""
    whole, comma, decimals = text.partition(",")
    words = comma_decimal(whole, LANG, "virgule")
    return f"{words} virgule {_decimal_words(decimals)}" if comma else words


# Decimals are read as numbers, the way French says them: up to three digits as one number
# ("3,14" → "quatorze"), four to six in pairs ("24,1313" → "treize treize"), leading zeros
# each as "zéro" ("1,05" → "zéro cinq"); a longer tail is read digit by digit.
_LONGEST_DECIMAL_GROUPS = 6


def _decimal_words(digits: str) -> str:
    rest = digits.lstrip("0")
    words = ["zéro"] * (len(digits) - len(rest))
    if len(rest) > _LONGEST_DECIMAL_GROUPS:
        words.append(digit_words(rest, LANG))
    elif len(rest) > 3:
        for start in range(0, len(rest), 2):
            pair = rest[start : start + 2]
            words.append(digit_words(pair, LANG) if pair[0] == "0" else cardinal(int(pair)))
    elif rest:
        words.append(cardinal(int(rest)))
    return " ".join(words)


# "10 000", "1.250", "3,5", "12" (a space between groups only after one to three digits).
_NUM = r"(?<![\w.,])(\d{1,3}(?:[ .]\d{3})+(?:,\d+)?|\d+(?:,\d+)?)(?![\w]|[.,]\d)"

# "1er", "1re", "2e", "2ème", "2nd"; "XIXe", "Ier".
# Thousands may be grouped by spaces: "1 000 000 000e" → "un milliardième".
# Plurals take an "s": "les 1ers", "les 2es", "3èmes".
_ORDINAL = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d+)(er|re|ère|e|ème|nd|nde)(s?)\b"
)
# One letter only as "Ier"/"Ire", or "Ve"/"Xe" before "siècle": "Le" and "Ce" are words.
_ROMAN_ORDINAL = re.compile(r"\b([IVXLC]{2,}|I(?=er|re|ère)|[VX](?=e\s+siècle))(er|re|ère|e|ème)\b")


def _say_ordinal(digits: int, suffix: str) -> str:
    if digits == 1:
        return "première" if suffix in ("re", "ère") else "premier"
    return ordinal(digits)


def _digits_value(written: str) -> int:
    """ "1 000 000" → 1000000: a whole number whose thousands may be grouped by spaces."""
    return int("".join(char for char in written if char.isdigit()))


def _say_roman_ordinal(match: re.Match[str]) -> str:
    value = roman_value(match.group(1))
    return match.group() if value is None else _say_ordinal(value, match.group(2))


def _feminine(words: str) -> str:
    """ "vingt et un" → "vingt et une": numbers before a feminine noun ("livres")."""
    return re.sub(r"\bun$", "une", words)


_MONEY = money.MoneyWords(
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


# "1 000 000 000 000": the groups after the first look like a telephone number ("000 000
# 000"), but digits that continue a number grouped by spaces are never a code.
_GROUP_BEFORE = re.compile(r"\d[ \u00a0\u202f]$")
_DIGITS_ONLY = re.compile(r"[\d\s.-]+")


def _outside_numbers(rule: Rule) -> Rule:
    pattern, replacement = rule

    def say(match: re.Match[str]) -> str:
        text, start = match.string, match.start()
        if _GROUP_BEFORE.search(text, max(0, start - 2), start) and _DIGITS_ONLY.fullmatch(
            match.group()
        ):
            return match.group()
        return replacement(match) if callable(replacement) else match.expand(replacement)

    return pattern, say


_CODES = codes.CodeWords(
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


# "3/4", "-1/2" (the sign is the fraction's).
_SLASH_FRACTION = re.compile(r"(?<![\w./,-])([-−]?)(\d{1,2})/(\d{1,2})(?![\w/]|[.,]\d)")


# "1/100", "3/1000": a denominator that is a power of ten may be longer than two digits.
_DECIMAL_FRACTION = re.compile(r"(?<![\w./,-])([-−]?)(\d{1,3})/(10{2,9})(?![\w/]|[.,]\d)")


def _slash_fraction(match: re.Match[str]) -> str:
    sign, numerator, denominator = match.group(1), int(match.group(2)), int(match.group(3))
    if denominator < 2:
        return match.group()
    words = _fraction_of(numerator, denominator)
    return spaced(match, f"moins {words}" if sign else words)


# Denominators with names of their own, one and many: "trois demis", "deux tiers".
_DENOMINATORS = {2: ("demi", "demis"), 3: ("tiers", "tiers"), 4: ("quart", "quarts")}


def _fraction_of(numerator: int, denominator: int) -> str:
    if denominator in _DENOMINATORS and numerator > 0:
        one, many = _DENOMINATORS[denominator]
        return f"{cardinal(numerator)} {one if numerator == 1 else many}"
    return fraction_of(numerator, denominator, _VULGAR_WORDS, cardinal, ordinal)


# "1 1/2", "-4 1/3": a whole number, a space, then a fraction with the whole's sign.
_MIXED_SLASH = re.compile(
    r"(?<![\w.,/-])([-−]?)(\d{1,3}) (\d{1,2})/(\d{1,2}|10{2,9})(?![\w/]|[.,]\d)"
)


def _say_mixed_slash(match: re.Match[str]) -> str:
    sign, whole, numerator, denominator = match.groups()
    if int(denominator) < 2 or int(numerator) >= int(denominator):
        return match.group()
    rest = _fraction_of(int(numerator), int(denominator))
    # "un et demi", not "un et un demi"
    rest = "demi" if rest == "un demi" else rest
    words = f"{cardinal(int(whole))} et {rest}"
    return spaced(match, f"moins {words}" if sign else words)


_MONTHS = {number: name for number, name in get_month_names("wide", locale=LANG).items()}
_MONTH_NAME = word_alternation(list(_MONTHS.values()))


def _day(value: int) -> str:
    return "premier" if value == 1 else cardinal(value)


def _date_words(day: str, month: str, year: str | None) -> str | None:
    """ "02", "03", "2003" → "deux mars deux mille trois"; None when it is no calendar date."""
    day_value, month_value = int(day), int(month)
    if not (1 <= day_value <= 31 and 1 <= month_value <= 12):
        return None
    words = f"{_day(day_value)} {_MONTHS[month_value]}"
    return f"{words} {cardinal(int(year))}" if year else words


_DATE_END = r"(?![\w/]|[.,/-]\d)"
# "02.03.2003", "2/3/2003", "02.03.03": day, month and year, one separator throughout; a
# two-digit year only after a day and month of two digits each.
_NUMERIC_DATE = re.compile(
    rf"(?<![\w.,/-])(?:(\d{{1,2}})([./-])(\d{{1,2}})\2(\d{{4}})"
    rf"|(\d\d)([./])(\d\d)\6(\d\d)){_DATE_END}"
)
# "17.06", "17/06", "31/12", "2.09", "17-06": no year, so the month must be written with two
# digits; after a slash, the day too or the month with a leading zero ("3/10" is a fraction);
# after a hyphen, the month with a leading zero ("10-12" is a range).
_DAY_MONTH = re.compile(
    rf"(?<![\w.,/-])(?:(\d{{1,2}})(?:\.(0[1-9]|1[0-2])|[/-](0[1-9]))|(\d\d)/(1[0-2])){_DATE_END}"
)
# "2003-03-02": the ISO order.
_ISO_DATE = re.compile(rf"(?<![\w.,/-])(\d{{4}})-(\d{{2}})-(\d{{2}}){_DATE_END}")
# "les 17/18 juin", "17-18-19 mars": days listed before a month's name.
_DAY_LIST = re.compile(
    rf"(?<![\w.,/-])(\d{{1,2}}(?:([/-])\d{{1,2}})(?:\2\d{{1,2}})*)(?=\s+(?:{_MONTH_NAME})\b)"
)


def _say_numeric_date(match: re.Match[str]) -> str:
    groups = match.groups()
    day, _separator, month, year = groups[:4] if groups[0] else groups[4:]
    return spaced(match, _date_words(day, month, year) or match.group())


def _say_day_month(match: re.Match[str]) -> str:
    day, dotted, padded, two_digit_day, two_digit_month = match.groups()
    month = dotted or padded or two_digit_month
    return spaced(match, _date_words(day or two_digit_day, month, None) or match.group())


def _say_iso_date(match: re.Match[str]) -> str:
    year, month, day = match.groups()
    return spaced(match, _date_words(day, month, year) or match.group())


def _say_day_list(match: re.Match[str]) -> str:
    days = [int(day) for day in re.split(r"[/-]", match.group(1))]
    if not all(1 <= day <= 31 for day in days):
        return match.group()
    return spaced(match, " ".join(_day(day) for day in days))


# "les 80s", "the 1920s" written the English way: "les années quatre-vingt".
_DECADE = re.compile(r"(?<![\w'’])['’]?(\d\d\d0|[1-9]0)s\b")


def _say_decade(match: re.Match[str]) -> str:
    # "années quatre-vingt": the decade's number takes no plural "s"
    words = re.sub(r"(vingt|cent)s$", r"\1", cardinal(int(match.group(1))))
    return spaced(match, f"années {words}")


# "20 °C", "45°", "-3,5°F": degrees; a bare "1°" to "20°" opening a line or after ":" or ";"
# is the ordinal of a list ("1° les frais" → "premier les frais").
_DEGREE = re.compile(r"(?<![\w.,])([-−]?)(\d+(?:,\d+)?)\s?°(?:\s?([CF])(?![\w]))?")
_LIST_OPENING = re.compile(r"(?:^|[\n:;])[\s\"'«(]*$")
_SCALES = {"C": " Celsius", "F": " Fahrenheit"}
_LONGEST_LIST = 20


def _say_degree(match: re.Match[str]) -> str:
    sign, amount, scale = match.groups()
    if not sign and not scale and amount.isdigit() and int(amount) <= _LONGEST_LIST:
        if _LIST_OPENING.search(match.string, 0, match.start()):
            return spaced(match, _say_ordinal(int(amount), "e"))
    words = number(amount)
    # French keeps the singular below two: "un degré", "un virgule cinq degré"
    unit = "degré" if float(amount.replace(",", ".")) < 2 else "degrés"
    words = f"{'moins ' if sign else ''}{words} {unit}{_SCALES.get(scale or '', '')}"
    return spaced(match, words)


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
    "N°": "numéro",
    "Nº": "numéro",
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
    "Drs": "docteurs",
    "Dre": "docteure",
    "Dres": "docteures",
    "Pr": "professeur",
    "Cie": "compagnie",
    # Canadian parliamentary style: "le hon. Jean Chrétien"
    "hon.": "honorable",
    "le hon.": "l'honorable",
    "Le hon.": "L'honorable",
}
_BEFORE_NAMES = {"Me", "St", "Ste", "Dr", "Drs", "Dre", "Dres", "Pr"}
_NAME_FOLLOWS = re.compile(r"[\s-]+[A-ZÀ-Þ]")
_MAY_END = {"etc.", "av. J.-C.", "apr. J.-C.", "env."}
_ABBREVIATION = re.compile(rf"(?<![\w.])({word_alternation(list(_ABBREVIATIONS))})(?![\w])(?!-\w)")


def _say_abbreviation(match: re.Match[str]) -> str:
    written = match.group(1)
    if written in _BEFORE_NAMES and not _NAME_FOLLOWS.match(match.string, match.end()):
        return written  # "Me" is also the pronoun "me"
    words = _ABBREVIATIONS[written]
    return words + sentence_stop(match) if written in _MAY_END else words


# "Mᵐᵉ", "Mˡˡᵉˢ", "Dʳ", "Cⁱᵉ": a capital and superscript letters is always an abbreviation
# (never the pronoun "me"), read from the table once its letters are made plain.
_SUPERSCRIPT_LETTERS = {
    "ᵃ": "a", "ᵇ": "b", "ᶜ": "c", "ᵈ": "d", "ᵉ": "e", "ᶠ": "f", "ᵍ": "g", "ʰ": "h", "ⁱ": "i",
    "ʲ": "j", "ᵏ": "k", "ˡ": "l", "ᵐ": "m", "ⁿ": "n", "ᵒ": "o", "ᵖ": "p", "ʳ": "r", "ˢ": "s",
    "ᵗ": "t", "ᵘ": "u", "ᵛ": "v", "ʷ": "w", "ˣ": "x", "ʸ": "y", "ᶻ": "z",
}  # fmt: skip
_PLAIN_LETTERS = str.maketrans(_SUPERSCRIPT_LETTERS)
_SUPERSCRIPT_ABBREVIATION = re.compile(rf"(?<![\w.])[A-Z][{''.join(_SUPERSCRIPT_LETTERS)}]+(?!\w)")


def _say_superscript_abbreviation(match: re.Match[str]) -> str:
    return _ABBREVIATIONS.get(match.group().translate(_PLAIN_LETTERS), match.group())


# "M. Dupont": "Monsieur" only before a capitalised name.
_MONSIEUR = re.compile(r"(?<![\w.])M\.(?=\s+[A-ZÀ-Þ][a-zà-ÿ])")

_ROMAN = roman.RomanWords(
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


# "10-12 ans", "1914-1918": two numbers joined by a hyphen are a range.
_HYPHEN_RANGE = re.compile(r"(?<![\w.,-])([1-9]\d*)-(?=[1-9]\d*(?![\w-]|[.,]\d))")

RULES: list[Rule] = [
    (_ABBREVIATION, _say_abbreviation),
    (_MONSIEUR, "Monsieur"),
    (_NUMBERED_ABBREVIATION, lambda m: _NUMBERED[m.group(1)]),
    (_ROMAN_ORDINAL, _say_roman_ordinal),
    (_ISO_DATE, _say_iso_date),
    (_NUMERIC_DATE, _say_numeric_date),
    (_DAY_LIST, _say_day_list),
    (_DAY_MONTH, _say_day_month),
    (_DECADE, _say_decade),
    *roman.roman_rules(_ROMAN),
    (_PHONE, lambda m: ", ".join(_phone_pair(pair) for pair in re.findall(r"\d\d", m.group()))),
    *(_outside_numbers(rule) for rule in codes.code_rules(_CODES)),
    (_DEGREE, _say_degree),
    (
        _ORDINAL,
        lambda m: spaced(m, _say_ordinal(_digits_value(m.group(1)), m.group(2)) + m.group(3)),
    ),
    *money.money_rules(_MONEY),
    (re.compile(rf"{_NUM}\s?%"), lambda m: number(m.group(1)) + " pour cent"),
    (re.compile("%"), lambda m: spaced(m, "pour cent")),  # "un taux en %"
    (_UNIT, _say_unit),
    (_TIME, _say_time),
    (_MIXED_SLASH, _say_mixed_slash),
    (re.compile(rf"(?<![\w.,])(\d+)\s?([{VULGAR_CLASS}])"), _mixed),
    (re.compile(f"[{VULGAR_CLASS}]"), lambda m: spaced(m, _fraction(m.group()))),
    (_SLASH_FRACTION, _slash_fraction),
    (_DECIMAL_FRACTION, _slash_fraction),
    (re.compile(r"(?<=\d)\s*–\s*(?=\d)"), " à "),
    (_HYPHEN_RANGE, r"\1 à "),
    (re.compile(r"(?<![\w-])[-−](?=\d)"), "moins "),
    (re.compile(r"\s*&\s*"), " et "),
    (re.compile(r"§\s*"), "paragraphe "),
    (re.compile(_NUM), lambda m: spaced(m, number(m.group(1)))),
    (re.compile(r"\d+"), lambda m: spaced(m, cardinal(int(m.group())))),
]

# Words that send a chunk through the rules (see `spoken`).
TRIGGER = (
    rf"{codes.TRIGGER}|[ᵉᵒᵃʳ]|[A-Z][ᵐˡⁱᵗ]"
    rf"|(?<![\w.])(?:{word_alternation([*_ABBREVIATIONS, *_NUMBERED, 'M.'])})"
    rf"|{roman.trigger(_ROMAN)}|\b[IVXLC]+(?:er|re|e)\b"
)


# Rules that can only match when the text holds a telltale: checking for it first is cheaper
# than the rule's own search, which tries its lookbehind at every position.
_DATE_HINT = re.compile(r"\d[./-]\d")
_SUPERSCRIPT_HINT = re.compile(f"[{''.join(_SUPERSCRIPT_LETTERS)}]")
_GATES: dict[re.Pattern[str], Callable[[str], object]] = {
    **dict.fromkeys((_ISO_DATE, _NUMERIC_DATE, _DAY_LIST, _DAY_MONTH), _DATE_HINT.search),
    _DECADE: lambda text: "0s" in text,
    _DEGREE: lambda text: "°" in text,
    **dict.fromkeys((_MIXED_SLASH, _DECIMAL_FRACTION), lambda text: "/" in text),
    _HYPHEN_RANGE: lambda text: "-" in text,
}
_GATED_RULES = [(pattern, replacement, _GATES.get(pattern)) for pattern, replacement in RULES]


def say(text: str) -> str:
    if _SUPERSCRIPT_HINT.search(text):
        text = _SUPERSCRIPT_ABBREVIATION.sub(_say_superscript_abbreviation, text)
    text = text.translate(_SUPERSCRIPTS)
    for pattern, replacement, gate in _GATED_RULES:
        if gate is None or gate(text):
            text = pattern.sub(replacement, text)
    return text
