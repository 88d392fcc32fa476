"""English units after numbers: "12KG", "1 mbps", "3 cc/s", "12kg/kg", "5 m²", "6′ 2″", "30°C".

A unit is read only right after a number, so "in", "m" or "g" elsewhere stay words. Units are
matched in any case ("12KG", "12 Kg") except where the case is the meaning: "m" (metre) and "M",
"g" and "G", "MB" (megabyte) and "Mb" (megabit), "ms" and "Ms". A unit over another reads
"per" ("kilograms per kilogram"), "²" and "³" (and "2", "3" after a length: "m2") read "square"
and "cubic". The amount may be a range ("1980-1970 kg"), a fraction ("4 1/2 lbs", "4½ lbs",
"½ lb" → "half a pound") or carry a scale word ("200 million kg"); a bare number per unit
("15/kg") reads "per", dimensions ("3x4") "by" and a sum ("2+2") "plus".
"""

from __future__ import annotations

import re

from audiopub.book.spoken.common import VULGAR_CLASS, VULGAR_FRACTIONS, Rule, sentence_stop
from audiopub.book.spoken.en_words import (
    NUM,
    PER_ALTERNATION,
    and_a,
    counted,
    fraction,
    is_one,
    number,
    per_words,
)

# Unit: (one, many). Keys are as books write them; see _unit() for other cases.
UNITS = {
    "km": ("kilometre", "kilometres"), "m": ("metre", "metres"), "cm": ("centimetre",
    "centimetres"), "mm": ("millimetre", "millimetres"), "µm": ("micrometre", "micrometres"),
    "nm": ("nanometre", "nanometres"), "mi": ("mile", "miles"), "ft": ("foot", "feet"),
    "in.": ("inch", "inches"), "in": ("inch", "inches"), "yd": ("yard", "yards"),
    "yds": ("yard", "yards"),
    "kg": ("kilogram", "kilograms"), "g": ("gram", "grams"), "mg": ("milligram", "milligrams"),
    "µg": ("microgram", "micrograms"), "lb": ("pound", "pounds"), "lbs": ("pound", "pounds"),
    "oz": ("ounce", "ounces"), "t": ("tonne", "tonnes"),
    "l": ("litre", "litres"), "L": ("litre", "litres"), "ml": ("millilitre", "millilitres"),
    "cl": ("centilitre", "centilitres"), "dl": ("decilitre", "decilitres"),
    "cc": ("cubic centimetre", "cubic centimetres"), "gal": ("gallon", "gallons"),
    "s": ("second", "seconds"), "sec": ("second", "seconds"), "secs": ("second", "seconds"),
    "ms": ("millisecond", "milliseconds"), "min": ("minute", "minutes"),
    "mins": ("minute", "minutes"), "h": ("hour", "hours"), "hr": ("hour", "hours"),
    "hrs": ("hour", "hours"),
    "mph": ("mile an hour", "miles an hour"), "km/h": ("kilometre an hour",
    "kilometres an hour"), "kph": ("kilometre an hour", "kilometres an hour"),
    "kmh": ("kilometre an hour", "kilometres an hour"), "rpm": ("revolution per minute",
    "revolutions per minute"), "psi": ("pound per square inch", "pounds per square inch"),
    "KB": ("kilobyte", "kilobytes"), "kB": ("kilobyte", "kilobytes"),
    "MB": ("megabyte", "megabytes"), "GB": ("gigabyte", "gigabytes"), "TB": ("terabyte",
    "terabytes"), "Kb": ("kilobit", "kilobits"), "kb": ("kilobit", "kilobits"),
    "Mb": ("megabit", "megabits"), "Gb": ("gigabit", "gigabits"),
    "kbps": ("kilobit per second", "kilobits per second"), "mbps": ("megabit per second",
    "megabits per second"), "gbps": ("gigabit per second", "gigabits per second"),
    "W": ("watt", "watts"), "kW": ("kilowatt", "kilowatts"), "MW": ("megawatt", "megawatts"),
    "GW": ("gigawatt", "gigawatts"), "kWh": ("kilowatt hour", "kilowatt hours"),
    "V": ("volt", "volts"), "kV": ("kilovolt", "kilovolts"), "mA": ("milliamp", "milliamps"),
    "mAh": ("milliamp hour", "milliamp hours"), "Hz": ("hertz", "hertz"),
    "kHz": ("kilohertz", "kilohertz"), "MHz": ("megahertz", "megahertz"),
    "GHz": ("gigahertz", "gigahertz"), "kcal": ("kilocalorie", "kilocalories"),
    "cal": ("calorie", "calories"), "kJ": ("kilojoule", "kilojoules"),
    "J": ("joule", "joules"), "hPa": ("hectopascal", "hectopascals"),
    "kPa": ("kilopascal", "kilopascals"), "dB": ("decibel", "decibels"),
    "ha": ("hectare", "hectares"), "sq ft": ("square foot", "square feet"),
    "sq mi": ("square mile", "square miles"), "sq m": ("square metre", "square metres"),
}  # fmt: skip
# Units whose case carries the meaning; every other unit is also found in any case.
_CASE_SENSITIVE = {"m", "g", "t", "s", "h", "l", "in", "W", "V", "J", "ms", "Mb", "Gb", "Kb",
                   "kb", "mA", "MW", "mm", "Hz"}  # fmt: skip
