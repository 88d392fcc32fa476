"""Spanish number words: cardinals and decimals, their gender, and the ordinals and partitives
num2words does not give as the RAE writes them.

Decimals of up to three digits after the comma are read as a number, as Spanish speakers say
them ("33,32" → "treinta y tres coma treinta y dos"); longer ones, or ones with a leading zero,
digit by digit ("0,0101" → "cero coma cero uno cero uno").

num2words' Spanish ordinals are inconsistent ("décimoprimero", "quadragésimo",
"cuadrigentésimo"), so they are built here from a table: "11.º" → "undécimo", "13.ª" →
"decimotercera", "21.º" → "vigesimoprimero", "31.º" → "trigésimo primero", "134.º" →
"centésimo trigésimo cuarto", "2000.º" → "dosmilésimo". Partitives (the denominator of a
fraction) are "medio", "tercio", "cuarto", ordinals to "décimo", cardinals with "-avo" from 11
to 99 ("doceavo", "treintaiunavo") and ordinals for round hundreds, thousands and millions
("centésimo", "milésimo", "millonésimo"); any other denominator has none ("uno sobre ciento
once").
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from audiopub.book.spoken.common import comma_decimal, number_words

LANG = "es"


def cardinal(value: int) -> str:
    return number_words(value, LANG)


def number(text: str) -> str:
    """ "1.250" → "mil doscientos cincuenta", "3,75" → "tres coma setenta y cinco"."""
    whole, _, decimals = text.partition(",")
    if 2 <= len(decimals) <= 3 and not decimals.startswith("0"):
        return f"{comma_decimal(whole, LANG, 'coma')} coma {cardinal(int(decimals))}"
    return comma_decimal(text, LANG, "coma")


def feminine(words: str) -> str:
    """ "doscientos uno" → "doscientas una", "uno coma cero uno" → "una coma cero una":
    numbers before a feminine noun ("libras")."""
    words = re.sub(r"ientos\b(?! mill)", "ientas", words)
    return _ONE_BEFORE.sub(lambda m: (m.group(1) or "") + "una", words)


# "uno", "veintiuno", "treinta y uno" at the end of the number or before its decimals.
_ONE_BEFORE = re.compile(r"(?<!\w)(veinti)?(?:uno|ún|un)(?=$| coma )")


def masculine(words: str) -> str:
    """ "veintiuno" → "veintiún", "treinta y uno" → "treinta y un": before a masculine noun."""
    return re.sub(r"veintiuno$", "veintiún", re.sub(r"\buno$", "un", words))


_UNITS = ("", "primero", "segundo", "tercero", "cuarto", "quinto", "sexto", "séptimo",
          "octavo", "noveno")  # fmt: skip
_TENS = ("", "décimo", "vigésimo", "trigésimo", "cuadragésimo", "quincuagésimo",
         "sexagésimo", "septuagésimo", "octogésimo", "nonagésimo")  # fmt: skip
_HUNDREDS = ("", "centésimo", "ducentésimo", "tricentésimo", "cuadringentésimo",
             "quingentésimo", "sexcentésimo", "septingentésimo", "octingentésimo",
             "noningentésimo")  # fmt: skip
# Ordinals below a million; larger ones are read as cardinals by the callers.
LARGEST_ORDINAL = 999_999


def _unaccented(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def _below_hundred(value: int) -> str:
    tens, units = divmod(value, 10)
    if value == 11:
        return "undécimo"
    if value == 12:
        return "duodécimo"
    if tens in (1, 2) and units:
        # One word: "decimotercero", "vigesimoctavo" (the "o"s merge).
        prefix = _unaccented(_TENS[tens])
        unit = _UNITS[units]
        return prefix[:-1] + unit if unit.startswith("o") else prefix + unit
    return " ".join(word for word in (_TENS[tens], _UNITS[units]) if word)


@lru_cache(maxsize=2048)
def ordinal_words(value: int, feminine: bool = False, apocope: bool = False) -> str:
    """ "vigesimoprimero", "trigésima primera", "decimotercer" (`apocope`: before a noun)."""
    if not 0 < value <= LARGEST_ORDINAL:
        return number_words(value, "es")
    thousands, rest = divmod(value, 1000)
    words = []
    if thousands:
        lead = "" if thousands == 1 else number_words(thousands, "es").replace(" ", "")
        words.append(lead + "milésimo")
    hundreds, rest = divmod(rest, 100)
    if hundreds:
        words.append(_HUNDREDS[hundreds])
    if rest:
        words.append(_below_hundred(rest))
    text = " ".join(words)
    if feminine:
        text = " ".join(word[:-1] + "a" if word.endswith("o") else word for word in text.split())
    elif apocope and text.endswith(("primero", "tercero")):
        text = text[:-1]
    return text


@lru_cache(maxsize=1024)
def partitive(denominator: int) -> str | None:
    """The word for one part of `denominator` ("tercio", "doceavo", "centésimo"), or None."""
    if denominator == 2:
        return "medio"
    if denominator == 3:
        return "tercio"
    if 4 <= denominator <= 10:
        return ordinal_words(denominator)
    if 11 <= denominator <= 99:
        # "treinta y uno" → "treintaiunavo", "dieciocho" → "dieciochavo", "veinte" → "veinteavo"
        words = _unaccented(number_words(denominator, "es")).replace(" y ", "i")
        words = words.replace(" ", "")
        words = words.removesuffix("uno") + "un" if words.endswith("uno") else words
        if words.endswith(("a", "o")):
            words = words[:-1]
        return words + "avo"
    if denominator % 1_000_000 == 0 and denominator // 1_000_000 < 1_000_000:
        millions = denominator // 1_000_000
        lead = "" if millions == 1 else number_words(millions, "es").replace(" ", "")
        return lead + "millonésimo"
    if denominator <= LARGEST_ORDINAL:
        words = ordinal_words(denominator)
        return words if " " not in words else None
    return None
