"""English spoken forms: what a narrator says for numbers, symbols and abbreviations.

This module runs English's rules in order; money (`en_money`), dates and clock times
(`en_dates`), units (`en_units`) and codes read digit by digit (`codes`) have modules of their
own. Here: cardinals, ordinals ("21st", "1,000th", old "3d"), years ("1999" → "nineteen
ninety-nine", a plain four-digit number from 1000 to 2099 is read as a year, "'85" →
"eighty-five"), decades ("1880s", "the '60s", "mid-80s", "1960s-80s"), ranges
("2-5", "10–20%", "1914-18" → "… to …"), decimals, fractions ("3/4", "1/4th", "2 1/2", "½",
"1/28,000" → "one twenty-eight-thousandth", "124/7" → "… over seven"), round plurals ("1,000s"
→ "thousands"), figures that are names ("24/7", "9/11"), percentages, house numbers ("221B" → "two
twenty-one B"), Roman numerals where the context makes them numbers, and common abbreviations
("Dr.", "St.", "No. 5", "pp. 12–14", "c. 1850", "e.g.", "etc.").

A hyphen between two numbers is a range unless the numbers are a phone number, a date or a
code (`codes` reads those first): "2-5lb" is "two to five pounds". A longer chain of
figures ("111-11-1111") is read in groups of digits, letters run into four figures ("ab9453")
digit by digit. Also here: eras ("340 A.D" → "three forty AD"), quarters ("2Q22"), equations
("y=x +1" → "y equals x plus one"), "C++", and street addresses ("708 N 1st St" → "seven oh
eight North first Street", "CA 95051" with its ZIP code digit by digit).

Deliberately not covered: units that are also words without a full stop ("in"), and the
"fifty £1000 notes" kind of amount used as an adjective. A full stop that ends an abbreviation
and the sentence ("etc. Then") is kept.
"""

from __future__ import annotations

import re

from audiopub.book.spoken import (
    codes,
    en_dates,
    en_money,
    en_units,
    roman,
)
from audiopub.book.spoken.common import (
    VULGAR_CLASS,
    VULGAR_FRACTIONS,
    Rule,
    digit_words,
    match_case,
    number_words,
    sentence_stop,
    spaced,
    word_alternation,
)
from audiopub.book.spoken.en_dates import short_year
from audiopub.book.spoken.en_words import (
    LANG,
    NUM,
    and_a,
    cardinal,
    code_digits,
    fraction,
    number,
    ordinal,
    to_int,
    year,
)

# --- abbreviations ----------------------------------------------------------------------------

# Before a number (or a Roman numeral): "No. 5", "pp. 12–14", "vol. II", "fig. 3".
_NUMBER_ABBREVIATIONS = {
    "no": ("number", "numbers"), "nos": ("numbers", "numbers"), "p": ("page", "pages"),
    "pp": ("pages", "pages"), "vol": ("volume", "volumes"), "vols": ("volumes", "volumes"),
    "ch": ("chapter", "chapters"), "chap": ("chapter", "chapters"), "fig": ("figure", "figures"),
    "figs": ("figures", "figures"), "art": ("article", "articles"), "ext": ("extension",
    "extensions"), "para": ("paragraph",
    "paragraphs"), "§": ("section", "sections"), "§§": ("sections", "sections"),
    "#": ("number", "numbers"),
}  # fmt: skip
_RANGE = r"(?:\s*(?:–|-|\bto\b|\band\b)\s*(\d+|[ivxlcdm]+|[IVXLCDM]+)\b)?"
_NUMBERED = re.compile(
    r"(?<![\w.])(?i:(no|nos|pp?|vols?|chap|ch|figs?|art|ext|para)\.|(§§?|#))\s*"
    rf"(\d+|[ivxlcdm]+\b|[IVXLCDM]+\b){_RANGE}"
)


def _numbered_item(text: str) -> str | None:
    if text.isdigit():
        return cardinal(int(text))
    value = roman.roman_value(text)
    return cardinal(value) if value else None