_FOLDED = {key.lower(): value for key, value in UNITS.items() if key not in _CASE_SENSITIVE}
_FOLDED.update({"mb": UNITS["MB"], "mbps": UNITS["mbps"], "hz": UNITS["Hz"]})
# One-letter units other than metres and grams, and "in", only touching the number ("60W",
# "5h", "2l", "6ft 2in"),
# and "s" only under another unit ("m/s"): "5 s" or "the 5s" are rarely seconds.
_ATTACHED_ONLY = {"t", "h", "l", "W", "V", "J", "in"}
_PER_ONLY = {"s"}

_ALTERNATION = "|".join(
    re.escape(unit) for unit in sorted({*UNITS, *_FOLDED}, key=len, reverse=True)
)
_POWER = r"(²|³|\^2|\^3|(?<=[mt])[23])?"
# What a unit may follow: a number ("12", "1,250.5"), a range of them ("2-5", "1980-1970"),
# a whole number and a fraction ("4 1/2", "4½"), a fraction alone ("½") or a number and a
# scale word ("200 million").
_PLAIN = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
_AMOUNT = (
    rf"(?<![\w.,/-])({_PLAIN}(?:\s?[-–]\s?{_PLAIN}(?![/\d]))?"
    rf"(?:[ \u00a0]+\d{{1,2}}/\d{{1,3}}|\s?[{VULGAR_CLASS}])?"
    r"(?:\s+(?:thousand|million|billion|trillion))?"
    rf"|[{VULGAR_CLASS}])"
)
_UNIT = re.compile(
    rf"{_AMOUNT}(\s?)(?i:({_ALTERNATION})){_POWER}(?:/(?i:({_ALTERNATION})){_POWER})?"
    r"(?![\w²³^/])(\.)?"
)
_LENGTHS = {"m", "cm", "mm", "km", "ft", "in", "mi", "yd"}
_AMOUNT_PARTS = re.compile(
    rf"({_PLAIN})(?:\s?[-–]\s?({_PLAIN}))?(?:[ \u00a0]+(\d+)/(\d+)|\s?([{VULGAR_CLASS}]))?"
    r"(?:\s+(thousand|million|billion|trillion))?"
)


def _amount(written: str, one: str, many: str) -> str | None:
    """ "4 1/2" pounds → "four and a half pounds", "½" → "half a pound", "2-5" → "two to
    five pounds", "200 million" → "two hundred million"."""
    if written in VULGAR_FRACTIONS:
        article = "an" if one[0] in "aeiou" else "a"
        if written == "½":
            return f"half {article} {one}"
        return f"{fraction(*VULGAR_FRACTIONS[written])} of {article} {one}"
    parts = _AMOUNT_PARTS.fullmatch(written)
    if parts is None:
        return None
    first, last, top, bottom, vulgar, scale = parts.groups()
    if top and not 0 < int(top) < int(bottom):
        return None  # "4 5/2": not a whole number and a fraction
    words = number(first)
    if last:
        words += " to " + number(last)
    if top:
        words += " and " + and_a(int(top), int(bottom))
    elif vulgar:
        words += " and " + and_a(*VULGAR_FRACTIONS[vulgar])
    if scale:
        words += " " + scale
    single = is_one(last or first) and not (top or vulgar or scale)
    return f"{words} {one if single else many}"


# After "5m", a plural noun that is not a measure's word counts millions: "5m copies".
_COUNTED = re.compile(
    r" (?!(?:is|was|has|as|its|this|his|us|across|plus|less|unless|towards|always|perhaps)\b)"
    r"[a-z]+s\b"
)
_POWERS = {"²": "square", "^2": "square", "2": "square", "³": "cubic", "^3": "cubic", "3": "cubic"}


