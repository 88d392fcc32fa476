"""English dates and clock times as a narrator says them.

Dates: the day is an ordinal in every order books use ("June 30" → "June thirtieth", "15
january" → "the fifteenth of January", "22nd july 2012" → "the twenty-second of July twenty
twelve", "the 4th of March", ISO "2012-07-22"), with abbreviated months ("Sept. 3", "3 Jan",
"FEB 3", "25 sept.", "Mar-15"). A lower-case "may" or "march" is a word, never a month. Dates
in figures ("10/06/2005", "15.01.2020") take the day from the part that can't be a month and
otherwise put the month first, the American order.

Clock times: a twelve-hour time is said as it is written ("7:45" → "seven forty-five", "7:00"
→ "seven o'clock", "5pm" → "five in the evening"). A 24-hour time, one with a leading zero or
an hour past twelve, is said the way 24-hour clocks are read aloud: "01:00" → "oh one hundred
hours", "23:00" → "twenty-three hundred hours", "13:45" → "thirteen forty-five". A range of
times names the part of the day once: "5pm-7 pm" → "five to seven in the evening". A time
with seconds names each part ("09:15:45" → "nine hours fifteen minutes and forty-five
seconds"); "1.15 p.m." is a time; a time zone after it is said as its letters ("EST").
"""

from __future__ import annotations

import re

from audiopub.book.spoken.common import Rule, sentence_stop
from audiopub.book.spoken.en_words import cardinal, ordinal, year

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip
_ABBREVIATED = {"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "Jun": 6, "Jul": 7, "Aug": 8,
                "Sep": 9, "Sept": 9, "Oct": 10, "Nov": 11, "Dec": 12}  # fmt: skip
# Capitalised or upper-case month names, their abbreviations (with or without a full stop, in
# capitals or lower case too: "FEB", "SEPT.", "sept.", "jan"; never "mar"), and lower-case
# names that are not also common words. Every rule wants a day or a year beside them.
_MONTH = (
    r"(?:" + "|".join(MONTHS) + "|" + "|".join(m.upper() for m in MONTHS)
    + r"|(?:" + "|".join(_ABBREVIATED) + "|" + "|".join(a.upper() for a in _ABBREVIATED)
    + r")\b\.?"
    + r"|(?:" + "|".join(a.lower() for a in _ABBREVIATED if a != "Mar") + r")\b\.?"
    + "|" + "|".join(m.lower() for m in MONTHS if m not in ("May", "March")) + r")"
)  # fmt: skip
_ABBREVIATED_ANY = {key.lower(): value for key, value in _ABBREVIATED.items()}
_DAY = r"([0-3]?\d)(?:st|nd|rd|th|d)?"
_YEAR = r"(\d{4}|['’]\d\d)(?![\d:])"


def month_name(written: str) -> str:
    """ "june", "JUNE", "Jun." → "June"."""
    key = written.rstrip(".").lower()
    if key in _ABBREVIATED_ANY:
        return MONTHS[_ABBREVIATED_ANY[key] - 1]
    return key.capitalize()


def _year(written: str) -> str:
    return year(int(written.lstrip("'’"))) if written[0].isdigit() else short_year(written[1:])


def short_year(digits: str) -> str:
    """ "'85" → "eighty-five", "'07" → "oh seven"."""
    return f"oh {cardinal(int(digits[1]))}" if digits[0] == "0" else cardinal(int(digits))


_DAY_MONTH = re.compile(
    rf"\b(?:(the|The)\s+)?{_DAY}(?:\s+of)?\s+({_MONTH})(?![\w])(?:(,?\s+){_YEAR})?"
)
# "June 30", "FEB 3 2021", "Mar-15", "Jan-15-2020", "Sept. 19-20".
_MONTH_DAY = re.compile(
    rf"(?<![\w.])({_MONTH})(?:\s+|-(?=\d)){_DAY}\b(?![:.,]\d|\s?[ap]\.?m\b|\s*%)"
    rf"(?:\s*[-–]\s*{_DAY}\b(?![:.,\d-]\d))?(?:(,?\s+|-){_YEAR})?"
)
# Dates in figures: "10/06/2005", "15.01.2020", "15-01-2020", "11/17/05", "1998/2/30". The
# day is whichever part can't be a month; where both can, the month comes first, the American
# order English books mostly follow.
_NUMERIC_DATE = re.compile(
    r"(?:(\d(?<![\w./:-]\d)\d?)([/.-])(\d{1,2})\2(\d{4}|\d\d)"
    r"|(\d(?<![\w./:-]\d)\d{3})([/.])(\d{1,2})\6(\d{1,2}))(?![\w/:-]|[.,]\d)"
)
# "Feb. 2012", "SEPTEMBER 1939": a month and a year; "03/2012", "2012/03": the same in figures
# (two figures for the month: "1/2000" is a fraction).
_MONTH_YEAR = re.compile(rf"(?<![\w.])({_MONTH})\s+(\d{{4}})(?![\d:.,]?\d)")
_NUMERIC_MONTH_YEAR = re.compile(
    r"(?:([01](?<![\w./:-][01])\d)/(1[5-9]\d\d|20\d\d)"
    r"|([12](?<![\w./:-][12])\d{3})/(0[1-9]|1[0-2]))"
    r"(?![\w/:-]|[.,]\d)"
)


