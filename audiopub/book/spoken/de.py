"""German spoken forms: numbers, dates, money, times and common abbreviations.

Covers cardinals with "." or a space between thousands and "," before decimals ("1.250", "10
000", "3,5" → "drei Komma fünf"), years ("1850" → "achtzehnhundertfünfzig", but "1126
Menschen" is a count), ordinals written with a full stop before a month or a lower-case word or
after an article ("am 3. Mai", "der 2. Band", "dem 1000."), or with their ending ("3ten"),
dates ("25.12.2020", "am 4.5.", "2. Mär. 2003", "2003-03-02"), currency (€ $ £, before or
after the amount; "1,799 €" as a decimal), per cent, units from babel's names ("3 h" → "drei
Stunden", "1 h" → "eine Stunde", "3 Millionen km"), fractions ("1/4" → "ein Viertel", "3/2" →
"drei Halbe", "1 1/2" → "eineinhalb"), clock times ("24:00 Uhr", "00:00:00 Uhr", "13:45"),
scores ("3:1" → "drei zu eins"), minus signs, Roman numerals in headings ("Kapitel IV") and
after rulers' names ("Karl V." → "Karl der Fünfte", always nominative), and abbreviations ("z.
B.", "Nr.", "S." before a number, "Dr.", "ca.", "usw.", "Mr.").

Deliberately not covered: grammatical case and gender of number words beyond "ein" before a
noun and "-en" after "am/vom/zum/im/dem/den/des" (so "Karl V." is "der Fünfte" even where
German would say "des Fünften"), and ordinals before a capitalised noun without an article
("3. Tag"), which cannot be told from a sentence that ends in a number.
"""

from __future__ import annotations

import re
from functools import lru_cache

from babel.units import format_unit

from audiopub.book.spoken import codes, money, roman
from audiopub.book.spoken.common import (
    UNIT_IDS,
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
    return comma_decimal(re.sub(r"[\u00a0\u202f]", " ", text), LANG, "Komma")


# "1.250", "1 250" (a space before groups of three), "1.250.000,50", "3,5", "12" (never the
# tail of a longer number or a word).
_NUM_BODY = (
    r"(?<![\w.,])(\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d.,])"
    r"(?:,\d+)?|\d+(?:,\d+)?)"
)
_NUM = _NUM_BODY + r"(?![\w]|[.,]\d)"

_MONTHS = "Januar Februar März April Mai Juni Juli August September Oktober November Dezember"
_MONTH = "|".join(_MONTHS.split())
# Each month as written, in full or cut short ("Mär.", "Sept."), lower case → its number.
_MONTH_NUMBERS = {name.lower(): index for index, name in enumerate(_MONTHS.split(), 1)} | {
    "jan": 1, "feb": 2, "mär": 3, "mrz": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "sept": 9, "okt": 10, "nov": 11, "dez": 12,
}  # fmt: skip
_MONTH_NAMES = _MONTHS.split()
# After these words an ordinal takes "-en": "am dritten Mai", "vom zweiten Band", "seinem
# hundertsten Geburtstag"; after the others "-e" or "-er" (see _say_ordinal).
_DATIVE = {"am", "vom", "zum", "zur", "im", "dem", "den", "des", "beim", "Am", "Vom", "Zum",
           "Zur", "Im", "Beim"}  # fmt: skip
_ARTICLES = _DATIVE | {"der", "die", "das", "Der", "Die", "Das"}
# Before a date these take "-en" too: "bis fünften März", "ab ersten Mai".
_UNTIL = {"bis", "Bis", "ab", "Ab"}
# Possessives, "ein", "kein", "dies-", "jed-": the ending on them says the ordinal's.
_DETERMINER = re.compile(
    r"(?i:ein|kein|mein|dein|sein|ihr|unser|euer|dies|jed|jen)(em|en|es|er|e)?"
)
_ORDINAL = re.compile(
    rf"(?:\b(\w+)\s+)?(?<![\d.,])(\d{{1,3}})\.(?=\s+(?:{_MONTH}|[a-zäöüß]|[A-ZÄÖÜ]))(?=\s+(\S+))"
)


# "dem 1000." at the end of a clause: after an article or a determiner the number is an ordinal.
_CLAUSE_ORDINAL = re.compile(
    r"\b(am|vom|zum|zur|im|dem|den|des|beim|der|die|das|Am|Vom|Zum|Zur|Im|Beim|Der|Die|Das"
    r"|(?i:ein|kein|mein|dein|sein|ihr|unser|euer|dies|jed|jen)(?:em|en|es|er|e)?)"
    r"\s+(?<![\d.,])(\d{1,7})\.(?=\s*(?:$|[,;:!?)\"'»«–—]))"
)
# "3ten", "20sten", "1te": digits with the ordinal's ending written after them.
_SUFFIXED_ORDINAL = re.compile(r"(?<![\w.,])(\d{1,7})s?te([nrsm]?)\b")


def _say_clause_ordinal(match: re.Match[str]) -> str:
    before, digits = match.groups()
    words = ordinal(int(digits)) + _ending_after(before, is_month=False)
    return f"{before} {words}{sentence_stop(match)}"


def _say_suffixed_ordinal(match: re.Match[str]) -> str:
    digits, ending = match.groups()
    return spaced(match, ordinal(int(digits)) + ending)


def _ending_after(before: str | None, is_month: bool) -> str:
    """An ordinal's ending after `before`: "seinem dritten", "am dritten", "der dritte"."""
    determiner = _DETERMINER.fullmatch(before) if before else None
    if determiner:
        ending = determiner.group(1)
        return "n" if ending in ("em", "en", "es", "er") else "" if ending == "e" else "r"
    if before in _DATIVE or (is_month and before in _UNTIL):
        return "n"
    if not before or before not in _ARTICLES:
        return "r" if is_month else ""
    return ""


def _say_ordinal(match: re.Match[str]) -> str:
    before, digits, following = match.groups()
    is_month = following.strip(",.;") in _MONTH_NAMES
    determiner = _DETERMINER.fullmatch(before) if before else None
    if not (is_month or following[:1].islower() or before in _ARTICLES or determiner):
        return match.group()  # "bis 1850. Dann": a number that ends a sentence
    words = ordinal(int(digits)) + _ending_after(before, is_month)
    return (before + " " if before else "") + words


_MONEY = money.MoneyWords(
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
        "millionen": ("Million", "Millionen"),
        "milliarde": ("Milliarde", "Milliarden"),
        "milliarden": ("Milliarde", "Milliarden"),
    },  # fmt: skip
    before_currency=lambda _name: " ",
    minor_join=" ",
    one=lambda feminine: "eine" if feminine else "ein",
    feminine_scales=True,
)