def _say_numbered(match: re.Match[str]) -> str:
    word, symbol, first, last = match.groups()
    key = (word or symbol).lower()
    if key in ("no", "nos", "#") and not first.isdigit():
        return match.group()  # "No. I don't" is the word no and the pronoun
    if key == "p" and first.lower() == "m":
        return match.group()  # "p.m.", never "page M"
    one, many = _NUMBER_ABBREVIATIONS[key]
    first_words = _numbered_item(first)
    last_words = _numbered_item(last) if last else None
    if first_words is None or (last and last_words is None):
        return match.group()
    joiner = " and " if last and " and " in match.group() else " to "
    spoken = match_case(many if last else one, word or "a") + " " + first_words
    return spoken + (joiner + last_words if last_words else "")


_CIRCA = re.compile(r"(?<![\w.])(?:c|ca|circ)\.\s*(\d{3,4})(?!\d)")

# Titles before a name: their full stop never ends a sentence. "Mr" without the stop too.
_TITLES = {
    "Dr": "Doctor", "Mr": "Mister", "Mrs": "Missus", "Ms": "Miz", "Messrs": "Messers",
    "Prof": "Professor", "Capt": "Captain", "Col": "Colonel", "Gen": "General",
    "Lieut": "Lieutenant", "Lt": "Lieutenant", "Sgt": "Sergeant", "Rev": "Reverend",
    "Hon": "Honourable", "Gov": "Governor", "Mt": "Mount", "Sen": "Senator",
    "Rep": "Representative", "Pres": "President", "Adm": "Admiral", "Maj": "Major",
    "Cpl": "Corporal", "Pvt": "Private", "Fr": "Father", "Ft": "Fort",
}  # fmt: skip
_TITLE = re.compile(rf"\b({word_alternation(list(_TITLES))})(?:\.|(?=\s+[A-Z]))(?=\s)")
# "St." is "Saint" before a name and "Street" after one ("Baker St.").
_SAINT = re.compile(r"\bSt\.?(?=\s+[A-Z])")
_STREET = re.compile(r"\b([A-Z][a-z]+\s+)St\.(?=\s|$|[,;:])")

# Abbreviations that can end a sentence: their full stop stays when it does.
_ENDING = {
    "etc": "et cetera", "&c": "et cetera", "viz": "namely", "approx": "approximately",
    "Jr": "Junior", "Sr": "Senior", "vs": "versus", "cf": "compare", "e.g": "for example",
    "i.e": "that is", "a.k.a": "also known as", "Inc": "Incorporated", "Ltd": "Limited",
    "Corp": "Corporation", "Bros": "Brothers",
}  # fmt: skip
_ENDING_LOWER = {key.lower(): words for key, words in _ENDING.items()}
_ENDING_ABBREVIATION = re.compile(
    rf"(?<![\w.])({word_alternation(list(_ENDING))})\.(?=[\s,;:)]|$)", re.IGNORECASE
)


_FIGURE_FOLLOWS = re.compile(r"\s*[-$£€]?\d")


def _say_ending(match: re.Match[str]) -> str:
    key = match.group(1).lower()
    words = _ENDING_LOWER[key]
    if key in ("e.g", "i.e", "cf", "vs") and match.end() < len(match.string):
        return words  # never ends a sentence: "e.g. London" goes on
    if key == "approx" and _FIGURE_FOLLOWS.match(match.string, match.end()):
        return words  # "approx. 5": the figure goes on
    return words + sentence_stop(match)


# --- numbers ----------------------------------------------------------------------------------

_RANGE_TO = r"(?:\s*[-–]\s*|\s+to\s+)"
# "1880s", "1900s", "the '60s", "80s", "mid-80s", "1960s-80s", "the 60's".
_DECADE_PART = r"(?:(1\d|20)|['’])?(\d)0['’]?s\b"
_DECADE = re.compile(rf"(?<![\w.,'’]){_DECADE_PART}(?:({_RANGE_TO}){_DECADE_PART})?")


def _decade(century: str | None, tens: str) -> str | None:
    if century is None and tens == "0":
        return None  # "00s"
    words = year(int(century + tens + "0")) if century else cardinal(int(tens + "0"))
    return (words[:-1] + "ies") if words.endswith("y") else words + "s"


def _say_decade(match: re.Match[str]) -> str:
    century, tens, joiner, last_century, last_tens = match.groups()
    first = _decade(century, tens)
    if first is None:
        return match.group()
    if joiner is None:
        return first
    last = _decade(last_century, last_tens)
    return f"{first} to {last}" if last else match.group()


