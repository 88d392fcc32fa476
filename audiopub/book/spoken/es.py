"""Spanish spoken forms: numbers, ordinals, fractions, dates, times, money, units and
abbreviations.

Covers cardinals with "." or spaces between thousands and "," before decimals ("3,5" → "tres
coma cinco", "33,32" → "treinta y tres coma treinta y dos"), years (read as cardinals, as
Spanish does), ordinals written "1.º", "21.ª", "3.er", "1.os", "1ro", "2da" ("21.º" →
"vigesimoprimero", "vigesimoprimer" before a noun; words in `es_words`), fractions
("1/6" → "un sexto", "1/12" → "un doceavo", "1/111" → "uno sobre ciento once"), currency (€ $ £,
any ISO code, "kr", "ptas"), per cent, dates and clock times (`es_dates`), units
(`es_units`), Roman numerals in headings ("Capítulo IV"), after "siglo" ("siglo XIX" →
"siglo diecinueve"), after an article before a noun ("el XI apóstol" → "el undécimo apóstol")
and after rulers' names ("Felipe II" → "Felipe segundo"; ordinals up to ten, cardinals beyond:
"Alfonso XIII" → "Alfonso trece"), and abbreviations ("Sr.", "Sra.", "Dr.", "p. ej.", "núm.",
"n.º", "pág.", "etc.", "Pza.", "EE. UU.", in lower case too where titles are written so).

Number words agree with a feminine noun, unit or currency after them ("doscientas personas",
"veintiuna libras") and ordinals with their mark or article; other agreement is deliberately
not covered, nor are "y cuarto"/"y media" readings of times.
"""

from __future__ import annotations

import re

from audiopub.book.spoken import codes, es_dates, es_units, money, roman
from audiopub.book.spoken.common import (
    VULGAR_CLASS,
    Rule,
    apply_rules,
    digit_words,
    fraction_words,
    match_case,
    mixed_number_words,
    roman_value,
    sentence_stop,
    spaced,
    word_alternation,
)
from audiopub.book.spoken.es_words import (
    LANG,
    LARGEST_ORDINAL,
    cardinal,
    masculine,
    number,
    ordinal_words,
    partitive,
)
from audiopub.book.spoken.es_words import feminine as _feminine


def ordinal(value: int, feminine: bool = False) -> str:
    return ordinal_words(value, feminine)


_NUM = r"(?<![\w.,])(\d{1,3}(?:[ .]\d{3})+(?:,\d+)?|\d+(?:,\d+)?)(?![\w]|[.,]\d)"

# "1.º", "1º", "2.ª", "3.er" (primer), "1.os", "21.º", "1.000.ª", and the short marks "1ro",
# "2da", "4to", which must end as the ordinal does.
_ORDINAL = re.compile(r"(?<![\w.,])(\d{1,3}(?:[ .]\d{3})+|\d+)\.?(º|ª|er|os|as|[rdtmvn][oa])(?!\w)")


def _say_ordinal(match: re.Match[str]) -> str:
    value, mark = int(re.sub(r"\D", "", match.group(1))), match.group(2)
    if not 0 < value <= LARGEST_ORDINAL:
        return match.group()
    if mark == "er":
        # "11.ᵉʳ" says "decimoprimer": "undécimo" has no short form.
        words = re.sub(r"undécimo$", "decimoprimer", ordinal_words(value, apocope=True))
        return words if words.endswith(("primer", "tercer")) else match.group()
    feminine = mark in ("ª", "as") or mark.endswith("a")
    words = ordinal_words(value, feminine)
    if mark in ("os", "as"):
        return " ".join(word + "s" for word in words.split())
    if mark not in ("º", "ª") and not words.endswith(mark):
        return match.group()  # "2ro" is no ordinal
    if not feminine and _NOUN_FOLLOWS.match(match.string, match.end()):
        return ordinal_words(value, apocope=True)  # "el 21.º piso" → "vigesimoprimer piso"
    return words


_MONEY = money.MoneyWords(
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
    masculine=masculine,
    minor_named_below=10,
)