def unit_words(written: str) -> tuple[str, str] | None:
    """ "KG" → ("kilogram", "kilograms"); None where the written case rules it out."""
    if written in UNITS:
        return UNITS[written]
    if written.lower() in _FOLDED and written not in _CASE_SENSITIVE:
        return _FOLDED[written.lower()]
    return None


def _say_unit(match: re.Match[str]) -> str:
    amount, space, unit, power, per, per_power, stop = match.groups()
    words = unit_words(unit)
    per_words = unit_words(per) if per else None
    if words is None or (per and per_words is None) or unit in _PER_ONLY:
        return match.group()
    if space and unit in _ATTACHED_ONLY:
        return match.group()
    if power in ("2", "3") and unit not in _LENGTHS:
        return match.group()
    plain = re.fullmatch(_PLAIN, amount) is not None
    if unit == "m" and not (power or per) and _COUNTED.match(match.string, match.end()):
        if plain:
            return f"{number(amount)} million"  # "2.5m copies": millions of a counted thing
        return match.group()
    one, many = words
    if power:
        one, many = f"{_POWERS[power]} {one}", f"{_POWERS[power]} {many}"
    spoken = _amount(amount, one, many)
    if spoken is None:
        return match.group()
    if per_words:
        per_one = per_words[0]
        spoken += f" per {_POWERS[per_power] + ' ' if per_power else ''}{per_one}"
    # "in." carries its own full stop; any other unit's stop is the sentence's.
    return spoken + (sentence_stop(match) if stop or unit.endswith(".") else "")


# --- degrees, coordinates, feet and inches -----------------------------------------------------

_DIRECTIONS = {"N": "north", "S": "south", "E": "east", "W": "west"}
_COORDINATE = re.compile(
    rf"{NUM}\s?°\s*(?:{NUM}['′]\s*)?(?:{NUM}[\"″]\s*)?(?:([NSEW])\b(\.)?)?(?:\s*([CF])\b)?"
)


def _plural(amount: str, singular: str) -> str:
    return counted(amount, singular, singular + "s")


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
_FEET_INCHES = re.compile(rf"{NUM}′(?:\s*{NUM}″)?|{NUM}″")
# 6'2", "3 ft 4 in": feet and inches with ASCII marks or abbreviations ("in" is inches here,
# after feet).
_FEET_AND_INCHES = re.compile(
    r"(\d(?<![\w.,']\d)\d?)(?:'\s?|\s?ft\.?\s+)(\d{1,2}(?:\.\d+)?)(?:\"|''|\s?in\b(\.)?)"
)


def _say_feet_and_inches(match: re.Match[str]) -> str:
    feet, inches, stop = match.groups()
    words = f"{counted(feet, 'foot', 'feet')} {counted(inches, 'inch', 'inches')}"
    return words + (sentence_stop(match) if stop else "")


def _say_feet_inches(match: re.Match[str]) -> str:
    feet, inches, only_inches = match.groups()
    if only_inches:
        return counted(only_inches, "inch", "inches")
    words = counted(feet, "foot", "feet")
    if inches:
        words += " " + counted(inches, "inch", "inches")
    return words


DEGREE_RULES: list[Rule] = [
    (_COORDINATE, _say_degrees),
    (_FEET_INCHES, _say_feet_inches),
    (_FEET_AND_INCHES, _say_feet_and_inches),
]
# "15/kg", "40/hr": a bare number per unit.
_PER_UNIT = re.compile(rf"(?=[\d.])(?<![\w.,])({_PLAIN})\s?/\s?({PER_ALTERNATION})\b(?![/\d])")
# "3x4", "2 x 3": dimensions; "2+2": a sum (never a leading "+44" of a phone number).
_BY = re.compile(r"([1-9](?<![\w.][1-9])\d*(?:\.\d+)?)\s?[x×]\s?(?=\d)")
_PLUS = re.compile(r"(\d)\s?\+\s?(?=\d)")

# What a chunk needs for a rule to be worth running (see `en.say`).
NEEDS: dict[re.Pattern[str], str | re.Pattern[str]] = {
    _PER_UNIT: "/",
    _BY: re.compile(r"\d\s?[x×]\s?\d"),
    _PLUS: "+",
    _FEET_AND_INCHES: re.compile(r"\d(?:'|\s?ft)"),
}

UNIT_RULES: list[Rule] = [
    (_BY, lambda m: m.group(1) + " by "),
    (_PLUS, r"\1 plus "),
    (_UNIT, _say_unit),
    (_PER_UNIT, lambda m: f"{number(m.group(1))} per {per_words(m.group(2))}"),
]