# "100s of", "1,000s": round hundreds, thousands, millions in the plural.
_ROUND_PLURAL = re.compile(r"1(?<![\w.,]1)(00|,?000|,?000,?000)s\b")
_ROUND_WORDS = {"00": "hundreds", "000": "thousands", "000000": "millions"}
# Figures that are names of their own: "24/7", "9/11", "50/50", "20/20".
_IDIOMS = {"24/7": "twenty-four seven", "9/11": "nine eleven", "50/50": "fifty-fifty",
           "20/20": "twenty-twenty"}  # fmt: skip
_IDIOM = re.compile(r"(?<![\w./])(24/7|9/11|50/50|20/20)(?![\w/]|[.,]\d)")

# "'85", "’07": a year of the century the text is in.
_SHORT_YEAR = re.compile(r"(?<![\w'’])['’](\d\d)\b(?![''’]|\.\d)")

_ORDINAL = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(st|nd|rd|th|(?<=[23])d)\b")
_YEAR_RANGE = re.compile(
    r"(?<![\w.,])(1\d{3}|20\d\d)\s*(?:–|-|\bto\b)\s*(\d{4}|\d\d?)(?![\w.,]?\d)"
)


def _say_year_range(match: re.Match[str]) -> str:
    start, end = match.groups()
    if len(end) == 1:  # "1861-2": the next year of the same decade
        end = start[2] + end
    end_words = year(int(end)) if len(end) == 4 else cardinal(int(end))
    return f"{year(int(start))} to {end_words}"


# "2-5", "10–20%", "2-5lb": a hyphen between two numbers, not in a longer chain ("3-4-5"),
# reads "to". Phone numbers, dates and codes are gone by the time this runs.
_NUMBER_RANGE = re.compile(
    r"(?<![\w.,/-])(\d+(?:\.\d+)?)\s?[-–]\s?(?=\d+(?:\.\d+)?(?![\d.,]?\d|-\w|/))"
)

_MIXED_FRACTION = re.compile(rf"(?<![\w.,])(\d+)\s?([{VULGAR_CLASS}])")
_VULGAR = re.compile(rf"[{VULGAR_CLASS}]")
_DENOMINATOR = r"(\d{1,3}(?:,\d{3})+|\d{1,6})"
# "2 1/2", "1 3/4": a whole number and a proper fraction.
_MIXED_SLASH = re.compile(rf"(?<![\w.,/])(\d+)[ \u00a0]+(\d{{1,2}})/{_DENOMINATOR}(?![\w/]|[.,]\d)")
# "1/4th", "3/4ths", "1/3rd": the suffix says the denominator is an ordinal.
_FRACTION = re.compile(
    rf"(?<![\w./])(\d{{1,3}})/{_DENOMINATOR}((?i:st|nd|rd|ths?))?(?![\w/]|[.,]\d)"
)


def _say_mixed(match: re.Match[str]) -> str:
    whole, char = match.groups()
    return f"{cardinal(int(whole))} and {and_a(*VULGAR_FRACTIONS[char])}"


def _say_mixed_slash(match: re.Match[str]) -> str:
    whole, numerator, denominator = match.group(1), int(match.group(2)), to_int(match.group(3))
    if not 0 < numerator < denominator:
        return match.group()
    return f"{cardinal(int(whole))} and {and_a(numerator, denominator)}"


def _say_fraction(match: re.Match[str]) -> str:
    numerator, denominator = int(match.group(1)), to_int(match.group(2))
    if denominator < 2 or numerator > 100:
        if match.group(3):
            return match.group()
        # "142/1", "124/7": no fraction anyone says, but the figures and the slash are read
        return f"{cardinal(numerator)} over {cardinal(denominator)}"
    if match.group(3) and denominator == 4:
        ordinal_words = "fourth"
        return f"{cardinal(numerator)} {ordinal_words if numerator == 1 else ordinal_words + 's'}"
    return fraction(numerator, denominator)


