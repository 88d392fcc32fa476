"""Spanish units of measure and the currencies the shared money rules do not know.

Units: "3 h" → "tres horas", "9 m³" → "nueve metros cúbicos", "245 mph" → "doscientas cuarenta
y cinco millas por hora" (number words agree with a feminine unit), "1/2 mm" → "medio
milímetro", "2 1/2 km" → "dos kilómetros y medio", "4,51/s" → "cuatro coma cincuenta y uno por
segundo", "-8 °C" → "menos ocho grados Celsius". Names come from babel; the table says which
abbreviation is which unit.

Currencies: any ISO code babel names ("21 NIO" → "veintiún córdobas oro"; lower case too, but
never a code that is also a word) and the abbreviations books print ("3 kr" → "tres coronas",
"Fr. 1" → "un franco", "1 pta" → "una peseta", "Q 50" → "cincuenta quetzales").
"""

from __future__ import annotations

import re
from functools import lru_cache

from babel.core import get_global
from babel.units import format_unit

from audiopub.book.spoken.common import UNIT_IDS, Rule, spaced, word_alternation
from audiopub.book.spoken.currency import CODES, Currency, currency
from audiopub.book.spoken.es_words import cardinal, feminine, masculine, number, partitive

# Abbreviation → babel's unit.
_UNIT_IDS = {
    **UNIT_IDS,
    "in": "length-inch", "mL": "volume-milliliter", "m2": "area-square-meter",
    "km2": "area-square-kilometer", "m3": "volume-cubic-meter", "cm3": "volume-cubic-centimeter",
    "kph": "speed-kilometer-per-hour", "seg": "duration-second", "K": "temperature-kelvin",
    "°": "angle-degree", "kw": "power-kilowatt", "gb": "digital-gigabyte",
    "cc": "volume-cubic-centimeter",
}  # fmt: skip
# Written with a space or in lower case after the degree sign: "8° c", "40 ° k".
_DEGREE = re.compile(r"°\s?([CcFfKk])(?!\w)")


@lru_cache(maxsize=128)
def _names(unit: str) -> tuple[str, str, bool]:
    """(one, many, feminine) for an abbreviation: "mph" → ("milla por hora", …, True)."""
    unit_id = _UNIT_IDS[unit]
    one = format_unit(1, unit_id, length="long", locale="es").split(" ", 1)[1]
    many = format_unit(2, unit_id, length="long", locale="es").split(" ", 1)[1]
    if unit_id == "temperature-kelvin":
        one, many = "grado kelvin", "grados kelvin"
    elif unit_id == "temperature-celsius":
        one, many = "grado centígrado", "grados centígrados"  # as most speakers say it
    return one, many, one.split()[0].endswith("a")


_AMOUNT = (
    r"(?:(\d+)\s)?(\d{1,3})/(\d{1,3})"  # "1/2", "1 1/2"
    r"|(\d{1,3}(?:[ .]\d{3})+(?:,\d+)?|\d+(?:,\d+)?)"  # "1.250", "3,5"
)
_UNIT = re.compile(
    rf"(?<![\w.,/])(?:{_AMOUNT})(?:\s?(/)|\s?)"
    rf"({word_alternation([u for u in _UNIT_IDS if u != '°'])}|°\s?[CcFfKk](?!\w)|°)"
    r"(?![\w/²³]|\.\w)"
)


def _say_unit(match: re.Match[str]) -> str:
    whole, numerator, denominator, amount, per, unit = match.groups()
    unit = _normal_unit(unit)
    one, many, is_feminine = _names(unit)
    if per:
        if amount is None:
            return match.group()
        return spaced(match, f"{number(amount)} por {one}")
    if amount is not None:
        words = number(amount)
        if words == "uno":
            return spaced(match, f"{'una' if is_feminine else 'un'} {one}")
        words = feminine(words) if is_feminine else masculine(words)
        return spaced(match, f"{words} {many}")
    return spaced(match, _fraction_of_unit(whole, int(numerator), int(denominator), unit))


def _normal_unit(unit: str) -> str:
    """ "° c", "°c" → "°C"."""
    degree = _DEGREE.fullmatch(unit)
    return f"°{degree.group(1).upper()}".replace("°K", "K") if degree else unit


def _fraction_of_unit(whole: str | None, numerator: int, denominator: int, unit: str) -> str:
    """ "1/2 mm" → "medio milímetro", "2 1/2 km" → "dos kilómetros y medio"."""
    one, many, is_feminine = _names(unit)
    half = (numerator, denominator) == (1, 2)
    part = partitive(denominator) if 0 < numerator < denominator else None
    if part is None:
        return f"{cardinal(numerator)} sobre {cardinal(denominator)} de {one}"
    if half:
        fraction = "media" if is_feminine else "medio"
    else:
        fraction = f"{masculine(cardinal(numerator))} {part}{'s' if numerator > 1 else ''}"
    if whole is None:
        return f"{fraction} {one}" if half else f"{fraction} de {one}"
    count = int(whole)
    amount = feminine(cardinal(count)) if is_feminine else masculine(cardinal(count))
    name, per, rest = (one if count == 1 else many).partition(" por ")
    return f"{amount} {name} y {fraction}{f' por {rest}' if per else ''}"  # "… y media por hora"


