"""Currencies as books write them ("$", "¥", "₩", "USD", "CHF") and their names in words.

A symbol is said the way a narrator says it in that language ("$5" → "five dollars", "¥30" →
"thirty yen"); an ISO code is formal, so it gets the full name from babel's locale data ("USD
5" → "five US dollars", "100 CHF" → "hundert Schweizer Franken"). Codes are listed here rather
than taken from babel's 300-odd, because many retired or rare codes are also words in capitals
("ALL", "TOP", "CUP", "BAD") and only a code next to a number is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from babel.core import UnknownLocaleError
from babel.numbers import get_currency_name


@dataclass(frozen=True)
class Currency:
    """How one currency is said in one language: one and many of it, and of its hundredth."""

    one: str
    many: str
    minor_one: str = ""  # "" where books don't count the hundredths ("¥", "₩")
    minor_many: str = ""
    feminine: bool = False  # Spanish and French number words agree: "una libra"


# The symbols a book writes, and the ISO code each stands for where a symbol is shared ("¥" is
# the yen in English-language books far more often than the yuan).
SYMBOLS = {
    "$": "USD", "US$": "USD", "A$": "AUD", "C$": "CAD", "NZ$": "NZD", "HK$": "HKD",
    "£": "GBP", "€": "EUR", "¥": "JPY", "₩": "KRW", "₹": "INR", "₽": "RUB", "₣": "FRF",
    "₤": "ITL", "₺": "TRY", "₪": "ILS", "₱": "PHP", "฿": "THB", "₫": "VND", "₴": "UAH",
    "₦": "NGN", "₡": "CRC", "₭": "LAK", "₮": "MNT", "₲": "PYG", "₵": "GHS", "₸": "KZT",
    "₼": "AZN", "₾": "GEL", "₿": "BTC", "元": "CNY", "円": "JPY", "₨": "INR",
    "Rs.": "INR", "Rs": "INR", "R$": "BRL", "S$": "SGD", "NT$": "TWD",
}  # fmt: skip
SYMBOL_CLASS = "".join(sorted({symbol[-1] for symbol in SYMBOLS if len(symbol) == 1}))

# ISO 4217 codes in use that books print next to amounts.
# Codes that are also words or names in capitals ("TRY", "COP", "RON", "PHP 8") are left out:
# their symbols (₺, ₱) are read.
CODES = (
    "USD EUR GBP JPY CNY RMB KRW INR RUB CHF CAD AUD NZD HKD SGD SEK NOK DKK ISK PLN CZK HUF "
    "BGN HRK BRL MXN ARS CLP ZAR ILS THB IDR MYR VND EGP NGN KES SAR AED QAR KWD UAH PKR BDT "
    "LKR TWD"
).split()

# What a narrator says for a symbol, per language; codes and other symbols use babel's names.
_SPOKEN: dict[str, dict[str, Currency]] = {
    "en": {
        "USD": Currency("dollar", "dollars", "cent", "cents"),
        "GBP": Currency("pound", "pounds", "penny", "pence"),
        "EUR": Currency("euro", "euros", "cent", "cents"),
        "AUD": Currency("Australian dollar", "Australian dollars", "cent", "cents"),
        "CAD": Currency("Canadian dollar", "Canadian dollars", "cent", "cents"),
        "NZD": Currency("New Zealand dollar", "New Zealand dollars", "cent", "cents"),
        "HKD": Currency("Hong Kong dollar", "Hong Kong dollars", "cent", "cents"),
        "JPY": Currency("yen", "yen"),
        "CNY": Currency("yuan", "yuan"),
        "KRW": Currency("won", "won"),
        "INR": Currency("rupee", "rupees"),
        "RUB": Currency("rouble", "roubles"),
        "FRF": Currency("franc", "francs"),
        "ITL": Currency("lira", "lire"),
        "TRY": Currency("lira", "lira"),
        "ILS": Currency("shekel", "shekels"),
        "PHP": Currency("peso", "pesos"),
        "THB": Currency("baht", "baht"),
        "VND": Currency("dong", "dong"),
        "UAH": Currency("hryvnia", "hryvnias"),
        "NGN": Currency("naira", "naira"),
        "BTC": Currency("bitcoin", "bitcoins"),
    },
    "de": {
        "USD": Currency("Dollar", "Dollar", "Cent", "Cent"),
        "GBP": Currency("Pfund", "Pfund", "Penny", "Pence"),
        "EUR": Currency("Euro", "Euro", "Cent", "Cent"),
        "JPY": Currency("Yen", "Yen"),
        "CNY": Currency("Yuan", "Yuan"),
        "KRW": Currency("Won", "Won"),
        "INR": Currency("Rupie", "Rupien"),
        "RUB": Currency("Rubel", "Rubel"),
        "FRF": Currency("Franc", "Franc"),
        "BTC": Currency("Bitcoin", "Bitcoin"),
    },
    "fr": {
        "USD": Currency("dollar", "dollars", "cent", "cents"),
        "GBP": Currency("livre", "livres", "penny", "pence", feminine=True),
        "EUR": Currency("euro", "euros", "centime", "centimes"),
        "JPY": Currency("yen", "yens"),
        "CNY": Currency("yuan", "yuans"),
        "KRW": Currency("won", "wons"),
        "INR": Currency("roupie", "roupies", feminine=True),
        "RUB": Currency("rouble", "roubles"),
        "FRF": Currency("franc", "francs", "centime", "centimes"),
        "BTC": Currency("bitcoin", "bitcoins"),
    },
    "es": {
        "USD": Currency("dólar", "dólares", "centavo", "centavos"),
        "GBP": Currency("libra", "libras", "penique", "peniques", feminine=True),
        "EUR": Currency("euro", "euros", "céntimo", "céntimos"),
        "JPY": Currency("yen", "yenes"),
        "CNY": Currency("yuan", "yuanes"),
        "KRW": Currency("won", "wones"),
        "INR": Currency("rupia", "rupias", feminine=True),
        "RUB": Currency("rublo", "rublos"),
        "FRF": Currency("franco", "francos"),
        "BTC": Currency("bitcoin", "bitcoins"),
    },
}


@lru_cache(maxsize=512)
def currency(written: str, lang: str) -> Currency:
    """How `written` (a symbol such as "$" or "₩", or an ISO code such as "CHF") is said."""
    code = SYMBOLS.get(written, written)
    if written in SYMBOLS and code in _SPOKEN.get(lang, {}):
        return _SPOKEN[lang][code]
    try:
        one = get_currency_name(code, count=1, locale=lang)
        many = get_currency_name(code, count=2, locale=lang)
    except (UnknownLocaleError, ValueError, LookupError):
        one = many = code
    # Spanish and French currency names that end in "a" ("libra esterlina", "roupie") are
    # feminine; the names babel gives are in the singular's first word.
    first = one.split()[0]
    feminine = lang in ("es", "fr") and first.endswith(("a", "ie"))
    return Currency(one, many, feminine=feminine)
