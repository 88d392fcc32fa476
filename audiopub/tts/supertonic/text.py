"""Supertonic's text front end: text → model-ready character ids.

Supertonic reads characters, not phonemes: after NFKD normalisation each code point is looked
up in the model's unicode indexer. The steps below follow the official front end (the
`supertonic` package's `UnicodeProcessor`) so both produce the same ids for the same text, with
one difference: the official one passes characters the indexer lacks to the model as id -1.
Here they are mapped to a close character the model knows (quotes, dashes, ligatures…) or
dropped, so the model never sees an id it was not trained on.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

log = logging.getLogger(__name__)

# Supertonic-3's languages; Supertonic-2 knows a subset (en, ko, es, pt, fr).
SUPPORTED_LANGUAGES: Final = (
    "en",
    "ko",
    "ja",
    "ar",
    "bg",
    "cs",
    "da",
    "de",
    "el",
    "es",
    "et",
    "fi",
    "fr",
    "hi",
    "hr",
    "hu",
    "id",
    "it",
    "lt",
    "lv",
    "nl",
    "pl",
    "pt",
    "ro",
    "ru",
    "sk",
    "sl",
    "sv",
    "tr",
    "uk",
    "vi",
)
# Supertonic-3's tag for "language unknown or not supported".
UNKNOWN_LANGUAGE: Final = "na"
# Used when neither the book nor the settings name a language.
DEFAULT_LANGUAGE: Final = "en"

# Same emoji ranges the official front end strips.
_EMOJI = re.compile(
    "[\U0001f600-\U0001f64f\U0001f300-\U0001f5ff\U0001f680-\U0001f6ff\U0001f700-\U0001f77f"
    "\U0001f780-\U0001f7ff\U0001f800-\U0001f8ff\U0001f900-\U0001f9ff\U0001fa00-\U0001fa6f"
    "\U0001fa70-\U0001faff\u2600-\u26ff\u2700-\u27bf\U0001f1e6-\U0001f1ff]+"
)
# The official replacements, in the official order (the model was trained on text after them).
_OFFICIAL_SYMBOLS: Final = {
    "\u2013": "-",
    "\u2011": "-",
    "\u2014": "-",
    "\u00af": " ",
    "_": " ",
    "\u201c": '"',
    "\u201d": '"',
    "\u2018": "'",
    "\u2019": "'",
    "\u00b4": "'",
    "`": "'",
    "[": " ",
    "]": " ",
    "|": " ",
    "/": " ",
    "#": " ",
    "\u2192": " ",
    "\u2190": " ",
}
_OFFICIAL_REMOVED = re.compile(r"[♥☆♡©\\]")
_OFFICIAL_EXPRESSIONS: Final = {"@": " at ", "e.g.,": "for example, ", "i.e.,": "that is, "}
_SPACE_BEFORE_PUNCT = re.compile(r" ([,.!?;:'])")
_REPEATED_QUOTES = re.compile(r"([\"'`])\1+")
_WHITESPACE = re.compile(r"\s+")
_ENDS_WITH_PUNCT = re.compile(r"[.!?;:,'\"')\]}…。」』】〉》›»]$")

# Fallbacks for characters a model's indexer may lack (only used when it does lack them).
# NFKD already turns NBSP into a space, "…" into "...", ligatures like "ﬁ" into "fi".
_FALLBACKS: Final = {
    # quotation marks and primes: « » „ ‟ ″ ‹ › ‚ ‛ ′
    "\u00ab": '"',
    "\u00bb": '"',
    "\u201e": '"',
    "\u201f": '"',
    "\u2033": '"',
    "\u2039": "'",
    "\u203a": "'",
    "\u201a": "'",
    "\u201b": "'",
    "\u2032": "'",
    # hyphen, figure dash, horizontal bar, minus sign, hyphen bullet; bullet, middle dot
    "\u2010": "-",
    "\u2012": "-",
    "\u2015": "-",
    "\u2212": "-",
    "\u2043": "-",
    "\u2022": ",",
    "\u00b7": ",",
    # letters NFKD leaves whole
    "ß": "ss",
    "æ": "ae",
    "Æ": "Ae",
    "œ": "oe",
    "Œ": "Oe",
    "ø": "o",
    "Ø": "O",
    "ł": "l",
    "Ł": "L",
    "đ": "d",
    "Đ": "D",
    "ð": "d",
    "Ð": "D",
    "þ": "th",
    "Þ": "Th",
    "\u0131": "i",  # dotless i
    "\u2044": " ",  # fraction slash, from NFKD of "½": "1 2" beats "12"
}

# Hangul conjoining jamo (NFKD splits Korean syllables into them). Both multilingual releases
# read Korean; the English-only first release has no tokens for them.
_MULTILINGUAL_MARKER: Final = "\u1100"


def language_code(tag: str | None) -> str:
    """Map a BCP 47 tag from EPUB metadata ("en-US", "pt_BR", "FR") to a model language tag."""
    if not tag or not tag.strip():
        return DEFAULT_LANGUAGE
    primary = re.split(r"[-_]", tag.strip().lower(), maxsplit=1)[0]
    if primary in SUPPORTED_LANGUAGES or primary == UNKNOWN_LANGUAGE:
        return primary
    log.info("Supertonic does not know the language %r; using its language-neutral tag", tag)
    return UNKNOWN_LANGUAGE


@dataclass(frozen=True, eq=False)
class TextFrontEnd:
    """Normalises text for one model's indexer and turns it into ids and masks."""

    table: np.ndarray  # int64, code point → token id, -1 where the model has no token
    multilingual: bool  # whether the model expects <lang>…</lang> around each text
    known: frozenset[str] = field(init=False)  # the characters the table covers

    def __post_init__(self) -> None:
        # A set lookup per character; indexing the NumPy table each time is ten times slower.
        known = frozenset(chr(code) for code in np.flatnonzero(self.table >= 0))
        object.__setattr__(self, "known", known)

    @classmethod
    def from_indexer(cls, indexer: Sequence[int], multilingual: bool | None = None) -> TextFrontEnd:
        table = np.asarray(indexer, dtype=np.int64)
        if table.ndim != 1 or not (table >= 0).any():
            raise ValueError("the unicode indexer must be a non-empty list of ids")
        if multilingual is None:
            marker = ord(_MULTILINGUAL_MARKER)
            multilingual = bool(marker < len(table) and table[marker] >= 0)
        front = cls(table, multilingual)
        needed = " .<>/abcdefghijklmnopqrstuvwxyz" if multilingual else " ."
        missing = [c for c in needed if not front.covers(c)]
        if missing:
            raise ValueError(f"the unicode indexer lacks characters the front end needs: {missing}")
        return front

    def covers(self, char: str) -> bool:
        return char in self.known

    def normalise(self, text: str) -> str:
        """The text the model will read, or "" when nothing in it can be spoken."""
        text = unicodedata.normalize("NFKD", text)
        text = _EMOJI.sub("", text)
        for old, new in _OFFICIAL_SYMBOLS.items():
            text = text.replace(old, new)
        text = _OFFICIAL_REMOVED.sub("", text)
        text = self._only_known_characters(text)
        for old, new in _OFFICIAL_EXPRESSIONS.items():
            text = text.replace(old, new)
        text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
        text = _REPEATED_QUOTES.sub(r"\1", text)
        text = _WHITESPACE.sub(" ", text).strip()
        if not any(char.isalnum() for char in text):
            return ""
        if not _ENDS_WITH_PUNCT.search(text):
            text += "."
        return text

    def _only_known_characters(self, text: str) -> str:
        if all(self.covers(char) or char.isspace() for char in text):
            return text
        kept: list[str] = []
        dropped: set[str] = set()
        for char in text:
            # Whitespace stays: the official order collapses it to " " only later.
            if self.covers(char) or char.isspace():
                kept.append(char)
            elif char in _FALLBACKS and all(self.covers(c) for c in _FALLBACKS[char]):
                kept.append(_FALLBACKS[char])
            else:
                dropped.add(char)
        if dropped:
            log.debug(
                "Dropped characters the Supertonic model has no tokens for: %s",
                " ".join(f"U+{ord(c):04X}" for c in sorted(dropped)),
            )
        return "".join(kept)

    def wrap(self, text: str, language: str | None) -> str:
        """Add the language tags multilingual models expect."""
        if not self.multilingual or language is None:
            return text
        return f"<{language}>{text}</{language}>"

    def encode(self, texts: Sequence[str], language: str | None) -> tuple[np.ndarray, np.ndarray]:
        """Normalised texts → `text_ids` int64 [B,T] and `text_mask` float32 [B,1,T]."""
        wrapped = [self.wrap(text, language) for text in texts]
        lengths = np.array([len(text) for text in wrapped], dtype=np.int64)
        ids = np.zeros((len(wrapped), int(lengths.max())), dtype=np.int64)
        for row, text in enumerate(wrapped):
            codes = np.fromiter(map(ord, text), dtype=np.int64, count=len(text))
            ids[row, : len(text)] = self.table[codes]
        if (ids < 0).any():  # normalise() guarantees this cannot happen; fail loudly if it does
            raise ValueError("text reached the model with characters its indexer lacks")
        mask = (np.arange(ids.shape[1]) < lengths[:, None]).astype(np.float32)
        return ids, mask[:, None, :]