# "221B", "16A": a house number with a letter, read as house numbers are ("two twenty-one").
_HOUSE = re.compile(r"(?<![\w.,])(\d{3,4})([A-Z])\b")
# "Room 101", "Boeing 747", "Flight 370": a number that names, read the same way.
_NAMING = re.compile(
    r"\b(Room|Flat|Apartment|Suite|Gate|Platform|Flight|Route|Highway|Bus|Boeing|Airbus|Model)"
    r"\s+(\d{3,4})\b(?![.,]\d)"
)
# "Call 911", "dial 999": a number to call, digit by digit.
_DIALLED = re.compile(
    r"\b((?i:call|dial|ring|phone|text|ending in|ends in|ending with)\s+)(\d{3,})\b(?![.,]\d)"
)
# "3:1", "a 10:1 ratio": a ratio (a clock time has two digits of minutes).
_RATIO = re.compile(r"(?<![\w.,:])(\d+):(\d)(?![\d:])")
_NAMED_BEFORE = re.compile(r"\b[A-Z][a-z]+\s+$")


def _say_ratio(match: re.Match[str]) -> str:
    first, second = cardinal(int(match.group(1))), cardinal(int(match.group(2)))
    if _NAMED_BEFORE.search(match.string, 0, match.start()):
        return f"{first} {second}"  # "Genesis 1:1", "Psalm 23:4": chapter and verse
    return f"{first} to {second}"


def house_number(digits: str) -> str:
    if len(digits) == 4:
        return year(int(digits))
    head, tail = cardinal(int(digits[0])), digits[1:]
    if tail == "00":
        return f"{head} hundred"
    return f"{head} {'oh ' + cardinal(int(tail[1])) if tail[0] == '0' else cardinal(int(tail))}"


_NUMBER = re.compile(r"(?<![\d,.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])")


def _say_number(match: re.Match[str]) -> str:
    text = match.group(1)
    if len(text) == 4 and text.isdigit() and not text.startswith("0"):
        return spaced(match, year(int(text)))
    return spaced(match, number(text))


# "WWII", "WW2": the world wars by their names.
_WORLD_WAR = re.compile(r"\bWW(I|II|1|2)\b")
_WARS = {"I": "One", "1": "One", "II": "Two", "2": "Two"}

_SYMBOLS: list[Rule] = [
    (re.compile(r"(?<=\d)\s?×\s?(?=\d)"), " by "),
    (re.compile(r"\s*×\s*"), " times "),
    # Only an en dash is a range: "555-1234" keeps its hyphen.
    (re.compile(r"(?<=\d)\s*–\s*(?=\d)"), " to "),
    (re.compile(r"\s*&\s*"), " and "),
    (re.compile(r"±\s?(?=\d|[a-z]{1,3}\b)"), "plus or minus "),
    (re.compile(r"~(?<![\w~]~)\s?(?=\d)"), "about "),
]

_HEADINGS = ("Chapter", "Book", "Part", "Volume", "Section", "Act", "Scene", "Canto", "Stave",
             "Letter", "Appendix", "Lecture", "Psalm", "Article", "Plate")  # fmt: skip
# After these a numeral is a cardinal: "World War II" is "World War two".
_CARDINAL_AFTER = ("War", "Mark", "Type", "Class", "Phase", "Grade", "Level", "Stage", "Apollo",
                   "Vatican", "Bowl")  # fmt: skip
_ROMAN = roman.RomanWords(
    heading_words=[*_HEADINGS, *(word.upper() for word in _HEADINGS)],
    cardinal=cardinal,
    regnal=lambda value, _name: "the " + ordinal(value).capitalize(),
    cardinal_after=_CARDINAL_AFTER,
)

_MINUS = re.compile(r"(?<![\w-])[-−](?=\.?\d)")
_CODES = codes.CodeWords(
    digits=code_digits,
    cardinal=cardinal,
    at="at",
    dot="dot",
    slash="slash",
    point="point",
    version="version",
    plus="plus",
)

# The patterns below start with the character they need ("\d(?<![\w.,]\d)" rather than
# "(?<![\w.,])\d"), so the regex engine skips ahead to it instead of testing every position.

# "340 A.D", "44 B.C.", "AD 79": a year of an era; "A.D" is said as its letters.
_ERA_NAMES = {"AD": "AD", "BC": "BC", "BCE": "BCE", "CE": "CE"}
_ERA = re.compile(
    r"(\d(?<![\w.,]\d)\d{0,3})\s?((?:A\.?D|B\.?C(?:\.?E)?|C\.?E)\b\.?|AD|BC|BCE|CE)(?!\w)"
)


