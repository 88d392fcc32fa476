"""The words of a book worth hearing before the long run: names and unusual words.

A voice that says "Bagheera" wrongly says it wrongly a hundred times. `likely_names` lists the
words a reader would want to check first, with how often each occurs and a sentence to try.

How a word becomes a candidate (word forms are compared case-insensitively; "Mowgli's" counts
as "Mowgli"):

- **Names**: it is written capitalised in the middle of a sentence, mostly so (lower-case
  mid-sentence uses are fewer than a third of the capitalised ones: "Street" in a title is
  not a name), and it is not in the language's common vocabulary. Mid-sentence means only
  spaces, commas, semicolons, closing brackets or an abbreviation's full stop ("Mr. Holmes")
  stand between it and the word before: after an opening quote, colon or dash capitals are
  ordinary.
- **Unusual words**: written in lower case at least `_RARE_MIN_COUNT` times and absent even
  from the language's rare vocabulary (coinages, dialect: Kipling's "'satiable"). Kept
  conservative: only with a word list, only words of `_RARE_MIN_LENGTH` letters or more.

The common vocabulary comes from `wordfreq`: a word is common when its Zipf frequency (log10
of occurrences per billion words) is at least `COMMON_ZIPF`. Names that are also frequent
words in the corpus ("Holmes", "Watson", "Baker") are therefore left out: speech engines know
them. For a language wordfreq has no list for, or no language at all, only the book itself
decides: a name is capitalised mid-sentence and never lower-case mid-sentence. That keeps
capitalised ordinary words ("English", "Monday", "God") in the list.

Never candidates: single letters (so the pronoun "I"), "I'm" and its kin, Roman numerals,
words in capitals ("CHAPTER", headings), words with digits, and the chapter heading paragraphs
themselves (title case would make every word look like a name).

Languages that capitalise every noun (German) get more common nouns than names: the
vocabulary check removes the frequent ones, the rarest ones stay.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from audiopub.book.models import Book
from audiopub.book.scripts import primary_subtag
from audiopub.book.text import ABBREVIATIONS, split_sentences

__all__ = ["COMMON_ZIPF", "NameCandidate", "first_use", "likely_names"]

COMMON_ZIPF = 3.0  # about one in a million words: "alas" is common, "Mowgli" (2.5) is not
_RARE_ZIPF = 1.5  # below this a lower-case word is unusual enough to list
_RARE_MIN_COUNT = 3
_RARE_MIN_LENGTH = 5
_EXAMPLE_CHARS = 200

# A word: letters, with inner apostrophes and hyphens ("Stickly-Prickly", "don't"). Digits
# and "_" are matched too, so "R2D2" is one token and can be rejected whole.
_WORD = re.compile(r"\w+(?:['-]\w+)*")
# What may stand between two words of one sentence with the second still "mid-sentence". An
# opening quote, colon or dash starts a quotation or a list, where capitals are ordinary.
_MID_GAP = re.compile(r"[\s,;)]*")
_ROMAN = re.compile(r"m{0,4}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})")


@dataclass(frozen=True)
class NameCandidate:
    """A word to check the pronunciation of."""

    word: str  # as the book most often writes it, e.g. "Bagheera"
    count: int  # occurrences in the book's text, in any case
    example: str  # the first sentence that has it, trimmed to about 200 characters

    def excerpt(self, width: int) -> str:
        """The example cut to at most `width` characters around the word (for a table)."""
        at = self.example.casefold().find(self.word.casefold())
        return _trim(self.example, max(at, 0), width)


@dataclass
class _Tally:
    forms: Counter[str] = field(default_factory=Counter)
    count: int = 0
    mid_capital: int = 0  # capitalised, not at the start of a sentence or quotation
    mid_lower: int = 0
    example: str = ""
    first_seen: int = 0


def likely_names(book: Book, language: str | None = None, limit: int = 50) -> list[NameCandidate]:
    """The book's likely names and unusual words, most frequent first (at most `limit`).

    `language` (e.g. "en", "fr-CA") chooses the common vocabulary; the default is the book's
    own. See the module docstring for the rules.
    """
    vocabulary = _vocabulary(_base_language(language or book.language))
    tallies = _tally(book)
    chosen = [t for key, t in tallies.items() if _is_candidate(key, t, vocabulary)]
    chosen.sort(key=lambda t: (-t.count, t.first_seen))
    return [
        NameCandidate(t.forms.most_common(1)[0][0], t.count, t.example)
        for t in chosen[: max(limit, 0)]
    ]


def first_use(book: Book, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    """Where the book first says what `pattern` matches: the words matched and the sentence
    they are in (trimmed like a candidate's example), or None; headings are no example. Only
    a paragraph that has a match is cut into sentences, so a long book is searched quickly."""
    for chapter in book.chapters:
        for paragraph in chapter.paragraphs:
            if paragraph.strip() == chapter.title.strip() or pattern.search(paragraph) is None:
                continue
            for sentence in split_sentences(paragraph):
                for match in pattern.finditer(sentence):
                    if match.group().strip():
                        return match.group(), _trim(sentence, match.start())
    return None


def _tally(book: Book) -> dict[str, _Tally]:
    tallies: dict[str, _Tally] = {}
    for chapter in book.chapters:
        for paragraph in chapter.paragraphs:
            if paragraph.strip() == chapter.title.strip():
                continue  # the heading, in title case
            for sentence in split_sentences(paragraph):
                _tally_sentence(sentence, tallies)
    return tallies


def _tally_sentence(sentence: str, tallies: dict[str, _Tally]) -> None:
    previous_end, previous_word = 0, ""
    for match in _WORD.finditer(sentence):
        word = _strip_possessive(match.group())
        gap = sentence[previous_end : match.start()]
        mid = bool(previous_word) and (
            _MID_GAP.fullmatch(gap) is not None
            # "Mr. Holmes": the sentence goes on after an abbreviation's full stop
            or (gap.strip() == "." and previous_word.lower() in ABBREVIATIONS)
        )
        previous_end, previous_word = match.end(), word
        if not _is_word(word):
            continue
        key = word.casefold()
        tally = tallies.get(key)
        if tally is None:
            tally = tallies[key] = _Tally(
                example=_trim(sentence, match.start()), first_seen=len(tallies)
            )
        tally.count += 1
        tally.forms[word] += 1
        if mid:
            if word[0].isupper():
                tally.mid_capital += 1
            elif word[0].islower():
                tally.mid_lower += 1


def _strip_possessive(word: str) -> str:
    return word[:-2] if word.endswith(("'s", "'S")) else word


def _is_word(word: str) -> bool:
    """Could this be a name or an unusual word at all?"""
    if len(word) < 2 or (not word.isalpha() and not _hyphenated_letters(word)):
        return False  # single letters, "I", digits
    if word.isupper():
        return False  # headings and shouting; an acronym is not a name to pronounce
    return not word.startswith("I'")  # "I'm", "I'll"


def _hyphenated_letters(word: str) -> bool:
    return all(part.isalpha() for part in re.split(r"['-]", word))


def _is_candidate(key: str, tally: _Tally, vocabulary: dict[str, float] | None) -> bool:
    if _ROMAN.fullmatch(key):
        return False  # "xiv" as a lower-case chapter number
    if vocabulary is None:
        return tally.mid_capital > 0 and tally.mid_lower == 0
    zipf = _zipf(key, vocabulary)
    if tally.mid_capital > 0 and tally.mid_lower * 3 < tally.mid_capital:
        return zipf < COMMON_ZIPF
    return tally.mid_lower >= _RARE_MIN_COUNT and len(key) >= _RARE_MIN_LENGTH and zipf < _RARE_ZIPF


def _zipf(key: str, vocabulary: dict[str, float]) -> float:
    """The word's Zipf frequency; a hyphenated word is as common as its rarest part."""
    parts = [p for p in key.split("-") if p] or [key]
    frequency = min(vocabulary.get(p, 0.0) for p in parts)
    return math.log10(frequency) + 9 if frequency > 0 else 0.0


def _trim(sentence: str, at: int, width: int = _EXAMPLE_CHARS) -> str:
    """The sentence, or at most `width` characters of it around position `at`: cut at spaces
    where it can be, with "…" where the sentence goes on."""
    if len(sentence) <= width:
        return sentence
    width = max(width, 8)
    start = max(0, min(at - width // 3, len(sentence) - width))
    end = start + width
    if start > 0:  # one character of room for "…"
        space = sentence.find(" ", start, at)
        start = space + 1 if space >= 0 else start + 1
    if end < len(sentence):
        space = sentence.rfind(" ", max(at, start), end - 1)
        end = space if space >= 0 else end - 1
    return ("…" if start > 0 else "") + sentence[start:end] + ("…" if end < len(sentence) else "")


def _base_language(language: str | None) -> str | None:
    """ "en-GB" → "en"; wordfreq knows Norwegian Bokmål as "nb"."""
    if not language:
        return None
    base = primary_subtag(language)
    return {"no": "nb"}.get(base, base)


@lru_cache(maxsize=4)
def _vocabulary(language: str | None) -> dict[str, float] | None:
    """Frequencies of the language's words (per word of text), or None where wordfreq has
    no list.

    Looked up once as a dict: `wordfreq.zipf_frequency` tokenises its argument on every call,
    and for a language it lacks it silently answers for the nearest one it has.
    """
    if language is None:
        return None
    import wordfreq  # 0.2 s to import: only when a book is reviewed

    if language not in wordfreq.available_languages("large"):
        return None
    return wordfreq.get_frequency_dict(language, wordlist="large")
