"""The Project Dialogism Novel Corpus (Vishnubhotla, Hammond and Hirst, LREC 2022) as the cast
finder meets it: each novel read the way a user's .txt is read, its annotated quotations, its
characters' aliases, and the scoring rule of `../shared/pdnc-dev/README.md`.

Used by `score_pdnc.py` (the figures), `train_speakers.py` (the speaker ranker's weights) and
the test that holds the shipped weights to their figures.

Alignment: the book's paragraphs are found in the novel's text by their letters and digits
alone (the reader joins wrapped lines and normalises marks and dashes), so each quotation
Audiopub finds gets a character span in `novel_text.txt`, where the annotations point.
"""

from __future__ import annotations

import ast
import bisect
import csv
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from audiopub.book.cast import Attribution, Quote
from audiopub.book.models import Book
from audiopub.book.reading import read_book

DATA = Path(__file__).resolve().parents[2] / "shared" / "pdnc-dev"
TYPES = ("Explicit", "Anaphoric", "Implicit")

csv.field_size_limit(1 << 24)


@dataclass(frozen=True)
class Gold:
    """One annotated quotation: its sub-quotations' character spans and their texts."""

    spans: tuple[tuple[int, int], ...]
    texts: tuple[str, ...]
    speaker: str
    kind: str  # Explicit, Anaphoric, Implicit


@dataclass(frozen=True)
class Novel:
    name: str
    path: Path  # novel_text.txt
    text: str
    gold: tuple[Gold, ...]
    aliases: dict[str, frozenset[str]]  # a character's main name → its names, normalised
    genders: dict[str, str]  # main name → M, F or X

    def speaker_aliases(self, speaker: str) -> frozenset[str]:
        """The aliases of the character a quotation's speaker field names. The field is
        mostly a main name, but some novels give another of the character's names there
        (Howards End's "Henry" for "Mr. Wilcox", 419 quotations): that one character's
        aliases are meant. A name no character lists stands for itself."""
        if speaker in self.aliases:
            return self.aliases[speaker]
        form = norm(speaker)
        owners = [names for names in self.aliases.values() if form in names]
        return owners[0] if len(owners) == 1 else frozenset({form})


def novels(data: Path = DATA) -> list[str]:
    return sorted(p.parent.name for p in data.glob("*/quotation_info.csv"))


def norm(name: str) -> str:
    """A name as the rule compares it: lower case, no punctuation, no leading "the"."""
    words = re.sub(r"[^\w\s]", "", name.casefold()).split()
    if words and words[0] == "the":
        words = words[1:]
    return " ".join(words)


def key(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())