def _say_era(match: re.Match[str]) -> str:
    digits, era = match.groups()
    name = _ERA_NAMES[era.replace(".", "")]
    said = house_number(digits) if len(digits) >= 3 else cardinal(int(digits))
    return f"{said} {name}" + (sentence_stop(match) if era.endswith(".") else "")


# "2Q22", "3Q2021": a quarter of a year, as business writing has it.
_QUARTER = re.compile(r"([1-4])(?<![\w.,][1-4])Q(\d\d|\d{4})\b")


def _say_quarter(match: re.Match[str]) -> str:
    quarter, when = match.groups()
    said = year(int(when)) if len(when) == 4 else cardinal(int(when))
    return f"the {ordinal(int(quarter))} quarter of {said}"


# "123-123-5678-1", "111-11-1111": a chain of three groups of figures or more, with seven
# figures in all, is an account or identity number, read in groups of digits.
_DIGIT_CHAIN = re.compile(r"\d(?<![\w.,/-]\d)\d*(?:-\d+){2,}(?![\w/-]|[.,]\d)")


_DATE_SHAPE = re.compile(r"\d{1,2}-\d{1,2}-(?:\d\d|\d{4})|\d{4}-\d{1,2}-\d{1,2}")


def _say_digit_chain(match: re.Match[str]) -> str:
    groups = match.group().split("-")
    if sum(len(group) for group in groups) < 7 or _DATE_SHAPE.fullmatch(match.group()):
        return match.group()  # "3-4-5": small numbers; "15-01-2020": a date
    return ", ".join(code_digits(group) for group in groups)


# "ab9453", "XK20417": letters run into four figures or more are a code, said digit by digit.
_LETTERED_CODE = re.compile(r"\d(?<=[A-Za-z]\d)\d{3,}\b(?![.,]\d)")
_CODE_LETTERS = re.compile(r"(?<![\w.,])[A-Za-z]{1,4}$")


def _say_lettered_code(match: re.Match[str]) -> str:
    if not _CODE_LETTERS.search(match.string, max(0, match.start() - 5), match.start()):
        return match.group()  # "ABCDE1234" or "x.ab1234": not letters that start a code
    return " " + code_digits(match.group())


# "1 - 2 = 5", "y=x +1": an equation; its signs are said.
_OPERAND = r"(?:\d+(?:\.\d+)?|[A-Za-z](?![\w']))"
_EQUATION = re.compile(
    rf"(?<![\w=+*/.,-]){_OPERAND}(?:\s*[-+*/×=−]\s*{_OPERAND})*\s*=\s*{_OPERAND}"
    rf"(?:\s*[-+*/×=−]\s*{_OPERAND})*(?![\w=+*/])"
)
_OPERATOR = re.compile(r"\s*([-+*/×=−])\s*")
_OPERATOR_WORDS = {"+": "plus", "-": "minus", "−": "minus", "*": "times", "×": "times",
                   "/": "over", "=": "equals"}  # fmt: skip


def _say_equation(match: re.Match[str]) -> str:
    return _OPERATOR.sub(lambda m: f" {_OPERATOR_WORDS[m.group(1)]} ", match.group())


# "nvidia.com", "test2.co.uk": a bare web address with a well-known ending.
_TLDS = ("com", "org", "net", "edu", "gov", "io", "ai", "co", "uk", "us", "ca", "de", "fr",
         "es", "nl", "au", "jp", "cn", "ru", "info", "biz", "tv")  # fmt: skip
_TLD = "|".join(_TLDS)
_DOMAIN = re.compile(
    rf"(?<![\w@./-])[A-Za-z0-9][A-Za-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:{_TLD})(?:\.[a-z]{{2}})?"
    r"(?![\w/@-]|\.\w)"
)


def _say_domain(match: re.Match[str]) -> str:
    parts = [
        re.sub(r"\d+", lambda m: " " + code_digits(m.group()) + " ", part).strip()
        for part in match.group().split(".")
    ]
    return " dot ".join(re.sub(r"\s+", " ", part) for part in parts)


