"""Can this voice read this book? Compare the scripts of the book's letters with the voice's.

A voice for English fed Arabic or Chinese text makes garbage audio (or silence) for hours. The
check runs before synthesis and fails with a message that says why:

    check_speakable(book, "en-US")  # raises BadEpub: "This book is mostly in Arabic script …"

Scripts come from Unicode character names ("ARABIC LETTER ALEF" → Arabic), so no dependency is
needed. Only letters count: digits, punctuation and symbols are read the same way everywhere.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache

from audiopub import settings
from audiopub.book.models import Book
from audiopub.errors import BadEpub

__all__ = [
    "check_speakable",
    "language_scripts",
    "primary_subtag",
    "script_of",
    "unsupported_script_share",
]

# The first word of a letter's Unicode name, when it isn't the script's name itself.
_NAME_WORDS = {
    "CJK": "Han",
    "IDEOGRAPHIC": "Han",
    "KANGXI": "Han",
    "HIRAGANA": "Kana",
    "KATAKANA": "Kana",
    "KATAKANA-HIRAGANA": "Kana",
    "HANGUL": "Hangul",
    "NKO": "N'Ko",
}
_DISPLAY = {
    "Han": "Chinese characters (Han script)",
    "Kana": "Japanese kana",
    "Hangul": "Korean Hangul",
}
# Letters that belong to no script in particular.
_NO_SCRIPT = frozenset({"MODIFIER", "COMBINING", "LETTERLIKE", "SUPERSCRIPT", "SUBSCRIPT"})

# Languages not written in the Latin alphabet (ISO 639 codes), as "scripts: languages".
# Every other language tag is taken to be a Latin-alphabet language.
_NON_LATIN_TABLE = """
    Arabic: ar fa ur ps sd ug ckb
    Hebrew: he iw yi
    Han: zh yue cmn wuu
    Han Kana: ja
    Hangul Han: ko
    Cyrillic: ru uk be bg mk kk ky mn tg tt ba cv ce os sah
    Cyrillic Latin: sr
    Greek: el
    Armenian: hy
    Georgian: ka
    Devanagari: hi mr ne sa mai bho
    Bengali: bn as
    Gurmukhi: pa
    Gujarati: gu
    Oriya: or
    Tamil: ta
    Telugu: te
    Kannada: kn
    Malayalam: ml
    Sinhala: si
    Thai: th
    Lao: lo
    Khmer: km
    Myanmar: my
    Tibetan: bo
    Ethiopic: am ti
    Thaana: dv
    Cherokee: chr
"""
# ISO 15924 script subtags ("sr-Latn", "zh-Hant") override the language's usual scripts.
_SUBTAG_TABLE = """
    Latin: latn
    Cyrillic: cyrl
    Arabic: arab
    Hebrew: hebr
    Greek: grek
    Han: hans hant hani
    Han Kana: jpan
    Hangul Han: kore
    Devanagari: deva
"""


def _table(text: str) -> dict[str, frozenset[str]]:
    table = {}
    for line in filter(None, map(str.strip, text.splitlines())):
        scripts, _, codes = line.partition(":")
        table.update(dict.fromkeys(codes.split(), frozenset(scripts.split())))
    return table


_NON_LATIN = _table(_NON_LATIN_TABLE)
_SCRIPT_SUBTAGS = _table(_SUBTAG_TABLE)
_LATIN = frozenset({"Latin"})
_TAG = re.compile(r"^[a-z]{2,3}(?:[-_][a-z0-9]{1,8})*$", re.IGNORECASE)


@lru_cache(maxsize=8192)
def script_of(char: str) -> str | None:
    """The script of one letter ("Latin", "Arabic", "Han", "Kana"…); None for a non-letter."""
    if not unicodedata.category(char).startswith("L"):
        return None
    folded = unicodedata.normalize("NFKC", char)  # full-width "Ａ", math "𝐀" → "A"
    if folded and folded[0] != char:
        return script_of(folded[0])
    words = unicodedata.name(char, "").split()
    if not words or words[0] in _NO_SCRIPT:
        return None
    first = words[0]
    if first in ("OLD", "NEW") and len(words) > 1:  # "OLD ITALIC", "NEW TAI LUE"
        first = f"{first} {words[1]}"
    return _NAME_WORDS.get(first, first.title())


def primary_subtag(language: str) -> str:
    """A language tag's primary subtag: "en-GB", "EN_gb" → "en"."""
    return language.strip().replace("_", "-").split("-", 1)[0].lower()


def language_scripts(language: str | None) -> frozenset[str] | None:
    """The scripts a language tag ("en-US", "ar", "sr_Latn", "ja") is written in; None when the
    tag says nothing usable ("multi", "", None), so no judgement can be made."""
    if not language or not _TAG.match(language.strip()):
        return None
    parts = re.split(r"[-_]", language.strip().lower())
    for part in parts[1:]:
        if part in _SCRIPT_SUBTAGS:
            return _SCRIPT_SUBTAGS[part]
    return _NON_LATIN.get(parts[0], _LATIN)


def unsupported_script_share(text: str, voice_language: str | None) -> tuple[float, str | None]:
    """(share of the letters the voice's language doesn't write, the commonest such script).

    (0.0, None) when every letter is fine, there are no letters, or the language is unknown.
    """
    wanted = language_scripts(voice_language)
    if wanted is None:
        return 0.0, None
    letters = 0
    foreign: Counter[str] = Counter()
    for char, count in Counter(text).items():
        script = script_of(char)
        if script is None:
            continue
        letters += count
        if script not in wanted:
            foreign[script] += count
    if not foreign:
        return 0.0, None
    script, _ = foreign.most_common(1)[0]
    return sum(foreign.values()) / letters, script


def check_speakable(book: Book, voice_language: str | None, voice: str | None = None) -> None:
    """Raise `BadEpub` if too much of the book is in a script the voice's language doesn't use
    (more than `settings.MAX_UNSPEAKABLE_SHARE` of its letters). `voice` names the voice in the
    message (default: the language tag). Unknown or "multi" languages pass."""
    text = "\n".join(paragraph for chapter in book.chapters for paragraph in chapter.paragraphs)
    share, script = unsupported_script_share(text, voice_language)
    if script is None or share <= settings.MAX_UNSPEAKABLE_SHARE:
        return
    how_much = "mostly" if share > 0.5 else "largely"
    raise BadEpub(
        f"This book is {how_much} in {_DISPLAY.get(script, script + ' script')}: "
        f"{share:.0%} of its letters. The voice {voice or voice_language} can't read "
        "it; choose a voice for the book's language."
    )