# "25.12.2020": a date, each part an ordinal but the year.
_NUMERIC_DATE = re.compile(r"(?:\b(\w+)\s+)?(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d.]\d)")


def _year(written: str) -> str:
    value = int(written)
    return number_words(value, LANG, "year") if 1100 <= value <= 1999 else cardinal(value)


def _day_ending(before: str | None) -> str:
    """A day's ordinal ending: "am dritten", "bis dritten", "der dritte", alone "dritter"."""
    return "n" if before in _DATIVE or before in _UNTIL else "" if before in _ARTICLES else "r"


def _say_numeric_date(match: re.Match[str]) -> str:
    before, day, month, when = match.groups()
    if not (1 <= int(day) <= 31 and 1 <= int(month) <= 12):
        return match.group()
    ending = _day_ending(before)
    spoken = f"{ordinal(int(day))}{ending} {ordinal(int(month))}{ending} {_year(when)}"
    return (before + " " if before else "") + spoken


# "am 4.5.", "vom 02.03": a day and a month without the year, said with the month's name. A
# bare "2.3." may be a section number, so it needs a word that asks for a date before it or
# the zero of a date written in full ("02.03").
_DATE_CUE = ("am", "vom", "zum", "bis", "ab", "seit", "den", "dem", "der", "Am", "Vom", "Bis",
             "Ab", "Seit", "Den", "Der")  # fmt: skip
_DAY_MONTH = re.compile(
    rf"(?:\b({'|'.join(_DATE_CUE)})\s+)?(?<![\w.,])(\d{{1,2}})\.(\d{{1,2}})(\.)?(?![\w]|[.,]\d)"
)


def _say_day_month(match: re.Match[str]) -> str:
    before, day, month, stop = match.groups()
    padded = len(day) == 2 and len(month) == 2 and "0" in (day[0], month[0])
    if not (1 <= int(day) <= 31 and 1 <= int(month) <= 12) or not (before or padded):
        return match.group()
    if not (stop or padded):
        return match.group()
    spoken = f"{ordinal(int(day))}{_day_ending(before)} {_MONTH_NAMES[int(month) - 1]}"
    return (before + " " if before else "") + spoken + (sentence_stop(match) if stop else "")


