"""Money in German, French and Spanish: the amount, its scale word, then the currency.

"€1 million" → "eine Million Euro", "1,5 Millionen €" → "eins Komma fünf Millionen Euro",
"€0,01" → "ein Cent", "€2 billones" → "dos billones de euros", "200 £" → "doscientas libras",
"2 millions €" → "deux millions d'euros". The symbol or ISO code may stand before or after the
amount, and a scale word ("Mio.", "Millionen", "millones", "milliards") belongs to the amount.
Each language gives its words in a `MoneyWords`; English has its own rules (`en_money`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from audiopub.book.spoken.common import Rule
from audiopub.book.spoken.currency import CODES, SYMBOLS, currency


@dataclass(frozen=True)
class MoneyWords:
    lang: str
    number: Callable[[str], str]  # "1.250" or "3,5" in words
    cardinal: Callable[[int], str]
    scales: dict[str, tuple[str, str]]  # as written → (one, many): "Mio." → Million(en)
    before_currency: Callable[[str], str]  # what joins a scale and the currency: " de "/" d'"
    minor_join: str  # between whole and hundredths: " ", " con "
    one: Callable[[bool], str]  # "ein"/"eine", "un"/"una", "un"/"une"
    feminine: Callable[[str], str] = lambda words: words  # number words agreeing with "libra"
    masculine: Callable[[str], str] = lambda words: words  # "veintiuno" → "veintiún euros"
    feminine_scales: bool = False  # German "eine Million"
    # Hundredths under this are named ("cinco libras con un penique"): a bare "con uno" is
    # heard as ten.
    minor_named_below: int = 0


_SYMBOL = "|".join(re.escape(symbol) for symbol in sorted(SYMBOLS, key=len, reverse=True))
_CODE = "|".join(CODES)
# "1.250", "1 250", "3,5", "12".
_AMOUNT = r"(\d{1,3}(?:[.\u00a0 ]\d{3})+(?:,\d+)?|\d+(?:,\d+)?)"


def money_rules(words: MoneyWords) -> list[Rule]:
    scale = "|".join(re.escape(s) for s in sorted(words.scales, key=len, reverse=True))
    scale_group = rf"(?:\s+({scale})(?!\w))?"
    before = re.compile(rf"(?<![\w])({_SYMBOL}|\b(?:{_CODE})\b)\s?{_AMOUNT}(?![\d,]){scale_group}")
    after = re.compile(
        rf"(?<![\w.,]){_AMOUNT}(?![\d,]){scale_group}(?:\s+de)?\s?(?:({_CODE})\b|({_SYMBOL})(?!\w))"
    )

    scale_names = {name for pair in words.scales.values() for name in pair}

    def say(written: str, amount: str, scale_word: str | None) -> str:
        money = currency(written, words.lang)
        whole_text, _, cents = amount.partition(",")
        whole = int(re.sub(r"\D", "", whole_text) or "0")
        if scale_word:
            one, many = words.scales[scale_word]
            count = words.number(amount)
            if whole == 1 and not cents:
                count = words.one(words.feminine_scales)
            name = one if whole == 1 and not cents else many
            return f"{count} {name}{words.before_currency(money.many)}{money.many}"
        if len(cents) > 2 and cents[2:].strip("0"):  # "1,799 €": said as a decimal number
            return f"{words.number(amount)} {money.many}"
        parts = []
        if whole or not (cents and int(cents) and money.minor_one):
            count = words.one(money.feminine) if whole == 1 else words.cardinal(whole)
            count = words.feminine(count) if money.feminine else words.masculine(count)
            name = money.one if whole == 1 else money.many
            if count.split()[-1] in scale_names:  # "un millón de euros"
                name = words.before_currency(name).lstrip() + name
            parts.append(f"{count} {name}")
        if cents and int(cents):
            minor = int(cents.ljust(2, "0")[:2]) if money.minor_one else int(cents)
            if not parts:
                count = words.one(False) if minor == 1 else words.cardinal(minor)
                return f"{count} {money.minor_one if minor == 1 else money.minor_many}"
            if minor < words.minor_named_below and money.minor_one:
                count = words.one(False) if minor == 1 else words.cardinal(minor)
                parts.append(f"{count} {money.minor_one if minor == 1 else money.minor_many}")
            else:
                parts.append(words.cardinal(minor))
        return words.minor_join.join(parts)

    def say_before(match: re.Match[str]) -> str:
        written, amount, scale_word = match.groups()
        return say(written, amount, scale_word)

    def say_after(match: re.Match[str]) -> str:
        amount, scale_word, code, symbol = match.groups()
        return say(code or symbol, amount, scale_word)

    return [(before, say_before), (after, say_after)]