_CODES = codes.CodeWords(
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
# "1/6", "3 2/100", "1/1.000.000"; dates ("10/10/1989") are read before.
_SLASH_FRACTION = re.compile(
    r"(?<![\w./,])(?:(\d+)\s)?(\d{1,3})/(\d{1,3}(?:\.\d{3})+|\d{1,10})(?![\w/]|[.,]\d)"
)


def _slash_fraction(match: re.Match[str]) -> str:
    whole = match.group(1)
    numerator, denominator = int(match.group(2)), int(match.group(3).replace(".", ""))
    if denominator < 2:
        return match.group()
    words = _fraction_of(numerator, denominator)
    if whole:
        # "tres y dos centésimos", "uno y medio" (as "1½" is read)
        words = f"{cardinal(int(whole))} y {'medio' if words == 'un medio' else words}"
    return spaced(match, words)


def _fraction_of(numerator: int, denominator: int) -> str:
    """ "un sexto", "dos tercios", "un doceavo", "uno sobre ciento once"."""
    if (numerator, denominator) in _VULGAR_WORDS:
        return _VULGAR_WORDS[numerator, denominator]
    part = partitive(denominator)
    if part is None:
        return f"{cardinal(numerator)} sobre {cardinal(denominator)}"
    return f"{masculine(cardinal(numerator))} {part}{'s' if numerator != 1 else ''}"


_NUMBERED = {
    "núm.": "número",
    "Núm.": "número",
    "n.º": "número",
    "nº": "número",
    "N.º": "número",
    "Nº": "número",
    "pág.": "página",
    "págs.": "páginas",
    "p.": "página",
    "vol.": "volumen",
    "cap.": "capítulo",
    "art.": "artículo",
    "arts.": "artículos",
    "fig.": "figura",
    "figs.": "figuras",
}
_NUMBERED_ABBREVIATION = re.compile(rf"(?<![\w.])({word_alternation(list(_NUMBERED))})(?=\s*\d)")
_ABBREVIATIONS = {
    "Sr.": "señor",
    "Da.": "doña",
    "Dª": "doña",
    "Lic.": "licenciado",
    "Lda.": "licenciada",
    "Ldo.": "licenciado",
    "Ing.": "ingeniero",
    "Prof.": "profesor",
    "Profa.": "profesora",
    "Gral.": "general",
    "Excmo.": "excelentísimo",
    "Excma.": "excelentísima",
    "Ilmo.": "ilustrísimo",
    "Ilma.": "ilustrísima",
    "Mons.": "monseñor",
    "Avda.": "avenida",
    "Av.": "avenida",
    "Pza.": "plaza",
    "Pl.": "plaza",
    "Cía.": "compañía",
    "esq.": "esquina",
    "izq.": "izquierda",
    "dcha.": "derecha",
    "tel.": "teléfono",
    "Tel.": "teléfono",
    "ext.": "extensión",
    "EE. UU.": "Estados Unidos",
    "EE.UU.": "Estados Unidos",
    "EE UU": "Estados Unidos",
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
    "Mª": "María",
    "M.ª": "María",
    "Fco.": "Francisco",
    "Fdez.": "Fernández",
    "Glez.": "González",
    "Hnos.": "hermanos",
    "Dpto.": "departamento",
    "Depto.": "departamento",
    "Vda.": "viuda",
    "Ntra.": "nuestra",
    "Ntro.": "nuestro",
}
# Titles and places are written in lower case in running text too ("el sr. López").
# Not those whose lower case is a word or an initial: "me da.", "d.", "pl." (plural).
_NO_LOWER_CASE = {"D.", "Da.", "Pl.", "EE. UU.", "EE.UU."}
_ABBREVIATIONS.update({
    written.lower(): words
    for written, words in list(_ABBREVIATIONS.items())
    if written[0].isupper() and written.endswith(".") and written not in _NO_LOWER_CASE
})  # fmt: skip
_MAY_END = {"etc.", "a. C.", "d. C.", "aprox.", "EE. UU.", "EE.UU.", "izq.", "dcha."}
_ABBREVIATION = re.compile(rf"(?<![\w.])({word_alternation(list(_ABBREVIATIONS))})(?!\w)")
_NAME_FOLLOWS = re.compile(r"\s+[A-ZÁÉÍÓÚÑ][a-záéíóúñ]")


def _say_abbreviation(match: re.Match[str]) -> str:
    written = match.group(1)
    if written == "D." and not _NAME_FOLLOWS.match(match.string, match.end()):
        return written  # "D." is "don" only before a name; otherwise an initial
    words = _ABBREVIATIONS[written]
    if written in _PLACES:
        words = match_case(words, written)
    if written.lower() in _PLACES_MAY_END and not match.string[match.end() :].strip(_CLOSING):
        return words + "."  # "en la esq." ends the chunk; "esq. Toledo" is a name after it
    return words + sentence_stop(match) if written in _MAY_END else words


_PLACES = {"Avda.", "Av.", "Pza.", "Pl.", "Cía."}
_PLACES_MAY_END = {"esq.", "pza.", "avda.", "cía."}
_CLOSING = " \t\n\"'’”)]»"


_QUEENS = {"Isabel", "Juana", "María", "Catalina"}
_ROMAN = roman.RomanWords(
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

# A numeral after "siglo" ("siglo XIX", "siglos XV y XVI", or "siglo xix" in small capitals)
# or "año" is a cardinal; after an article and before a noun it is an ordinal that agrees
# with the article: "el XI apóstol" → "el undécimo apóstol", "la XX edición".
_CENTURY = re.compile(
    r"\b(siglos?|Siglos?|SIGLOS?|años?|Años?)(\s+)([IVXLCDM]+|[ivxlcdm]+)\b(?![\w'’-])"
    r"(?:(\s+(?:y|e|o|al|a)\s+)([IVXLCDM]+|[ivxlcdm]+)\b(?![\w'’-]))?"
)
_ARTICLE_ROMAN = re.compile(
    r"\b(el|la|los|las|del|al|El|La|Los|Las|Del|Al)(\s+)([IVXLCDM]{2,})(?=\s+"
    r"(?!(?:de|del|y|e|o|u|en|a|al|que|es|fue|con|por|para)\b)[a-záéíóúñ]{3,})"
)


def _say_century(match: re.Match[str]) -> str:
    word, space, numeral, joiner, second = match.groups()
    value = roman_value(numeral)
    if value is None or (word.lower().startswith("año") and numeral.islower() and len(numeral) < 4):
        return match.group()  # "ese año vi a…": a short lower-case word is a word
    words = f"{word}{space}{cardinal(value)}"
    second_value = roman_value(second) if second else None
    if second_value is None:
        return words + (match.group()[len(word) + len(space) + len(numeral) :] if second else "")
    return f"{words}{joiner}{cardinal(second_value)}"


def _say_article_roman(match: re.Match[str]) -> str:
    article, space, numeral = match.groups()
    value = roman_value(numeral)
    if value is None:
        return match.group()
    lower = article.lower()
    words = ordinal_words(
        value, feminine=lower in ("la", "las"), apocope=lower in ("el", "del", "al")
    )
    if lower in ("los", "las"):
        words = " ".join(word + "s" for word in words.split())
    return f"{article}{space}{words}"


# "1914-1918": years joined by a hyphen are a range.
_YEAR_RANGE = re.compile(r"(?<![\w.,/-])(\d{4})-(\d{4})(?![\w/-]|[.,]\d)")
# "3 000 000 000 000": thousands grouped by spaces are one number, not a phone number.
_SPACED_NUMBER = re.compile(
    r"(?<![\w.,+-])([1-9]\d{0,2}(?:[ \u00a0\u202f]\d{3}){2,})(?![\w]|[.,]\d)"
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
    if words.endswith(("millón", "millones", "billón", "billones")) and _NOUN_FOLLOWS.match(rest):
        return spaced(match, words + " de")  # "3 000 000 habitantes" → "tres millones de …"
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
    (_CENTURY, _say_century),
    (_ARTICLE_ROMAN, _say_article_roman),
    *roman.roman_rules(_ROMAN),
    (_ORDINAL, lambda m: spaced(m, _say_ordinal(m))),
    (_SPACED_NUMBER, _say_number),
    *es_dates.RULES,
    (_YEAR_RANGE, r"\1 a \2"),
    *es_dates.TIME_RULES,
    *codes.code_rules(_CODES),
    (re.compile(r"(?<![\w-])[-−](?=\d)"), "menos "),
    (re.compile(r"(?<=\d)\s*×\s*(?=\d)"), " por "),  # "2 × 3 m"
    *es_units.MONEY_RULES,
    *money.money_rules(_MONEY),
    (re.compile(rf"{_NUM}\s?%"), lambda m: number(m.group(1)) + " por ciento"),
    *es_units.UNIT_RULES,
    (re.compile(rf"(?<![\w.,])(\d+)\s?([{VULGAR_CLASS}])"), _mixed),
    (re.compile(f"[{VULGAR_CLASS}]"), lambda m: spaced(m, _fraction(m.group()))),
    (_SLASH_FRACTION, _slash_fraction),
    (re.compile(r"(?<=\d)\s*–\s*(?=\d)"), " a "),
    (re.compile(r"\s*&\s*"), " y "),
    (re.compile(r"§\s*"), "párrafo "),
    (re.compile(_NUM), _say_number),
    (re.compile(r"\d+"), lambda m: spaced(m, cardinal(int(m.group())))),
]

# Words that send a chunk through the rules (see `spoken`).
TRIGGER = (
    rf"{codes.TRIGGER}|[ᵉᵒᵃ]"
    rf"|(?<![\w.])(?:{word_alternation([*_ABBREVIATIONS, *_NUMBERED])})"
    rf"|{roman.trigger(_ROMAN)}"
    r"|\b(?:siglos?|Siglos?|años?)\s+[ivxlcdmIVXLCDM]"
)


# The rules that read something other than ASCII digits; a chunk without a digit (most prose)
# skips the others. No rule writes a digit, so none can be missed.
_WORD_PATTERNS = {
    _ABBREVIATION,
    _CENTURY,
    _ARTICLE_ROMAN,
    *(pattern for pattern, _ in roman.roman_rules(_ROMAN)),
    *(pattern for pattern, _ in codes.code_rules(_CODES)),
}
_WORD_RULES = [rule for rule in RULES if rule[0] in _WORD_PATTERNS or r"\d" not in rule[0].pattern]
_DIGIT = re.compile(r"\d")


def say(text: str) -> str:
    text = text.translate(_SUPERSCRIPTS)
    return apply_rules(text, RULES if _DIGIT.search(text) else _WORD_RULES)