# "2. März", "14. januar", "2. Mär. 2003": a day before a month's name, in full or cut short
# (whose full stop is the abbreviation's, and the sentence's only at its end).
_SHORT_MONTHS = [name for name in _MONTH_NUMBERS if name.capitalize() not in _MONTH_NAMES]
_DAY_NAMED_MONTH = re.compile(
    r"(?:\b(\w+)\s+)?(?<![\d.,])(\d{1,2})\.\s?"
    rf"(?:((?i:{_MONTH}))|((?i:{word_alternation(_SHORT_MONTHS)}))(\.)?)(?!\w)"
)


def _say_day_named_month(match: re.Match[str]) -> str:
    before, day, full, short, stop = match.groups()
    if not 1 <= int(day) <= 31:
        return match.group()
    month = _MONTH_NAMES[_MONTH_NUMBERS[(full or short).lower()] - 1]
    words = ordinal(int(day)) + _ending_after(before, is_month=True)
    spoken = f"{before + ' ' if before else ''}{words} {month}"
    # The stop of "Jan." ends the sentence too only before a capital, not before the year.
    ends = stop and not match.string[match.end() :].lstrip()[:1].isdigit()
    return spoken + (sentence_stop(match) if ends else "")


# "2003-03-02", "2003-3-2" and "2003-03": ISO dates, day first as German says them. A month
# alone needs its zero, so that "1910-12" stays a span of years.
_ISO_DATE = re.compile(
    r"(?:\b(\w+)\s+)?(?<![\w.,-])(\d{4})-(?:(\d{1,2})-(\d{1,2})|(0[1-9]))(?![\w-]|[.,]\d)"
)


def _say_iso_date(match: re.Match[str]) -> str:
    before, when, month, day, month_only = match.groups()
    lead = before + " " if before else ""
    if month_only:
        return f"{lead}{_MONTH_NAMES[int(month_only) - 1]} {_year(when)}"
    if not (1 <= int(day) <= 31 and 1 <= int(month) <= 12):
        return match.group()
    day_words = ordinal(int(day)) + _day_ending(before)
    return f"{lead}{day_words} {_MONTH_NAMES[int(month) - 1]} {_year(when)}"


_CODES = codes.CodeWords(
    digits=lambda digits: digit_words(digits, LANG),
    cardinal=cardinal,
    at="at",
    dot="Punkt",
    slash="Schrägstrich",
    point="Punkt",
    version="Version",
    plus="plus",
)


# Units after a number, as written → CLDR's unit, whose German names babel has ("Stunde",
# "Stunden"). "1 h" is "eine Stunde": a unit whose name ends in "-e" is feminine but "Byte".
_UNITS = {
    **UNIT_IDS,
    "dm": "length-decimeter", "nm": "length-nanometer", "yd": "length-yard",
    "sm": "length-nautical-mile", "hl": "volume-hectoliter", "J": "energy-joule",
    "kJ": "energy-kilojoule", "MW": "power-megawatt", "PS": "power-horsepower",
    "mV": "electric-volt", "mv": "electric-volt", "kV": "electric-volt",
    "mA": "electric-milliampere", "GHz": "frequency-gigahertz", "KB": "digital-kilobyte",
    "kB": "digital-kilobyte", "TB": "digital-terabyte", "bar": "pressure-bar",
    "hPa": "pressure-hectopascal",
}  # fmt: skip
# Prefixes CLDR has no unit for: the volt's name with "Milli-"/"Kilo-" before it.
_UNIT_PREFIX = {"mV": "Milli", "mv": "Milli", "kV": "Kilo"}
_SCALE_WORD = word_alternation(
    ["Million", "Millionen", "Milliarde", "Milliarden", "Mio.", "Mrd.", "Tsd.", "million",
     "millionen", "milliarde", "milliarden", "Tausend", "tausend"]
)  # fmt: skip
_UNIT_WORD = rf"({word_alternation(list(_UNITS))})(?![\w/²³])"
# The unit may touch the number: "24h", "250ml".
_UNIT = re.compile(rf"{_NUM_BODY}(?![\d.,])(?:\s+({_SCALE_WORD})(?!\w))?\s?{_UNIT_WORD}")
# "1/2 ft", "1 1/2 h": a fraction of a unit, counted in the one up to a whole.
_FRACTION_UNIT = re.compile(
    r"(?<![\w./,])((?:\d{1,3}\s)?\d{1,3}/\d{1,3})(?![\w/]|[.,]\d)\s?" + _UNIT_WORD
)
_NEUTER_IN_E = ("Byte", "ampere", "Ampere", "Joule")
# A scale word between the number and the unit, lower case → its words for one and many.
_SCALE_NAMES = {
    **dict.fromkeys(("million", "millionen", "mio."), ("eine Million", "Millionen")),
    **dict.fromkeys(("milliarde", "milliarden", "mrd."), ("eine Milliarde", "Milliarden")),
    **dict.fromkeys(("tausend", "tsd."), ("eintausend", "tausend")),
}


