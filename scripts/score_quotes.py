"""How well the cast finder does on hand-labelled quotations of real books.

    python scripts/score_quotes.py [--data tests/data/quotes] [--epubs tests/data/epubs] [--json]

Each `tests/data/quotes/*.tsv` names its book (`# book FILE`), the paragraph ranges labelled
in full (`# range CHAPTER FIRST LAST`), then one line per quotation: chapter, paragraph, the
true speaker ("-" where no one person speaks: a crowd, a notice read out), the category
(explicit: a tag names the speaker; pronoun: a tag with a pronoun; untagged), and how the
quotation opens.

Prints, over all books and per book: quote-finding recall and precision inside the labelled
ranges, attribution accuracy overall and per category (a quotation not found counts as wrong),
and the time `attribute` takes on each whole book.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from audiopub.book.cast import Attribution, Character, Quote, attribute
from audiopub.book.epub.reader import read_epub

ROOT = Path(__file__).resolve().parent.parent
CATEGORIES = ("explicit", "pronoun", "untagged")


@dataclass(frozen=True)
class Gold:
    chapter: int
    paragraph: int
    speaker: str | None
    category: str
    opening: str


def load(path: Path) -> tuple[str, list[tuple[int, int, int]], list[Gold]]:
    book = ""
    ranges: list[tuple[int, int, int]] = []
    gold: list[Gold] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if line.startswith("# book"):
            book = fields[1]
        elif line.startswith("# range"):
            ranges.append((int(fields[1]), int(fields[2]), int(fields[3])))
        elif line.strip() and not line.startswith("#"):
            chapter, paragraph, speaker, category, opening = fields
            gold.append(
                Gold(
                    int(chapter),
                    int(paragraph),
                    None if speaker == "-" else speaker,
                    category,
                    opening,
                )
            )
    return book, ranges, gold


def _key(text: str) -> str:
    return re.sub(r"\W+", "", text).casefold()


def _names(character: Character) -> set[str]:
    """What a gold speaker may be called to match: the name, its aliases, each one's last word,
    without a leading article."""
    names = set()
    for form in (character.name, *character.aliases):
        form = re.sub(r"^(the|a|an)\s+", "", form.casefold())
        names.update({form, form.split()[-1]} if form.split() else {form})
    return names


def right_speaker(gold: Gold, quote: Quote | None, people: dict[str, Character]) -> bool:
    if quote is None:
        return False
    if gold.speaker is None or quote.speaker is None:
        return gold.speaker is None and quote.speaker is None
    return gold.speaker.casefold() in _names(people[quote.speaker])


def score_book(attribution: Attribution, ranges: list[tuple[int, int, int]], gold: list[Gold]):
    people = {c.name: c for c in attribution.characters}
    in_range = [
        q
        for q in attribution.quotes
        if any(c == q.chapter and a <= q.paragraph <= b for c, a, b in ranges)
    ]
    by_paragraph: dict[tuple[int, int], list[Quote]] = {}
    for quote in in_range:
        by_paragraph.setdefault((quote.chapter, quote.paragraph), []).append(quote)
    used: set[int] = set()
    found = 0
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    wrong: list[str] = []
    for item in gold:
        match = None
        for quote in by_paragraph.get((item.chapter, item.paragraph), []):
            if id(quote) not in used and _key(quote.text).startswith(_key(item.opening)):
                match = quote
                used.add(id(quote))
                break
        found += match is not None
        total[item.category] += 1
        if right_speaker(item, match, people):
            right[item.category] += 1
        else:
            wrong.append(
                f"{item.chapter}:{item.paragraph} {item.category} {item.opening!r}: "
                f"{item.speaker} ≠ {match.speaker if match else 'not found'}"
            )
    return {
        "gold": len(gold),
        "found": found,
        "predicted": len(in_range),
        "right": dict(right),
        "total": dict(total),
        "wrong": wrong,
    }


def run(data: Path, epubs: Path) -> dict:
    books = {}
    for path in sorted(data.glob("*.tsv")):
        name, ranges, gold = load(path)
        book = read_epub(epubs / name)
        started = time.perf_counter()
        attribution = attribute(book)
        seconds = time.perf_counter() - started
        result = score_book(attribution, ranges, gold)
        result["seconds"] = round(seconds, 3)
        result["quotes_in_book"] = len(attribution.quotes)
        books[path.stem] = result
    return {"books": books, "overall": _summary(list(books.values()))}


def _summary(results: list[dict]) -> dict:
    gold = sum(r["gold"] for r in results)
    found = sum(r["found"] for r in results)
    predicted = sum(r["predicted"] for r in results)
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for r in results:
        right.update(r["right"])
        total.update(r["total"])
    return {
        "quotes": gold,
        "recall": found / gold if gold else 0.0,
        "precision": found / predicted if predicted else 0.0,
        "accuracy": sum(right.values()) / gold if gold else 0.0,
        "by_category": {c: (right[c] / total[c] if total[c] else 0.0) for c in CATEGORIES},
        "counts": {c: total[c] for c in CATEGORIES},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT / "tests" / "data" / "quotes")
    parser.add_argument("--epubs", type=Path, default=ROOT / "tests" / "data" / "epubs")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--wrong", action="store_true", help="list each wrong attribution")
    args = parser.parse_args()
    report = run(args.data, args.epubs)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, result in report["books"].items():
        summary = _summary([result])
        print(
            f"{name}: {summary['quotes']} quotes, accuracy {summary['accuracy']:.1%}, "
            f"recall {summary['recall']:.1%}, precision {summary['precision']:.1%}, "
            f"whole book cast in {result['seconds']:.2f} s ({result['quotes_in_book']} quotes)"
        )
        if args.wrong:
            for line in result["wrong"]:
                print("   ", line)
    overall = report["overall"]
    print(
        f"overall: {overall['quotes']} quotes, accuracy {overall['accuracy']:.1%}, "
        f"finding recall {overall['recall']:.1%}, precision {overall['precision']:.1%}"
    )
    for category in CATEGORIES:
        print(
            f"  {category}: {overall['by_category'][category]:.1%} of {overall['counts'][category]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
