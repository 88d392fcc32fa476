"""Spanish dates and clock times.

Dates: "1 enero" → "primero de enero", "10 mayo 1990" → "diez de mayo de mil novecientos
noventa", "abril 30" and "abr. 22" (month first) → "treinta de abril", "10/10/1989" (day first)
and "1990-02-28" → "diez de octubre de mil novecientos ochenta y nueve". Month names come from
babel. The first of the month is "primero", as most Spanish speakers say it.

Times: "7:45", "13.30", "24:50", "12:00:00", "12h30", with "a.m."/"p.m." ("de la mañana",
"de la tarde", "de la noche", "del mediodía"), "h" (dropped: "a las 13.00 h" → "a las trece")
and a time zone ("GMT-3" → "G M T menos tres"). A dotted time ("13.30") is read only where
nothing says it is a quantity: not before a unit, a currency or a word other than after
"la"/"las". A duration in hours and minutes joins its last part with "y" ("15 h 10 min 40 seg"
→ "quince horas diez minutos y cuarenta segundos").
"""

from __future__ import annotations

import re

from babel.dates import get_month_names

from audiopub.book.spoken.common import Rule, sentence_stop, spaced, word_alternation
from audiopub.book.spoken.es_words import cardinal, feminine, masculine

_MONTH_NAMES = [str(name) for name in get_month_names("wide", locale="es").values()]
_MONTHS = {name: index for index, name in enumerate(_MONTH_NAMES, 1)}
_MONTHS.update({name.capitalize(): index for name, index in list(_MONTHS.items())})
# "ene.", "sept.", "sep.", "Abr.": abbreviations only with their full stop.
_ABBREVIATED = {
    f"{str(name)}.": index
    for index, name in get_month_names("abbreviated", locale="es").items()
}  # fmt: skip
_ABBREVIATED["sep."] = 9
_ABBREVIATED.update({name.capitalize(): index for name, index in list(_ABBREVIATED.items())})
_MONTH = rf"(?:{word_alternation(list(_ABBREVIATED))}|\b(?:{word_alternation(list(_MONTHS))})\b)"
_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?!\d)"
_YEAR = r"\d{1,4}(?!\d)"

# "1 enero", "5 de febrero de 1990", "30 julio del 2020".
_DAY_MONTH = re.compile(
    rf"(?<![\w.,/-])({_DAY})(?:\s+de)?\s+({_MONTH})"
    rf"(?:(,?\s+(?:de\s+|del\s+)?)(\d{{3,4}}(?!\d)|(?<=de\s)(?:{_YEAR})|(?<=del\s)(?:{_YEAR})))?"
)
# "abril 30", "junio 11 2000", "abr. 22, 1990"; not "en mayo 5 personas".
_MONTH_DAY = re.compile(
    rf"(?<![\w.])({_MONTH})\s+({_DAY})(?:(,?\s+(?:de\s+|del\s+)?)(\d{{4}}))?"
    r"(?![\w,.]\d|\s+[a-záéíóúñ]|[\w/])"
)
# "10/10/1989", "10-10-1989", "10.10.1989" (day first); "1990-02-28" (ISO).
_NUMERIC = re.compile(
    r"(?<![\w/.,-])(?:(\d{1,2})([/.-])(\d{1,2})\2(\d{4})|(\d{4})-(\d{1,2})-(\d{1,2}))"
    r"(?![\w/-]|[.,]\d)"
)


def _day(value: int) -> str:
    return "primero" if value == 1 else cardinal(value)


def _month(written: str) -> str:
    index = _MONTHS.get(written) or _ABBREVIATED[written]
    name = _MONTH_NAMES[index - 1]
    return name.capitalize() if written[0].isupper() else name


def _date(day: int, month: int, year: int | None, joiner: str = " de ") -> str:
    words = f"{_day(day)} de {_MONTH_NAMES[month - 1]}"
    return words + (f"{joiner}{cardinal(year)}" if year is not None else "")


def _say_day_month(match: re.Match[str]) -> str:
    day, month, joiner, year = match.groups()
    words = f"{_day(int(day))} de {_month(month)}"
    if year:
        words += " del " if joiner.strip().endswith("del") else " de "
        words += cardinal(int(year))
    if month.endswith(".") and not year:
        words += sentence_stop(match)
    return words


def _say_month_day(match: re.Match[str]) -> str:
    month, day, joiner, year = match.groups()
    words = f"{_day(int(day))} de {_month(month)}"
    if year:
        words += " del " if joiner.strip().endswith("del") else " de "
        words += cardinal(int(year))
    return words


def _say_numeric(match: re.Match[str]) -> str:
    day, _mark, month, year, iso_year, iso_month, iso_day = match.groups()
    if iso_year:
        day, month, year = iso_day, iso_month, iso_year
    if not (1 <= int(month) <= 12 and 1 <= int(day) <= 31):
        return match.group()
    return _date(int(day), int(month), int(year))


