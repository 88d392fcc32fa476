"""Judging a chunk: did the listener hear the words the chunk was meant to say?

Both sides are normalised the same way — the spoken-form stage's words for numbers and
abbreviations in the book's language ("1886" and "eighteen eighty-six" agree), case and
punctuation dropped, hyphens as spaces, apostrophes removed — and aligned word by word with the
edit distance (Levenshtein over words; a word of four letters or more spelled a little
differently, "harbour" heard as "harbor", counts as heard). Two figures come out of it:

    wer          (substitutions + deletions + insertions) / expected words
    missing_run  the longest stretch of expected words in a row that were not heard (deleted or
                 heard as other words; words heard in between that were never written do not
                 break the stretch)

A dropped sentence barely moves a long chunk's WER but shows as a long missing run, so the run
is the main signal; WER catches garble spread across a chunk. A chunk of a word or two cannot
be judged by either without flagging noise (one misheard word is 50 % WER), so it is flagged
only when none of its words was heard at all. The thresholds were chosen on clean narration:
see docs/proof-listening.md, "What is flagged".
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from audiopub.book.scripts import primary_subtag
from audiopub.book.spoken import spoken_form
from audiopub.book.spoken.common import number_words


@dataclass(frozen=True)
class Thresholds:
    """When a chunk is flagged."""

    max_missing_run: int = 6  # flagged at a run of this many expected words unheard
    max_wer: float = 0.35  # flagged above this WER …
    min_words_for_wer: int = 8  # … in chunks of at least this many words
    # Shorter chunks carry more noise per word, so their rate may go higher before it counts:
    # clean joe never passed 50 % in 106 chunks of 3+ words, while tones heard as another
    # sentence ("I'm going to cut it." for "Nobody seemed to mind it at all.") reach 71 %.
    max_wer_short: float = 0.6
    min_words_short: int = 3


@dataclass(frozen=True)
class Verdict:
    flagged: bool
    wer: float
    missing_run: int
    reason: str  # "" when not flagged, else plain words for a person


_DASHES = re.compile(r"[\-\u2010-\u2015\u2212/]")
_APOSTROPHES = re.compile(r"['\u2019\u02bc`\u00b4]")
_DIGITS = re.compile(r"\d+")


def normalise(text: str, language: str) -> list[str]:
    """The words a narrator says for `text`, lower case, without punctuation."""
    spoken = spoken_form(unicodedata.normalize("NFKC", text), language)
    spoken = _APOSTROPHES.sub("", _DASHES.sub(" ", spoken))
    kept = "".join(
        char
        if char.isalnum() or char.isspace() or unicodedata.category(char).startswith("M")
        else " "
        for char in spoken.casefold()
    )
    return [word for token in kept.split() for word in _number_as_words(token, language)]


def _number_as_words(token: str, language: str) -> list[str]:
    """Digits the spoken-form stage left (a language without rules, "3rd" glued to a word)
    as number words where num2words knows the language; otherwise as they are."""
    if not _DIGITS.search(token):
        return [token]
    lang = primary_subtag(language or "en")
    try:
        spelled = _DIGITS.sub(lambda m: f" {number_words(int(m.group()), lang)} ", token)
    except (NotImplementedError, OverflowError, ValueError):
        return [token]
    return [word for word in re.split(r"[\s\-,]+", spelled.casefold()) if word]


def same_word(written: str, heard: str) -> bool:
    """The same word, or a spelling of it ("harbour"/"harbor", "grey"/"gray"): words of four
    letters or more that differ in about one letter in five count as heard."""
    if written == heard:
        return True
    if min(len(written), len(heard)) < 4:
        return False
    return _similar(written, heard)


@lru_cache(maxsize=65_536)
def _similar(written: str, heard: str) -> bool:
    return difflib.SequenceMatcher(None, written, heard, autojunk=False).ratio() >= 0.8


def align(expected: list[str], heard: list[str]) -> tuple[int, int]:
    """(word edits, longest run of expected words not heard) of the best alignment: the fewest
    edits, and among those the most words heard (so "one uh two" aligns "two" with "two")."""
    rows, cols = len(expected) + 1, len(heard) + 1
    # cost[i][j] = (edits, -matches) of the best alignment of expected[:i] with heard[:j]
    cost = [[(0, 0)] * cols for _ in range(rows)]
    for i in range(rows):
        cost[i][0] = (i, 0)
    for j in range(cols):
        cost[0][j] = (j, 0)
    for i in range(1, rows):
        for j in range(1, cols):
            edits, unmatched = cost[i - 1][j - 1]
            diagonal = (
                (edits, unmatched - 1)
                if same_word(expected[i - 1], heard[j - 1])
                else (edits + 1, unmatched)
            )
            up, left = cost[i - 1][j], cost[i][j - 1]
            cost[i][j] = min(diagonal, (up[0] + 1, up[1]), (left[0] + 1, left[1]))
    # Walk back along that path, counting runs of unheard expected words.
    i, j, run, longest = rows - 1, cols - 1, 0, 0
    while i > 0 or j > 0:
        here = cost[i][j]
        if (
            i > 0
            and j > 0
            and same_word(expected[i - 1], heard[j - 1])
            and here == (cost[i - 1][j - 1][0], cost[i - 1][j - 1][1] - 1)
        ):
            i, j, run = i - 1, j - 1, 0
        elif i > 0 and j > 0 and here == (cost[i - 1][j - 1][0] + 1, cost[i - 1][j - 1][1]):
            i, j, run = i - 1, j - 1, run + 1
        elif i > 0 and here == (cost[i - 1][j][0] + 1, cost[i - 1][j][1]):
            i, run = i - 1, run + 1
        else:
            j -= 1  # a word heard that was never written: the run goes on
        longest = max(longest, run)
    return cost[-1][-1][0], longest


def judge(
    expected: str, heard: str, language: str, thresholds: Thresholds | None = None
) -> Verdict:
    """Whether `heard` (the listener's transcript) says the chunk's text `expected`."""
    limits = thresholds or Thresholds()
    want, got = normalise(expected, language), normalise(heard, language)
    if not want:
        return Verdict(False, 0.0, 0, "")
    edits, missing_run = align(want, got)
    wer = edits / len(want)
    if missing_run == len(want):  # however short the chunk: nothing of it was heard
        return Verdict(True, wer, missing_run, _nothing_heard(heard))
    if missing_run >= limits.max_missing_run:
        return Verdict(True, wer, missing_run, f"{missing_run} words in a row not heard")
    if len(want) >= limits.min_words_for_wer and wer > limits.max_wer:
        return Verdict(
            True,
            wer,
            missing_run,
            f"word error rate {wer:.0%} (flagged above {limits.max_wer:.0%})",
        )
    if (
        limits.min_words_short <= len(want) < limits.min_words_for_wer
        and wer > limits.max_wer_short
    ):
        return Verdict(
            True,
            wer,
            missing_run,
            f"word error rate {wer:.0%} (flagged above {limits.max_wer_short:.0%} "
            f"in a chunk of {len(want)} words)",
        )
    return Verdict(False, wer, missing_run, "")


def _nothing_heard(heard: str) -> str:
    return "none of its words heard" if heard.strip() else "no words heard"