_LEADING_COUNT = re.compile(r"^[\d\s]+")


@lru_cache(maxsize=128)
def unit_names(written: str) -> tuple[str, str]:
    """The unit's name for one and for many: "h" → ("Stunde", "Stunden")."""
    unit = _UNITS[written]
    prefix = _UNIT_PREFIX.get(written, "")
    one, many = (
        _LEADING_COUNT.sub("", format_unit(count, unit, "long", locale=LANG)) for count in (1, 2)
    )
    if prefix:
        one, many = prefix + one.lower(), prefix + many.lower()
    return one, many


def _say_unit(match: re.Match[str]) -> str:
    amount, scale, written = match.groups()
    one, many = unit_names(written)
    if scale:  # "3 Millionen km": the unit is counted in the many
        scale_one, scale_many = _SCALE_NAMES[scale.lower()]
        count = scale_one if amount == "1" else f"{number(amount)} {scale_many}"
        return f"{count} {many}"
    if amount == "1":
        feminine = one.endswith("e") and not one.endswith(_NEUTER_IN_E)
        return f"{'eine' if feminine else 'ein'} {one}"
    return f"{number(amount)} {many}"


def _say_fraction_unit(match: re.Match[str]) -> str:
    written, unit = match.groups()
    one, many = unit_names(unit)
    whole, _, fraction = written.rpartition(" ")
    numerator, denominator = (int(part) for part in fraction.split("/"))
    words = _SLASH_FRACTION.sub(_say_slash_fraction, written)
    return f"{words} {one if not whole and numerator <= denominator else many}"


_TIME = re.compile(r"(?<![\d.,:])([01]?\d|2[0-4])(?:[:.]([0-5]\d)(?::([0-5]\d))?)?\s?Uhr\b")


def _say_time(match: re.Match[str]) -> str:
    hour, minutes, seconds = match.groups()
    if hour == "24" and (minutes or "00") != "00":
        return match.group()
    words = "ein" if hour.lstrip("0") == "1" else cardinal(int(hour))
    words += " Uhr"
    if seconds:  # "00:00:00 Uhr": each part with its unit
        return f"{words} {_count(int(minutes), 'Minute')} {_count(int(seconds), 'Sekunde')}"
    if minutes and minutes != "00":
        words += " " + cardinal(int(minutes))
    return words


# "13:45", "08:30:15", "um 9:30": a clock time without "Uhr". A single-digit hour needs a word
# that asks for a time, as "3:1" may be a score or a ratio and "3:16" a verse.
_BARE_TIME = re.compile(
    r"(?:\b(um|gegen|ab|bis|seit|von|Um|Gegen|Ab|Bis|Seit|Von)\s+)?(?<![\w.,:])"
    r"([01]?\d|2[0-4]):([0-5]\d)(?::([0-5]\d))?(?:\s?h\b)?(?![\w:]|[.,]\d)"
)


def _say_bare_time(match: re.Match[str]) -> str:
    before, hour, minutes, seconds = match.groups()
    if not (before or seconds or len(hour) == 2) or (hour == "24" and minutes != "00"):
        return match.group()
    words = ("ein" if hour.lstrip("0") == "1" else cardinal(int(hour))) + " Uhr"
    if seconds:
        words += f" {_count(int(minutes), 'Minute')} {_count(int(seconds), 'Sekunde')}"
    elif minutes != "00":
        words += " " + cardinal(int(minutes))
    return (before + " " if before else "") + words