# Currency abbreviations Spanish books print, and lower-case forms of the shared symbols.
_ABBREVIATIONS = {
    "kr": Currency("corona", "coronas", feminine=True),
    "Fr.": Currency("franco", "francos", "céntimo", "céntimos"),
    "fr": Currency("franco", "francos", "céntimo", "céntimos"),
    "pta": Currency("peseta", "pesetas", feminine=True),
    "ptas": Currency("peseta", "pesetas", feminine=True),
    "pts": Currency("peseta", "pesetas", feminine=True),
    "₧": Currency("peseta", "pesetas", feminine=True),
    "Q": Currency("quetzal", "quetzales", "centavo", "centavos"),
    "q": Currency("quetzal", "quetzales", "centavo", "centavos"),
    "rs": Currency("rupia", "rupias", feminine=True),
    "¢": Currency("centavo", "centavos"),
    "cts.": Currency("céntimo", "céntimos"),
    "cts": Currency("céntimo", "céntimos"),
    "US$": Currency("dólar estadounidense", "dólares estadounidenses", "centavo", "centavos"),
    "us$": Currency("dólar estadounidense", "dólares estadounidenses", "centavo", "centavos"),
    "r$": Currency("real", "reales", "centavo", "centavos"),
    "Bs.": Currency("bolívar", "bolívares", "céntimo", "céntimos"),
    "S/": Currency("sol", "soles", "céntimo", "céntimos"),
}
# Codes in use that are also words a book writes next to a number ("2 top", "3 sos").
_WORD_CODES = {
    "ALL", "TOP", "CUP", "BOB", "MAD", "PEN", "SOS", "GEL", "RON", "TRY", "COP", "PHP", "VES",
    "MOP", "BAM", "LAK", "YER",
}  # fmt: skip
# ISO codes in use today somewhere, from babel's territory data (not the retired ones).
_ALL_CODES = {
    code
    for entries in get_global("territory_currencies").values()
    for code, _start, end, tender in entries
    if end is None and tender
}
# In capitals the shared rules read their own codes; in lower case ("21 nio") all are here.
_OTHER_CODES = _ALL_CODES - set(CODES) - _WORD_CODES
_LOWER_CODES = {code.lower() for code in _ALL_CODES - _WORD_CODES}
_CURRENCY = rf"{word_alternation(list(_ABBREVIATIONS))}|[A-Z]{{3}}|[a-z]{{3}}"
_MONEY_AMOUNT = r"(\d{1,3}(?:[.\u00a0 ]\d{3})+(?:,\d+)?|\d+(?:,\d+)?)"
_SCALES = {"millón": "millón", "millones": "millones", "billón": "billón", "billones": "billones",
           "mil millones": "mil millones"}  # fmt: skip
_SCALE = rf"(?:\s+({word_alternation(list(_SCALES))})\b)?"
_MONEY_BEFORE = re.compile(
    # the lookahead turns most places away before the alternation is tried
    rf"(?<![\w$])(?=\S{{1,4}}\s?\d)({_CURRENCY})(?![^\W\d_])\s?{_MONEY_AMOUNT}(?![\d,]){_SCALE}"
)
_MONEY_AFTER = re.compile(
    rf"(?<![\w.,]){_MONEY_AMOUNT}(?![\d,]){_SCALE}(?:\s+de)?\s?({_CURRENCY})(?![\w$])"
)


def _money(written: str) -> Currency | None:
    if written in _ABBREVIATIONS:
        return _ABBREVIATIONS[written]
    if written in _OTHER_CODES or written in _LOWER_CODES:
        name = currency(written.upper(), "es")
        # The adjective says the gender where there is one: "lempira hondureño".
        words = name.one.split()
        gender_word = words[1] if len(words) > 1 and words[1][-1] in "oa" else words[0]
        return Currency(name.one, name.many, feminine=gender_word.endswith("a"))
    return None


def _say_money(written: str, amount: str, scale: str | None) -> str | None:
    money = _money(written)
    if money is None:
        return None
    if scale:
        return f"{number(amount)} {scale} de {money.many}"
    whole_text, _, cents = amount.partition(",")
    whole = int(re.sub(r"\D", "", whole_text) or "0")
    minor = int(cents.ljust(2, "0")[:2]) if cents else 0
    if not whole and minor and money.minor_one:
        count = "un" if minor == 1 else cardinal(minor)
        return f"{count} {money.minor_one if minor == 1 else money.minor_many}"
    count = cardinal(whole)
    count = feminine(count) if money.feminine else masculine(count)
    words = f"{count} {money.one if whole == 1 else money.many}"
    if count.split()[-1] in ("millón", "millones", "billón", "billones"):
        words = f"{count} de {money.many}"
    if minor:
        words += f" con {cardinal(minor)}"
        if minor < 10 and money.minor_one:
            words = words[: -len(cardinal(minor))] + (
                f"un {money.minor_one}" if minor == 1 else f"{cardinal(minor)} {money.minor_many}"
            )
    return words


def _money_before(match: re.Match[str]) -> str:
    written, amount, scale = match.groups()
    words = _say_money(written, amount, scale)
    return match.group() if words is None else spaced(match, words)


def _money_after(match: re.Match[str]) -> str:
    amount, scale, written = match.groups()
    words = _say_money(written, amount, scale)
    return match.group() if words is None else spaced(match, words)


MONEY_RULES: list[Rule] = [(_MONEY_BEFORE, _money_before), (_MONEY_AFTER, _money_after)]
UNIT_RULES: list[Rule] = [(_UNIT, _say_unit)]
