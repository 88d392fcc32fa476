"""English units after numbers: "12KG", "1 mbps", "3 cc/s", "12kg/kg", "5 m²", "6′ 2″", "30°C".

A unit is read only right after a number, so "in", "m" or "g" elsewhere stay words. Units are
matched in any case ("12KG", "12 Kg") except where the case is the meaning: "m" (metre) and "M",
"g" and "G", "MB" (megabyte) and "Mb" (megabit), "ms" and "Ms". A unit over another reads
"per" ("kilograms per kilogram"), "²" and "³" read "square" and "cubic".
"""

from __future__ import annotations

import re

from audiopub.book.spoken_common import Rule, sentence_stop
from audiopub.book.spoken_en_words import NUM, counted, is_one, number

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
_POWER = r"(²|³|\^2|\^3)?"
_UNIT = re.compile(
    rf"{NUM}(\s?)(?i:({_ALTERNATION})){_POWER}(?:/(?i:({_ALTERNATION})){_POWER})?"
    r"(?![\w²³^/])(\.)?"
)
# After "5m", a plural noun that is not a measure's word counts millions: "5m copies".
_COUNTED = re.compile(
    r" (?!(?:is|was|has|as|its|this|his|us|across|plus|less|unless|towards|always|perhaps)\b)"
    r"[a-z]+s\b"
)
_POWERS = {"²": "square", "^2": "square", "³": "cubic", "^3": "cubic"}


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
    if unit == "m" and not (power or per) and _COUNTED.match(match.string, match.end()):
        return f"{number(amount)} million"  # "2.5m copies": millions of a counted thing
    one, many = words
    if power:
        one, many = f"{_POWERS[power]} {one}", f"{_POWERS[power]} {many}"
    spoken = f"{number(amount)} {one if is_one(amount) else many}"
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


def _say_feet_inches(match: re.Match[str]) -> str:
    feet, inches, only_inches = match.groups()
    if only_inches:
        return counted(only_inches, "inch", "inches")
    words = counted(feet, "foot", "feet")
    if inches:
        words += " " + counted(inches, "inch", "inches")
    return words


DEGREE_RULES: list[Rule] = [(_COORDINATE, _say_degrees), (_FEET_INCHES, _say_feet_inches)]
UNIT_RULES: list[Rule] = [(_UNIT, _say_unit)]