def load(name: str, data: Path = DATA) -> Novel:
    folder = data / name
    raw = (folder / "novel_text.txt").read_bytes()
    text = raw.decode("utf-8")
    # Byte offset → character offset.
    chars = [0] * (len(raw) + 1)
    at = 0
    for i, c in enumerate(text):
        width = len(c.encode("utf-8"))
        for b in range(width):
            chars[at + b] = i
        at += width
    chars[at] = len(text)
    gold = []
    with open(folder / "quotation_info.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["quoteType"] not in TYPES:
                continue
            spans = tuple((chars[a], chars[b]) for a, b in ast.literal_eval(row["quoteByteSpans"]))
            texts = tuple(str(t) for t in ast.literal_eval(row["subQuotationList"]))
            gold.append(Gold(spans, texts, row["speaker"], row["quoteType"]))
    aliases: dict[str, frozenset[str]] = {}
    genders: dict[str, str] = {}
    with open(folder / "character_info.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            main = row["Main Name"]
            forms = {main, *ast.literal_eval(row["Aliases"])}
            aliases[main] = frozenset(norm(str(f)) for f in forms) - {""}
            genders[main] = row["Gender"]
    return Novel(name, folder / "novel_text.txt", text, tuple(gold), aliases, genders)


def read(novel: Novel) -> Book:
    return read_book(novel.path)


def quote_spans(novel: Novel, book: Book, quotes: tuple[Quote, ...]) -> list[tuple[int, int]]:
    """Each quotation's character span in the novel's text ((-1, -1) where not found)."""
    letters = []
    where = []
    for i, c in enumerate(novel.text):
        if c.isalnum():
            letters.append(c.casefold())
            where.append(i)
    haystack = "".join(letters)
    where.append(len(novel.text))
    starts: dict[tuple[int, int], int] = {}
    cursor = 0
    for chapter in book.chapters:
        for index, paragraph in enumerate(chapter.paragraphs):
            needle = key(paragraph)
            if not needle:
                continue
            found = haystack.find(needle, cursor, cursor + 200_000 + len(needle))
            if found < 0:
                found = haystack.find(needle[:60], cursor, cursor + 200_000)
            if found >= 0:
                starts[(chapter.index, index)] = found
                cursor = found + len(needle)
    paragraphs = {(c.index, i): p for c in book.chapters for i, p in enumerate(c.paragraphs)}
    spans = []
    for q in quotes:
        at = starts.get((q.chapter, q.paragraph))
        if at is None:
            spans.append((-1, -1))
            continue
        inner = key(paragraphs[(q.chapter, q.paragraph)][: q.start])
        length = len(key(q.text))
        first = at + len(inner)
        if not length:
            # Speech with no letters ('". . . . . ." the drummer sang'): the gap between the
            # letters either side holds it.
            spans.append((where[first - 1] + 1 if first else 0, where[first]))
            continue
        last = min(first + length, len(where) - 1)
        spans.append((where[first], where[last - 1] + 1))
    return spans


@dataclass
class Score:
    right: Counter[str]
    total: Counter[str]
    found: int
    quotes: int

    @property
    def accuracy(self) -> float:
        return sum(self.right.values()) / max(1, sum(self.total.values()))

    def of(self, kind: str) -> float:
        return self.right[kind] / max(1, self.total[kind])

    def add(self, other: Score) -> None:
        self.right.update(other.right)
        self.total.update(other.total)
        self.found += other.found
        self.quotes += other.quotes


def votes(
    novel: Novel, spans: list[tuple[int, int]], quotes: tuple[Quote, ...]
) -> list[list[str | None]]:
    """Per annotated quotation, the speakers of the quotations Audiopub found inside one of
    its sub-quotations (or holding it)."""
    order = sorted(range(len(quotes)), key=lambda i: spans[i][0])
    starts = [spans[i][0] for i in order]

    found: list[list[str | None]] = []
    for g in novel.gold:
        speakers: list[str | None] = []
        seen: set[int] = set()
        for (a, b), sub in zip(g.spans, g.texts, strict=False):
            sub_key = key(sub)
            lo = bisect.bisect_left(starts, a - 2000)
            for j in order[lo:]:
                s, e = spans[j]
                if s > b:
                    break
                if j in seen or e <= a or s >= b:
                    continue
                q_key = key(quotes[j].text)
                # Speech with no letters matches an annotated one with none.
                if (q_key and (q_key in sub_key or sub_key in q_key)) or not (q_key or sub_key):
                    seen.add(j)
                    speakers.append(quotes[j].speaker)
        found.append(speakers)
    return found


def score(novel: Novel, book: Book, attribution: Attribution) -> Score:
    spans = quote_spans(novel, book, attribution.quotes)
    names = {c.name: {norm(c.name), *(norm(a) for a in c.aliases)} for c in attribution.characters}
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    found = 0
    for g, speakers in zip(novel.gold, votes(novel, spans, attribution.quotes), strict=True):
        total[g.kind] += 1
        if not speakers:
            continue
        found += 1
        voted = Counter(speakers).most_common(1)[0][0]
        if voted is None:
            continue
        gold = novel.speaker_aliases(g.speaker)
        if names.get(voted, {norm(voted)}) & gold:
            right[g.kind] += 1
    return Score(right, total, found, len(novel.gold))


def clustering(novel: Novel, attribution: Attribution) -> tuple[int, int]:
    """How many of Audiopub's speaking characters are one annotated character: all their
    names belong to that character's aliases and to no other's (right, of all)."""
    right = 0
    for c in attribution.characters:
        forms = {norm(c.name), *(norm(a) for a in c.aliases)} - {""}
        owners = {main for main, names in novel.aliases.items() if forms & names}
        whole = [main for main in owners if forms <= novel.aliases[main]]
        right += len(owners) == 1 and len(whole) == 1
    return right, len(attribution.characters)


def pairs(novel: Novel, attribution: Attribution) -> tuple[int, int, int]:
    """Name clustering scored pairwise against the annotated alias lists: of the name forms
    both Audiopub's characters and the annotation know, every pair Audiopub puts in one
    character (predicted) and every pair one annotated character holds (gold). Returns
    (pairs in both, predicted, gold): precision is the first over the second, recall over
    the third."""
    ours: dict[str, set[int]] = {}
    for i, c in enumerate(attribution.characters):
        for form in {norm(c.name), *(norm(a) for a in c.aliases)} - {""}:
            ours.setdefault(form, set()).add(i)
    theirs: dict[str, set[str]] = {}
    for main, names in novel.aliases.items():
        for form in names:
            theirs.setdefault(form, set()).add(main)
    forms = sorted(set(ours) & set(theirs))
    both = predicted = gold = 0
    for i, a in enumerate(forms):
        for b in forms[i + 1 :]:
            same = bool(ours[a] & ours[b])
            truly = bool(theirs[a] & theirs[b])
            predicted += same
            gold += truly
            both += same and truly
    return both, predicted, gold
