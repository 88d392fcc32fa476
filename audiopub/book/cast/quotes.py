"""Direct speech in a paragraph: where each quotation starts and ends.

Books reach us normalised (`book.text.normalise_text`): curly quotes, guillemets and „German“
marks have all become the straight `"` and `'`, and a dash that opens a paragraph is gone. The
finder still knows the typographic marks, so raw text works too.

- **Marks**: a book quotes either with double marks (most) or with single ones (many British
  editions); `quote_style` tells which from the paragraphs that open with a mark. The other
  kind inside a quotation is a nested quotation and stays part of it.
- **Apostrophes** look like single closing marks. A single mark only opens a quotation after a
  space, a bracket or the start, and not before a known elision ('tis, 'em, rock 'n' roll);
  it only closes one when no letter follows ("don't", "o'clock" never close), and a closing
  mark after punctuation is preferred to one after a letter ("the boys' books").
- **Several paragraphs**: English leaves the closing mark off a paragraph when the same person
  goes on speaking in the next, which opens with a mark again. Such a quotation is `open`,
  and the next paragraph's first quotation `continues` it.
- **Dashes**: French and Spanish open a line of dialogue with a dash at the start of the
  paragraph; a tag inside it ("—Sí —dijo él—. Vamos.", "— Oui, dit-il, allons.") is narration.
  The normaliser removes that dash ("Sí, dijo él. Vamos."), so in those languages a
  paragraph whose first sentence breaks off for a tag is taken as such a line; one with no
  tag ("— Oui.") is lost as speech. Their quotations in guillemets are cut around a tag
  inside them the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from audiopub.book.cast.tags import find_tag, incise_at, is_english

QuoteStyle = Literal["double", "single"]

__all__ = ["QuoteStyle", "Span", "book_elisions", "find_quotes", "quote_style"]

_DOUBLE_OPEN = {'"': '"', "“": "”", "„": "“", "«": "»", "»": "«", "”": "”"}
_SINGLE_OPEN = {"'": "'", "‘": "’", "‚": "‘", "‹": "›", "›": "‹"}
_DASHES = "—–―"
# Elisions that begin with an apostrophe: a single mark before them opens no quotation.
_ELISIONS = frozenset(
    {
        "tis", "twas", "twere", "twill", "twould", "em", "n", "cause", "til", "till", "bout",
        "im", "er", "ere", "ave", "e", "ee", "is", "ow", "un", "uns", "nuff", "round", "s",
        "t", "d", "ll", "re", "ve", "m", "o", "gainst", "mongst", "neath", "twixt",
    }
)  # fmt: skip
_WORD_AFTER = re.compile(r"[A-Za-zÀ-ÿ]+")
_OPENS_AFTER = " \t([{—–-/"
_CLOSE_PUNCT = ".,;:!?…—–-"
_SPACED = "«»‹›"
_QUOTE_MARKS = re.compile("[\"“”„«»‹›]|(?:^|\\s)['‘’]")
_SENTENCE_END = re.compile(r"[.!?…]\s")
# A few words quoted inside a sentence of narration after an article, a preposition or a word
# that names: 'across the narrow "bridges" which', 'was called "the house," to tell it from
# the cottages', 'a duet from "Zampa" upon the piano'. A name or a term the narrator reads,
# not speech (English only).
_MENTION_LEAD = re.compile(
    r"(?:^|[^\w'’])(?:the|a|an|from|of|for|as|into|in|on|at|by|about|word|words|term|name"
    r"|called|named|entitled|marked|his|her|their|its|our|your|my|this|that|these|those)"
    r"(?:\s+[a-z][\w'’-]*){0,2}\s+$"
)
_MENTION_WORDS = 4
# Languages whose quotations hold their own tags: « Entrez, dit-il, et fermez la porte. »
_INCISE_LANGUAGES = frozenset({"fr", "es", "it", "pt", "ca"})


@dataclass(frozen=True)
class Span:
    """One quotation in a paragraph: `start`/`end` include its marks, `text` is its words."""

    start: int
    end: int
    text: str
    open: bool = False  # runs to the paragraph's end with no closing mark
    continues: bool = False  # goes on from an `open` quotation in the paragraph before


def quote_style(paragraphs: Iterable[str]) -> QuoteStyle:
    """Double or single marks for the book's outer quotations: the kind more paragraphs open
    with (a paragraph opening with an apostrophe is rare next to dialogue)."""
    double = single = 0
    for paragraph in paragraphs:
        head = paragraph[:1]
        if head in _DOUBLE_OPEN:
            double += 1
        elif head in _SINGLE_OPEN and not _is_elision(paragraph, 0):
            single += 1
    return "single" if single > double else "double"


_LEADING_APOSTROPHE = re.compile(r"(?:(?<=\s)|^)['’]([^\W\d_]+)")
_BARE_WORD = re.compile(r"(?<![\w'’])[^\W\d_]+")
_MID_SENTENCE = re.compile(r"[a-z,;]\s['’]([^\W\d_]+)")


def book_elisions(paragraphs: Iterable[str]) -> frozenset[str]:
    """Words a book writes with a leading apostrophe and never without, at least once in the
    middle of a sentence: its dialect elisions (Kipling's "'satiable", "'Vantage"), so the
    apostrophe opens no quotation."""
    marked: Counter[str] = Counter()
    bare: Counter[str] = Counter()
    mid: set[str] = set()
    for paragraph in paragraphs:
        if "'" not in paragraph and "’" not in paragraph:
            bare.update(w.lower() for w in _BARE_WORD.findall(paragraph))
            continue
        marked.update(w.lower() for w in _LEADING_APOSTROPHE.findall(paragraph))
        mid.update(w.lower() for w in _MID_SENTENCE.findall(paragraph))
        bare.update(w.lower() for w in _BARE_WORD.findall(paragraph))
    return frozenset(w for w, n in marked.items() if n >= 2 and not bare[w] and w in mid)


def find_quotes(
    paragraph: str,
    style: QuoteStyle = "double",
    language: str | None = None,
    after_open: bool = False,
    elisions: frozenset[str] = frozenset(),
) -> list[Span]:
    """The quotations of one paragraph, in order.

    `after_open` says the paragraph before ended inside a quotation: if this one opens with a
    mark, its first quotation continues that speech. `elisions` are the book's own words
    that start with an apostrophe (`book_elisions`).
    """
    if paragraph[:1] in _DASHES:
        return _dash_dialogue(paragraph, language)
    openers = _DOUBLE_OPEN if style == "double" else _SINGLE_OPEN
    spans: list[Span] = []
    i = 0
    n = len(paragraph)
    while i < n:
        char = paragraph[i]
        if char not in openers or not _may_open(paragraph, i, style, elisions):
            i += 1
            continue
        close = _find_close(paragraph, i + 1, openers[char], style)
        if close is None:
            if style == "single" and not (i == 0 or paragraph[i - 1 : i] == " "):
                i += 1
                continue
            text = paragraph[i + 1 :].strip()
            if text:
                spans.append(Span(i, n, text, open=True, continues=after_open and i == 0))
            break
        text = paragraph[i + 1 : close].strip()
        if text:
            span = Span(i, close + 1, text, continues=after_open and i == 0)
            spans.extend(_split_incises(paragraph, span, language))
        i = close + 1
    if not spans and _incise_language(language) and not _QUOTE_MARKS.search(paragraph):
        return _undashed_dialogue(paragraph, language)
    return [span for span in spans if not _is_mention(paragraph, span, language)]


def _is_mention(paragraph: str, span: Span, language: str | None) -> bool:
    """Whether a quotation is a word or a few the narration mentions (`_MENTION_LEAD`): no
    tag follows it, nor does a verb of speaking lead to it ('by saying "Tom, I wonder"')."""
    if not is_english(language) or span.open or span.continues:
        return False
    if len(span.text.split()) > _MENTION_WORDS or re.search(r"[.!?]", span.text):
        return False
    lead = paragraph[max(0, span.start - 60) : span.start]
    if _MENTION_LEAD.search(lead) is None or lead.split()[-1].endswith("ing"):
        return False
    return find_tag(paragraph[span.end :], language, "after") is None


def _incise_language(language: str | None) -> bool:
    return (language or "").split("-")[0].lower() in _INCISE_LANGUAGES


def _undashed_dialogue(paragraph: str, language: str | None) -> list[Span]:
    """Dash dialogue whose dash the normaliser took away ("—Pasa —dijo ella—. Hace frío."
    reaches us as "Pasa, dijo ella. Hace frío."): a paragraph whose first sentence breaks
    off for a tag ("…, dijo ella", "…, dit-il") is speech around that tag."""
    incise = incise_at(paragraph, 0, language)
    if incise is None or _SENTENCE_END.search(paragraph, 0, incise[0]):
        return []
    return _dash_dialogue(paragraph, language, start=0)


def _split_incises(paragraph: str, span: Span, language: str | None) -> list[Span]:
    """A French or Spanish quotation cut around the tag inside it: « Entrez, dit-il, et
    fermez. » is "Entrez" and "et fermez.", with "dit-il" left to the narrator."""
    if not _incise_language(language):
        return [span]
    inner_start = span.start + 1
    inner_end = span.end - 1
    incise = incise_at(paragraph[:inner_end], inner_start, language)
    if incise is None:
        return [span]
    cut, resume = incise
    first = paragraph[inner_start:cut].strip(" ,")
    rest = paragraph[resume:inner_end].strip()
    pieces = []
    if first:
        pieces.append(Span(span.start, cut, first, continues=span.continues))
    if rest:
        pieces.append(Span(resume, span.end, rest, open=span.open))
    return pieces or [span]


def _may_open(text: str, i: int, style: QuoteStyle, elisions: frozenset[str]) -> bool:
    if i > 0 and text[i - 1] not in _OPENS_AFTER and not text[i - 1].isspace():
        # A mark glued to a word closes or is an apostrophe ("o'", "boys'").
        if text[i] in "\"'":
            return False
    # French sets guillemets off with a space: « Entrez ». A mark opening the paragraph opens
    # even so: '" Heerd a noise," continued Mr. Giles' (a quotation inside it lost its mark).
    if i + 1 >= len(text) or (text[i + 1].isspace() and text[i] not in _SPACED and i > 0):
        return False
    return not (style == "single" and _is_elision(text, i, elisions))


def _is_elision(text: str, i: int, elisions: frozenset[str] = frozenset()) -> bool:
    if text[i] not in "'’":
        return False
    word = _WORD_AFTER.match(text, i + 1)
    if word is None:
        return False
    if word.group().lower() in elisions:
        return True
    if word.group().lower() not in _ELISIONS:
        return False
    # "'n'" (rock 'n' roll) and "'tis" alike; but a real quotation can start with "Em" as a
    # name, so only lower-case elisions and the sentence-start "'Tis"/"'Twas" count.
    return word.group()[0].islower() or word.group().lower() in {"tis", "twas", "twere"}


def _find_close(text: str, start: int, closer: str, style: QuoteStyle) -> int | None:
    closers = {closer, '"'} if style == "double" else {closer, "'"}
    if style == "double":
        for j in range(start, len(text)):
            # A mark with a space on both sides cannot open a quotation, so it closes this
            # one: where a dash before it was lost ('"Is the   where is he " she asked').
            if text[j] in closers and (
                not text[j - 1].isspace()
                or j + 1 == len(text)
                or text[j + 1].isspace()
                or text[j] in _SPACED
            ):
                return j
        return None
    # Single marks: a candidate close has no letter right after it. One after punctuation
    # ends speech for sure; one after a letter may be a plural possessive ("boys' books").
    letter_close: int | None = None
    for j in range(start, len(text)):
        if text[j] not in closers:
            continue
        after = text[j + 1 : j + 2]
        if after.isalpha():
            continue  # "don't", "o'clock"
        before = text[j - 1 : j]
        if before in _CLOSE_PUNCT:
            return j
        if before.isspace():
            continue  # an opening mark of a nested or next quotation
        if letter_close is None:
            letter_close = j
    return letter_close


def _dash_dialogue(paragraph: str, language: str | None, start: int = 1) -> list[Span]:
    """A paragraph opening with a dash: speech, broken by incises (Spanish closes them with a
    second dash, French with a comma or the sentence's end)."""
    spans: list[Span] = []
    pos = start
    n = len(paragraph)
    while pos < n:
        while pos < n and paragraph[pos] in " .,":
            pos += 1
        if pos >= n:
            break
        incise = _next_dash_incise(paragraph, pos)
        tag_at = incise_at(paragraph, pos, language)
        if incise is not None and (tag_at is None or incise[0] <= tag_at[0]):
            cut, resume = incise
        elif tag_at is not None:
            cut, resume = tag_at
        else:
            cut, resume = n, n
        text = paragraph[pos:cut].strip(" ,—–―")
        if text:
            spans.append(Span(pos if pos > 1 else 0, cut, text))
        pos = resume
    return spans


def _next_dash_incise(text: str, start: int) -> tuple[int, int] | None:
    """A Spanish incise " —dijo él—" (or to the paragraph's end): where speech stops and
    where it starts again."""
    for j in range(start, len(text)):
        if text[j] in _DASHES and text[j - 1].isspace():
            for k in range(j + 1, len(text)):
                if text[k] in _DASHES:
                    return j, k + 1
            return j, len(text)
    return None