def _say_numeric_month_year(match: re.Match[str]) -> str:
    month, when, when_first, month_last = match.groups()
    if not 1 <= int(month or month_last) <= 12 or not 1500 <= int(when or when_first) <= 2099:
        return match.group()
    return f"{MONTHS[int(month or month_last) - 1]} {year(int(when or when_first))}"


_ISO_DATE = re.compile(r"(?<![\w.-])(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?![\w-])")


def _say_day_month(match: re.Match[str]) -> str:
    the, day, month, comma, when = match.groups()
    if not 1 <= int(day) <= 31:
        return match.group()
    words = f"{the or 'the'} {ordinal(int(day))} of {month_name(month)}"
    return words + (f"{(comma or ' ').replace(',', '')}{_year(when)}" if when else "")


def _say_month_day(match: re.Match[str]) -> str:
    month, day, last_day, comma, when = match.groups()
    if not 1 <= int(day) <= 31 or (last_day and not 1 <= int(last_day) <= 31):
        return match.group()
    words = f"{month_name(month)} {ordinal(int(day))}"
    if last_day:  # "Sept. 19-20"
        words += f" to {ordinal(int(last_day))}"
    return words + (f"{comma.replace('-', ' ')}{_year(when)}" if when else "")


def _say_numeric_date(match: re.Match[str]) -> str:
    first, _sep, second, when, long_year, _sep2, month_part, day_part = match.groups()
    if long_year:
        month, day, when = int(month_part), int(day_part), long_year
        day_first = False
    else:
        day_first = int(first) > 12
        month, day = (int(second), int(first)) if day_first else (int(first), int(second))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return match.group()
    said_year = year(int(when)) if len(when) == 4 else short_year(when)
    if day_first:
        return f"the {ordinal(day)} of {MONTHS[month - 1]} {said_year}"
    return f"{MONTHS[month - 1]} {ordinal(day)} {said_year}"


def _say_iso_date(match: re.Match[str]) -> str:
    when, month, day = match.groups()
    return f"the {ordinal(int(day))} of {MONTHS[int(month) - 1]} {year(int(when))}"


# --- clock times --------------------------------------------------------------------------------

_HALF = r"(?:\s?([aApP])\.?\s?[mM]\b(\.)?)"
_CLOCK = r"([01]?\d|2[0-3])(?::([0-5]\d))?"
_TIME = re.compile(rf"(?<![\d:.,]){_CLOCK}(?(2)(?![\d:])|(?=\s?[aApP]\.?\s?[mM]\b)){_HALF}?")
_TIME_RANGE = re.compile(
    rf"(?<![\d:.,])([01]?\d|2[0-3])(?::([0-5]\d))?{_HALF}?\s*(?:[-–]|\bto\b)\s*{_CLOCK}{_HALF}"
)


def _part_of_day(hour: int, minutes: str | None, half: str) -> str:
    if half in "aA":
        return " at night" if hour == 12 else " in the morning"
    if hour == 12 and minutes in (None, "00"):
        return " noon"
    return " in the afternoon" if hour < 6 or hour == 12 else " in the evening"


def clock(hour: str, minutes: str | None, half: str | None) -> str:
    """The time without its part of the day: "seven forty-five", "oh one hundred hours"."""
    if not half and minutes is not None and (hour.startswith("0") or int(hour) > 12):
        words = f"oh {cardinal(int(hour))}" if hour.startswith("0") else cardinal(int(hour))
        if hour in ("0", "00"):
            words = "zero"
        if minutes == "00":
            return words + " hundred hours"
        return f"{words} {_minutes(minutes)}"
    words = cardinal(int(hour))
    if minutes is None:
        return words
    if minutes == "00":
        return words + " o'clock"
    return f"{words} {_minutes(minutes)}"


def _minutes(minutes: str) -> str:
    return f"oh {cardinal(int(minutes))}" if minutes[0] == "0" else cardinal(int(minutes))


def _say_time(match: re.Match[str]) -> str:
    hour, minutes, half, stop = match.groups()
    words = clock(hour, minutes, half)
    if half:
        if minutes == "00":
            words = words.removesuffix(" o'clock")
        words += _part_of_day(int(hour), minutes, half)
        if stop:
            words += sentence_stop(match)
    return words