# "C++", "f++": the language names read with their pluses.
_PLUS_PLUS = re.compile(r"\+\+(?<=\b[A-Za-z]\+\+)(?![\w+])")

# An address: "1428 Elm St.", "708 N 1st St", "123 Laguna Ct": the house number is read in
# pairs, a direction and the kind of street are said in full.
_STREET_KINDS = {
    "st": "Street", "ave": "Avenue", "av": "Avenue", "rd": "Road", "ct": "Court",
    "blvd": "Boulevard", "ln": "Lane", "dr": "Drive", "pl": "Place", "sq": "Square",
    "pkwy": "Parkway", "hwy": "Highway", "expy": "Expressway", "fwy": "Freeway",
    "cir": "Circle", "ter": "Terrace", "terr": "Terrace",
}  # fmt: skip
_ADDRESS = re.compile(
    r"(\d(?<![\w.,]\d)\d{0,4})\s+(?:([NSEW])\.?\s+)?"
    r"((?:(?:[A-Z][a-z]+|\d+(?:st|nd|rd|th))\s+){1,3})"
    rf"(?i:({word_alternation(list(_STREET_KINDS))}))\b(\.)?"
)
# "Santa Clara, CA 95051": a state's two letters before a ZIP code are its name, and the ZIP
# code is read digit by digit.
_STATES = {
    "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California",
    "CO": "Colorado", "CT": "Connecticut", "DE": "Delaware", "DC": "D C", "FL": "Florida",
    "GA": "Georgia", "HI": "Hawaii", "ID": "Idaho", "IL": "Illinois", "IN": "Indiana",
    "IA": "Iowa", "KS": "Kansas", "KY": "Kentucky", "LA": "Louisiana", "ME": "Maine",
    "MD": "Maryland", "MA": "Massachusetts", "MI": "Michigan", "MN": "Minnesota",
    "MS": "Mississippi", "MO": "Missouri", "MT": "Montana", "NE": "Nebraska", "NV": "Nevada",
    "NH": "New Hampshire", "NJ": "New Jersey", "NM": "New Mexico", "NY": "New York",
    "NC": "North Carolina", "ND": "North Dakota", "OH": "Ohio", "OK": "Oklahoma",
    "OR": "Oregon", "PA": "Pennsylvania", "RI": "Rhode Island", "SC": "South Carolina",
    "SD": "South Dakota", "TN": "Tennessee", "TX": "Texas", "UT": "Utah", "VT": "Vermont",
    "VA": "Virginia", "WA": "Washington", "WV": "West Virginia", "WI": "Wisconsin",
    "WY": "Wyoming",
}  # fmt: skip
_ZIP = re.compile(r", ([A-Z]{2}) (\d{5})(?:-(\d{4}))?\b(?![.,]\d)")


def _say_zip(match: re.Match[str]) -> str:
    state, zip_code, extension = match.groups()
    # ZIP codes are said with "zero", not "oh"
    digits = " ".join(digit_words(part, LANG) for part in (zip_code, extension) if part)
    return f", {_STATES.get(state, state)} {digits}"


_DIRECTION_NAMES = {"N": "North", "S": "South", "E": "East", "W": "West"}


def _address_number(digits: str) -> str:
    if len(digits) == 4 and digits[2] != "0":
        return number_words(int(digits), LANG, "year")  # "1428": "fourteen twenty-eight"
    if len(digits) == 3:
        return house_number(digits)
    return cardinal(int(digits))


def _say_address(match: re.Match[str]) -> str:
    digits, direction, name, kind, stop = match.groups()
    words = [_address_number(digits)]
    if direction:
        words.append(_DIRECTION_NAMES[direction])
    words.append(name.strip())
    words.append(_STREET_KINDS[kind.lower()])
    return " ".join(words) + (sentence_stop(match) if stop else "")