_ZONES = "GMT UTC CET CEST EST EDT CST CDT MST MDT PST PDT WET WEST ART".split()
_ZONE = rf"(?:{'|'.join(_ZONES)}|{'|'.join(zone.lower() for zone in _ZONES)})"
_OFFSET = r"(?:\s?([+\-−])\s?(\d{1,2})(?::?(\d{2}))?(?!\d))?"
_TIME = re.compile(
    r"(?<![\w.,:])(2[0-4]|[01]?\d)(?:(:)([0-5]\d)(?::([0-5]\d))?|\.([0-5]\d))(?![\d]|[.,:]\d)"
    r"(?:(\s?)([ap])\.?\s?m\b\.?|\s?(h|hs|hrs)\b\.?)?"
    rf"(?:\s*\b({_ZONE}){_OFFSET}\b)?"
)
# "12h30", "12h02m00s": a clock time written with letters, no spaces.
_LETTER_TIME = re.compile(r"(?<![\w.,:])(2[0-4]|[01]?\d)h([0-5]\d)(?:m([0-5]\d)s)?(?!\w)")
# "15 h 10 min 40 seg", "2 h 30 min": a duration; "y" joins its last part.
_DURATION = re.compile(r"(?<![\w.,:])(\d+)\s?h\s(\d+)\s?min\.?(?:\s(\d+)\s?(?:seg|s)\b\.?)?(?!\w)")
# "7 a.m.", "5pm": an hour with no minutes, then the part of the day.
_HOUR_MERIDIEM = re.compile(r"(?<![\w.,:])(1[0-2]|0?\d)\s?([ap])\.?\s?m\b(\.?)")
# "GMT-3" without a time before it; a zone alone is left to the engine.
_ZONE_ALONE = re.compile(rf"\b({_ZONE})\s?([+\-−])\s?(\d{{1,2}})(?::?(\d{{2}}))?(?![\w:])")
# What makes "1.50" a quantity, not a time: a unit, currency or word after it.
_QUANTITY_FOLLOWS = re.compile(r"\s*(?:[^\W\d_]|[%€$£¥°'\"])")
_HOUR_BEFORE = re.compile(r"\blas?\s+$", re.IGNORECASE)
_CURRENCY_BEFORE = re.compile(r"[$€£¥₧]\s?$")


def _hour(value: int) -> str:
    return feminine(cardinal(value))  # "la una", "las veintiuna"


def _zone(zone: str, sign: str | None, hours: str | None, minutes: str | None) -> str:
    words = " ".join(zone.upper())
    if sign and hours:
        words += f" {'más' if sign == '+' else 'menos'} {cardinal(int(hours))}"
        if minutes and int(minutes):
            words += f" {cardinal(int(minutes))}"
    return words


def _say_time(match: re.Match[str]) -> str:
    hour_text, colon, minutes, seconds, dotted, _space, meridiem, h_mark = match.groups()[:8]
    zone, sign, offset_hours, offset_minutes = match.groups()[8:]
    hour = int(hour_text)
    if not colon:
        minutes = dotted
        before = match.string[: match.start()]
        marked = meridiem or h_mark or zone
        if _CURRENCY_BEFORE.search(before) or (
            not marked
            and _QUANTITY_FOLLOWS.match(match.string, match.end())
            and not _HOUR_BEFORE.search(before)
        ):
            return match.group()  # "$2.50", "1.50 metros"
    words = _hour(hour)
    if int(minutes):
        words += f" y {cardinal(int(minutes))}"
    if seconds and int(seconds):
        words += f" y {cardinal(int(seconds))} segundos"
    if meridiem:
        words += " " + _part_of_day(hour, meridiem == "p")
    if zone:
        words += " " + _zone(zone, sign, offset_hours, offset_minutes)
    elif match.group().endswith("."):
        words += sentence_stop(match)  # "p.m." or "hrs." may end the sentence
    return words


def _part_of_day(hour: int, afternoon: bool) -> str:
    if not afternoon:
        return "de la noche" if hour == 12 else "de la mañana"
    if hour == 12:
        return "del mediodía"
    return "de la noche" if 8 <= hour <= 11 else "de la tarde"


def _say_letter_time(match: re.Match[str]) -> str:
    hour, minutes, seconds = match.groups()
    words = _hour(int(hour)) + (f" y {cardinal(int(minutes))}" if int(minutes) else "")
    if seconds and int(seconds):
        words += f" y {cardinal(int(seconds))} segundos"
    return spaced(match, words)


def _say_duration(match: re.Match[str]) -> str:
    parts = [
        _count(int(value), one, many)
        for value, (one, many) in zip(match.groups(), _DURATION_UNITS, strict=True)
        if value is not None
    ]
    return spaced(match, " ".join(parts[:-1]) + " y " + parts[-1])


_DURATION_UNITS = (("hora", "horas"), ("minuto", "minutos"), ("segundo", "segundos"))


def _count(value: int, one: str, many: str) -> str:
    if value == 1:
        return f"{'una' if one == 'hora' else 'un'} {one}"
    words = cardinal(value)
    return f"{feminine(words) if one == 'hora' else masculine(words)} {many}"


def _say_hour_meridiem(match: re.Match[str]) -> str:
    hour, meridiem, stop = match.groups()
    words = f"{_hour(int(hour))} {_part_of_day(int(hour), meridiem == 'p')}"
    return spaced(match, words + (sentence_stop(match) if stop else ""))


def _say_zone(match: re.Match[str]) -> str:
    return _zone(*match.groups())


RULES: list[Rule] = [
    (_NUMERIC, _say_numeric),
    (_DAY_MONTH, _say_day_month),
    (_MONTH_DAY, _say_month_day),
]
TIME_RULES: list[Rule] = [
    (_TIME, _say_time),
    (_LETTER_TIME, _say_letter_time),
    (_DURATION, _say_duration),
    (_HOUR_MERIDIEM, _say_hour_meridiem),
    (_ZONE_ALONE, _say_zone),
]
