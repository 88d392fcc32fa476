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
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from audiopub.book.cast.tags import incise_at

QuoteStyle = Literal["double", "single"]

__all__ = ["QuoteStyle", "Span", "find_quotes", "quote_style"]

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


def find_quotes(
    paragraph: str,
    style: QuoteStyle = "double",
    language: str | None = None,
    after_open: bool = False,
) -> list[Span]:
    """The quotations of one paragraph, in order.

    `after_open` says the paragraph before ended inside a quotation: if this one opens with a
    mark, its first quotation continues that speech.
    """
    if paragraph[:1] in _DASHES:
        return _dash_dialogue(paragraph, language)
    openers = _DOUBLE_OPEN if style == "double" else _SINGLE_OPEN
    spans: list[Span] = []
    i = 0
    n = len(paragraph)
    while i < n:
        char = paragraph[i]
        if char not in openers or not _may_open(paragraph, i, style):
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
            spans.append(Span(i, close + 1, text, continues=after_open and i == 0))
        i = close + 1
    return spans


def _may_open(text: str, i: int, style: QuoteStyle) -> bool:
    if i > 0 and text[i - 1] not in _OPENS_AFTER and not text[i - 1].isspace():
        # A mark glued to a word closes or is an apostrophe ("o'", "boys'").
        if text[i] in "\"'":
            return False
    if i + 1 >= len(text) or text[i + 1].isspace():
        return False
    return not (style == "single" and _is_elision(text, i))


def _is_elision(text: str, i: int) -> bool:
    if text[i] not in "'’":
        return False
    word = _WORD_AFTER.match(text, i + 1)
    if word is None:
        return False
    if word.group().lower() not in _ELISIONS:
        return False
    # "'n'" (rock 'n' roll) and "'tis" alike; but a real quotation can start with "Em" as a
    # name, so only lower-case elisions and the sentence-start "'Tis"/"'Twas" count.
    return word.group()[0].islower() or word.group().lower() in {"tis", "twas", "twere"}


def _find_close(text: str, start: int, closer: str, style: QuoteStyle) -> int | None:
    closers = {closer, '"'} if style == "double" else {closer, "'"}
    if style == "double":
        for j in range(start, len(text)):
            if text[j] in closers and (j == 0 or not text[j - 1].isspace() or j + 1 == len(text)):
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


def _dash_dialogue(paragraph: str, language: str | None) -> list[Span]:
    """A paragraph opening with a dash: speech, broken by incises (Spanish closes them with a
    second dash, French with a comma or the sentence's end)."""
    spans: list[Span] = []
    pos = 1
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