RULES: list[Rule] = [
    (re.compile(r"&c\.(?=[\s,;:)]|$)"), lambda m: "et cetera" + sentence_stop(m)),
    (_ENDING_ABBREVIATION, _say_ending),
    (_WORLD_WAR, lambda m: "World War " + _WARS[m.group(1)]),
    (_ADDRESS, _say_address),  # before titles: "12 Oak Dr" is a drive
    (_TITLE, lambda m: _TITLES[m.group(1)]),
    (_SAINT, "Saint"),
    (_STREET, lambda m: m.group(1) + "Street" + sentence_stop(m)),
    *roman.roman_rules(_ROMAN),
    *codes.code_rules(_CODES),
    (_DOMAIN, _say_domain),
    (_EQUATION, _say_equation),
    (_PLUS_PLUS, " plus plus"),
    (_DIGIT_CHAIN, _say_digit_chain),
    (_LETTERED_CODE, _say_lettered_code),
    (_ERA, _say_era),
    (_ZIP, _say_zip),
    (_QUARTER, _say_quarter),
    *en_dates.TIME_RULES,  # before "p." is read as "page": "3 p.m."
    (_NUMBERED, _say_numbered),
    (_CIRCA, lambda m: "circa " + year(int(m.group(1)))),
    *en_money.RULES,
    (_MINUS, "minus "),
    *en_units.DEGREE_RULES,
    *en_dates.DATE_RULES,
    *en_units.UNIT_RULES,  # before ranges of years: "1980-1970 kg" is a weight
    (_DECADE, _say_decade),
    (_ROUND_PLURAL, lambda m: _ROUND_WORDS[m.group(1).replace(",", "")]),
    (_IDIOM, lambda m: _IDIOMS[m.group(1)]),
    (_YEAR_RANGE, _say_year_range),
    (_NUMBER_RANGE, lambda m: m.group(1) + " to "),
    (re.compile(rf"{NUM}\s?%"), lambda m: number(m.group(1)) + " percent"),
    (_MIXED_SLASH, _say_mixed_slash),
    (_FRACTION, _say_fraction),  # before ordinals: "1/4th"
    (_ORDINAL, lambda m: spaced(m, ordinal(to_int(m.group(1))))),
    (_MIXED_FRACTION, _say_mixed),
    (_VULGAR, lambda m: spaced(m, fraction(*VULGAR_FRACTIONS[m.group()]))),
    *_SYMBOLS,
    (_HOUSE, lambda m: f"{house_number(m.group(1))} {m.group(2)}"),
    (_DIALLED, lambda m: m.group(1) + code_digits(m.group(2))),
    (_NAMING, lambda m: f"{m.group(1)} {house_number(m.group(2))}"),
    (_RATIO, _say_ratio),
    (_SHORT_YEAR, lambda m: short_year(m.group(1))),
    (_NUMBER, _say_number),
    (re.compile(r"§§?\s*"), lambda m: "sections " if len(m.group().strip()) == 2 else "section "),
    # Whatever digits the rules above left ("1.2.3") are read one number at a time.
    (re.compile(r"\d+"), lambda m: spaced(m, number(m.group()))),
]


# Rules that need what few chunks have run only where a cheap test finds it: a plain
# substring, or a pattern that starts with a literal or a digit.
_NEEDS: dict[re.Pattern[str], str | re.Pattern[str]] = {
    _DOMAIN: re.compile(rf"\.(?:{_TLD})\b"),
    _EQUATION: "=",
    _PLUS_PLUS: "++",
    _WORLD_WAR: "WW",
    _ZIP: ", ",
    _ERA: re.compile(r"[ABC]\.?[DCE]"),
    _DIGIT_CHAIN: "-",
    **en_dates.NEEDS,
    **en_units.NEEDS,
}


def say(text: str) -> str:
    for pattern, replacement in RULES:
        needed = _NEEDS.get(pattern)
        if needed is None or (
            needed in text if isinstance(needed, str) else needed.search(text) is not None
        ):
            text = pattern.sub(replacement, text)
    return text


# Words that send a chunk through the rules: the abbreviations above (see `spoken`).
_TRIGGER_ABBREVIATIONS = [*_ENDING, *_NUMBER_ABBREVIATIONS, "c", "ca", "circ"]
TRIGGER = (
    rf"{codes.TRIGGER}|"
    rf"\b(?:{word_alternation([*_TITLES, 'St'])})\b|{roman.trigger(_ROMAN)}"
    rf"|(?i:(?<![\w.])(?:{word_alternation(_TRIGGER_ABBREVIATIONS)})\.)|\+\+"
    rf"|\.(?:{_TLD})\b|WW[I12]"
)