def _say_time_range(match: re.Match[str]) -> str:
    hour1, minutes1, half1, _stop1, hour2, minutes2, half2, stop2 = match.groups()
    if half1 and half1.lower() != half2.lower():
        first = clock(hour1, minutes1, half1) + _part_of_day(int(hour1), minutes1, half1)
    else:
        first = clock(hour1, minutes1, half2)
    last = clock(hour2, minutes2, half2) + _part_of_day(int(hour2), minutes2, half2)
    first = first.removesuffix(" o'clock")
    last = last.replace(" o'clock", "")
    return f"{first} to {last}" + (sentence_stop(match) if stop2 else "")


# "09:15:45", "10:00:00 p.m.": hours, minutes and seconds, each named.
_TIME_SECONDS = re.compile(rf"(\d(?<![\d:.,]\d)\d?):([0-5]\d):([0-5]\d)(?![\d:]|[.,]\d){_HALF}?")
# "1.15 p.m.": a full stop between hour and minutes, as British books write times.
_DOTTED_TIME = re.compile(r"(\d(?<![\d:.,]\d)\d?)\.([0-5]\d)(?=\s?[aApP]\.?\s?[mM]\b)")
# A time zone after a part of the day, however written ("p.m.est", "pm E.S.T."): its letters.
_ZONE = re.compile(
    r"(morning|evening|afternoon|at night| noon)\.?\s?"
    r"(?i:[ecmpa]\.?[sd]\.?t|g\.?m\.?t|u\.?t\.?c)\b\.?(?!\w)"
)


def _counted(value: int, unit: str) -> str:
    return f"{cardinal(value)} {unit}{'' if value == 1 else 's'}"


def _say_time_seconds(match: re.Match[str]) -> str:
    hour, minutes, seconds, half, stop = match.groups()
    if int(hour) > 23:
        return match.group()
    words = (
        f"{_counted(int(hour), 'hour')} {_counted(int(minutes), 'minute')}"
        f" and {_counted(int(seconds), 'second')}"
    )
    if half:
        words += _part_of_day(int(hour), minutes, half) + (sentence_stop(match) if stop else "")
    return words


def _say_zone(match: re.Match[str]) -> str:
    letters = re.sub(r"[^A-Za-z]", "", match.group()[len(match.group(1)) :]).upper()
    return f"{match.group(1)} {letters}" + (
        sentence_stop(match) if match.group().endswith(".") else ""
    )


# "10:00-11:00": a range of clock times without a part of the day.
_CLOCK_RANGE = re.compile(
    r"(\d(?<![\d:.,]\d)\d?):([0-5]\d)\s*[-–]\s*([01]?\d|2[0-3]):([0-5]\d)"
    r"(?![\d:]|\s?[aApP]\.?\s?[mM]\b)"
)


def _say_clock_range(match: re.Match[str]) -> str:
    hour1, minutes1, hour2, minutes2 = match.groups()
    if int(hour1) > 23:
        return match.group()
    return f"{clock(hour1, minutes1, None)} to {clock(hour2, minutes2, None)}"


TIME_RULES: list[Rule] = [
    (_TIME_SECONDS, _say_time_seconds),
    (_DOTTED_TIME, lambda m: f"{m[1]}:{m[2]}" if int(m[1]) <= 12 else m[0]),
    (_CLOCK_RANGE, _say_clock_range),
    (_TIME_RANGE, _say_time_range),
    (_TIME, _say_time),
    (_ZONE, _say_zone),
]
# What a chunk needs for a rule to be worth running (see `en.say`).
NEEDS: dict[re.Pattern[str], str | re.Pattern[str]] = {
    _NUMERIC_DATE: re.compile(r"\d[/.-]\d\d?[/.-]\d"),
    _MONTH_YEAR: re.compile(r"\d{4}"),
    _NUMERIC_MONTH_YEAR: re.compile(r"\d/\d"),
    _TIME_SECONDS: re.compile(r"\d:\d\d:"),
    _CLOCK_RANGE: re.compile(r"\d:\d\d\s*[-–]"),
    _ZONE: re.compile(r"(?:ing|noon|night)\.?\s?(?i:[ecmpagu]\.?[sdmt]\.?[tc])\b"),
}

DATE_RULES: list[Rule] = [
    (_ISO_DATE, _say_iso_date),
    (_NUMERIC_DATE, _say_numeric_date),
    (_DAY_MONTH, _say_day_month),
    (_MONTH_DAY, _say_month_day),
    (_MONTH_YEAR, lambda m: f"{month_name(m.group(1))} {year(int(m.group(2)))}"),
    (_NUMERIC_MONTH_YEAR, _say_numeric_month_year),
]
