"""A book's own pronunciation hints, as EPUB 3's text-to-speech features give them.

    PLS lexicons    manifest items of type application/pls+xml: <lexeme>s whose <grapheme>s
                    are said as their <phoneme> (in the lexicon's alphabet) or <alias>
    ssml:ph         an attribute on an element of a page: its text is said as those phonemes,
                    in the alphabet of the nearest `ssml:alphabet`

Only IPA phonemes are kept (and aliases, which are respellings); other alphabets (x-sampa)
are left out with a note. The hints become the "book's own" scope of a job's lexicon
(`book.lexicons.lexicon`), below the user's entries for the job and the book, above their
global ones.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, Final

from lxml import etree

from audiopub.book.safe_xml import parse_xml

PLS_TYPE: Final = "application/pls+xml"
SSML_NS: Final = "http://www.w3.org/2001/10/synthesis"
PLS_NS: Final = "http://www.w3.org/2005/01/pronunciation-lexicon"
_PH: Final = f"{{{SSML_NS}}}ph"
_ALPHABET: Final = f"{{{SSML_NS}}}alphabet"
_KEPT_ALPHABETS: Final = frozenset({"ipa", "x-ipa"})


@dataclass(frozen=True)
class Pronunciation:
    written: str  # as the book writes it
    say: str  # IPA (NFD, as phonemisers write it) when `phonemes`, else a respelling (alias)
    phonemes: bool
    origin: str  # the file it came from, for messages

    def to_dict(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "say": self.say,
            "phonemes": self.phonemes,
            "origin": self.origin,
        }


def from_pls(data: bytes, origin: str, notes: list[str]) -> list[Pronunciation]:
    """The lexemes of a PLS file; an unreadable one is left out with a note."""
    try:
        root = parse_xml(data)
    except etree.XMLSyntaxError as exc:
        notes.append(f"{origin}: its pronunciation lexicon is not valid XML ({exc}); left out.")
        return []
    default = (root.get("alphabet") or "ipa").strip().lower()
    found: list[Pronunciation] = []
    skipped = 0
    for lexeme in root.iter(f"{{{PLS_NS}}}lexeme"):
        graphemes = [_text(g) for g in lexeme.iter(f"{{{PLS_NS}}}grapheme") if _text(g)]
        said = _said(lexeme, default)
        if said is None:
            skipped += 1
            continue
        found += [Pronunciation(grapheme, *said, origin) for grapheme in graphemes]
    if skipped:
        notes.append(
            f"{origin}: {skipped} pronunciation(s) in an alphabet other than IPA were left out."
        )
    return found


def _said(lexeme: etree._Element, default: str) -> tuple[str, bool] | None:
    for phoneme in lexeme.iter(f"{{{PLS_NS}}}phoneme"):
        alphabet = (phoneme.get("alphabet") or default).strip().lower()
        if alphabet in _KEPT_ALPHABETS and _text(phoneme):
            return unicodedata.normalize("NFD", _text(phoneme)), True
    for alias in lexeme.iter(f"{{{PLS_NS}}}alias"):
        if _text(alias):
            return _text(alias), False
    return None


def from_markup(root: etree._Element, origin: str, notes: list[str]) -> list[Pronunciation]:
    """The `ssml:ph` hints of one page: each element's text, said as its phonemes."""
    found: list[Pronunciation] = []
    skipped = 0
    for element in root.iter():
        ph = element.get(_PH) if isinstance(element.tag, str) else None
        if not ph or not ph.strip():
            continue
        written = " ".join("".join(element.itertext()).split())
        if not written:
            continue
        if _alphabet_of(element) not in _KEPT_ALPHABETS:
            skipped += 1
            continue
        found.append(
            Pronunciation(
                written, unicodedata.normalize("NFD", ph.strip()), True, f"{origin} (ssml:ph)"
            )
        )
    if skipped:
        notes.append(
            f"{origin}: {skipped} ssml:ph hint(s) in an alphabet other than IPA were left out."
        )
    return found


def _alphabet_of(element: etree._Element) -> str:
    """The nearest `ssml:alphabet` on the element or around it; IPA where none is given."""
    node: etree._Element | None = element
    while node is not None:
        alphabet = node.get(_ALPHABET)
        if alphabet:
            return alphabet.strip().lower()
        node = node.getparent()
    return "ipa"


def _text(element: etree._Element) -> str:
    return " ".join("".join(element.itertext()).split())