# "3:1", "1:10": what is left of two numbers with a colon is a score or a ratio.
_SCORE = re.compile(r"(?<![\w.,:])(\d+):(\d+)(?![\w:]|[.,]\d)")

# "die 1920er", "2000er", "ein 3er": a number with "-er", said as one word.
_DECADE = re.compile(r"(?<![\w.,])(\d{1,4})er\b")


def _say_decade(match: re.Match[str]) -> str:
    digits = match.group(1)
    value = int(digits)
    words = number_words(value, LANG, "year") if 1100 <= value <= 1999 else cardinal(value)
    return spaced(match, words + "er")


def _count(value: int, feminine_noun: str) -> str:
    """ "eine Minute", "zwei Minuten"."""
    return f"eine {feminine_noun}" if value == 1 else f"{cardinal(value)} {feminine_noun}n"


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
    "Mr.": "Mister",
    "Mrs.": "Misses",
    "Ms.": "Miss",
    "etc.": "et cetera",
}
# Abbreviations that may end a sentence ("… Äpfel, Birnen usw. Dann"): the full stop stays.
_MAY_END = {"Std.", "Min.", "Sek.", "usw.", "u. a.", "u.a.", "v. Chr.", "n. Chr.", "Jh.", "evtl.",
            "etc."}  # fmt: skip
_ABBREVIATION = re.compile(rf"(?<![\w.])({word_alternation(list(_ABBREVIATIONS))})(?!\w)")


def _say_abbreviation(match: re.Match[str]) -> str:
    written = match.group(1)
    words = _ABBREVIATIONS[written]
    return words + sentence_stop(match) if written in _MAY_END else words


_ROMAN = roman.RomanWords(
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


# Before a four-digit number these ask for a year: "im Jahr 1850", "seit 1850", "Mai 1850".
_YEAR_CUE = frozenset(
    "im Im Jahr Jahre Jahres jahr seit Seit bis Bis um Um von Von vor Vor nach Nach ab Ab anno "
    "Anno ca. zirka etwa Ende Anfang Mitte Frühjahr Sommer Herbst Winter Frühling".split()
    + _MONTH_NAMES
)
_WORD_BEFORE = re.compile(r"(\S+)\s+$")


def _is_year(match: re.Match[str], text: str) -> bool:
    """ "1850" is a year, but "1126 Menschen" a count: before a capitalised noun, a four-digit
    number is a year only after a word that asks for one ("im Jahr 1850 Napoleon…" is rare)."""
    if not (len(text) == 4 and text.isdigit() and 1100 <= int(text) <= 1999):
        return False
    rest = match.string[match.end() : match.end() + 2]
    if not (rest[:1] == " " and rest[1:2].isupper()):
        return True
    before = _WORD_BEFORE.search(match.string, max(0, match.start() - 20), match.start())
    return before is not None and before.group(1) in _YEAR_CUE


def _say_number(match: re.Match[str]) -> str:
    text = match.group(1)
    if _is_year(match, text):
        return spaced(match, number_words(int(text), LANG, "year"))
    words = number(text)
    rest = match.string[match.end() :]
    if words == "eins" and rest[:1] == " " and rest[1:2].isalpha():
        # "1 Mann" → "ein Mann", "1 Million" → "eine Million"
        words = "eine" if _FEMININE_SCALE.match(rest) else "ein"
    return spaced(match, words)


_FEMININE_SCALE = re.compile(r" (?:[Mm]illion|[Mm]illiarde|[Bb]illion)\b")

_VULGAR_WORDS = {(1, 2): "ein halb", (1, 3): "ein Drittel", (2, 3): "zwei Drittel",
                 (1, 4): "ein Viertel", (3, 4): "drei Viertel"}  # fmt: skip


# "3/4", "1/100", "1 1/2" (a whole number and a fraction).
_SLASH_FRACTION = re.compile(r"(?<![\w./,])(?:(\d{1,3})\s)?(\d{1,3})/(\d{1,3})(?![\w/]|[.,]\d)")


def _fraction(char: str) -> str:
    return _fraction_of(*VULGAR_FRACTIONS[char])


def _fraction_of(numerator: int, denominator: int) -> str:
    """ "ein Viertel", "drei Halbe", "ein Hundertstel": "ein" for one part, as before a noun."""
    if denominator < 2:
        return f"{cardinal(numerator)}/{cardinal(denominator)}"
    if (numerator, denominator) in _VULGAR_WORDS:
        return _VULGAR_WORDS[numerator, denominator]
    count = "ein" if numerator == 1 else cardinal(numerator)
    if denominator == 2:
        return f"{count} Halbe"
    return f"{count} {ordinal(denominator).capitalize()}l"


def _say_slash_fraction(match: re.Match[str]) -> str:
    whole, numerator, denominator = match.groups()
    if whole is None:
        return spaced(match, _fraction_of(int(numerator), int(denominator)))
    if (numerator, denominator) == ("1", "2"):  # "1 1/2" → "eineinhalb"
        count = "ein" if whole == "1" else cardinal(int(whole))
        return spaced(match, f"{count}einhalb")
    return spaced(
        match, f"{cardinal(int(whole))} und {_fraction_of(int(numerator), int(denominator))}"
    )


# "1914-1918", "1910-12": a span of years with a hyphen, said with "bis".
_YEAR_SPAN = re.compile(r"(?<![\w.,-])(\d{4})-(\d{2}|\d{4})(?![\w-]|[.,]\d)")
# "2,- €", "15,–": a price with no cents.
_NO_CENTS = re.compile(r"(?<=\d),[-–]{1,2}(?![\w-])")
# A minus sign before a number ("-5 °C", "−1/22"), not a hyphen between two.
_MINUS = re.compile(r"(?<![\w-])[-−](?=\d)")
# "@jensen": a handle, said "at Jensen".
_HANDLE = re.compile(r"(?<![\w.@])@(?=\w)")
# "www" in a web address, as it is said: letter by letter.
_WWW = re.compile(r"\bwww(?= Punkt )")

RULES: list[Rule] = [
    (_ABBREVIATION, _say_abbreviation),
    (_NUMBERED_ABBREVIATION, lambda m: _NUMBERED[m.group(1)]),
    *roman.roman_rules(_ROMAN),
    (_NUMERIC_DATE, _say_numeric_date),
    (_ISO_DATE, _say_iso_date),
    (_DAY_MONTH, _say_day_month),
    (_DAY_NAMED_MONTH, _say_day_named_month),
    *codes.code_rules(_CODES),
    (_WWW, "w w w"),
    (_HANDLE, "at "),
    (_TIME, _say_time),
    (_BARE_TIME, _say_bare_time),
    (_DECADE, _say_decade),
    (_SCORE, lambda m: f"{number(m.group(1))} zu {number(m.group(2))}"),
    (_NO_CENTS, ""),
    (_MINUS, "minus "),
    *money.money_rules(_MONEY),
    (re.compile(rf"{_NUM}\s?%"), lambda m: number(m.group(1)) + " Prozent"),
    (_FRACTION_UNIT, _say_fraction_unit),
    (_UNIT, _say_unit),
    (_ORDINAL, _say_ordinal),
    (_CLAUSE_ORDINAL, _say_clause_ordinal),
    (_SUFFIXED_ORDINAL, _say_suffixed_ordinal),
    (
        re.compile(rf"(?<![\w.,])(\d+)\s?([{VULGAR_CLASS}])"),
        lambda m: (
            f"{'ein' if m.group(1) == '1' else cardinal(int(m.group(1)))}einhalb"
            if m.group(2) == "½"
            else f"{cardinal(int(m.group(1)))} und {_fraction(m.group(2))}"
        ),
    ),
    (re.compile(f"[{VULGAR_CLASS}]"), lambda m: spaced(m, _fraction(m.group()))),
    (_SLASH_FRACTION, _say_slash_fraction),
    (re.compile(r"(?<=\d)\s*–\s*(?=\d)"), " bis "),
    (_YEAR_SPAN, r"\1 bis \2"),
    (re.compile(r"\s*&\s*"), " und "),
    (re.compile(r"§\s*"), "Paragraf "),
    (re.compile(_NUM), _say_number),
    (re.compile(r"\d+"), lambda m: spaced(m, cardinal(int(m.group())))),
]

# Words that send a chunk through the rules (see `spoken`).
TRIGGER = (
    rf"{codes.TRIGGER}"
    rf"|(?<![\w.])(?:{word_alternation([*_ABBREVIATIONS, *(k + '.' for k in _NUMBERED)])})"
    rf"|{roman.trigger(_ROMAN)}"
)


def say(text: str) -> str:
    return apply_rules(text, RULES)
