"""How well the cast finder names the speakers of 22 novels annotated by two people each (the
Project Dialogism Novel Corpus: Vishnubhotla, Hammond and Hirst, LREC 2022).

    python scripts/score_pdnc.py [--data ../shared/pdnc-dev] [--novel NAME ...] [--json]

Each novel's `novel_text.txt` is read as a user's .txt would be and cast whole; each annotated
quotation is scored by the README's rule (see `pdnc.score`). Prints per novel and overall:
accuracy, accuracy per quote type (Explicit, Anaphoric, Implicit), the share of quotations
found, how many characters are one annotated person (clustering) with the name clustering's
pairwise precision and recall against the alias lists, and the seconds the cast took.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pdnc  # noqa: E402

from audiopub.book.cast import attribute  # noqa: E402


def run(data: Path, names: list[str]) -> dict:
    books = {}
    total = pdnc.Score(Counter(), Counter(), 0, 0)
    pure = characters = 0
    pair_counts = [0, 0, 0]
    for name in names:
        novel = pdnc.load(name, data)
        book = pdnc.read(novel)
        started = time.perf_counter()
        attribution = attribute(book)
        seconds = time.perf_counter() - started
        result = pdnc.score(novel, book, attribution)
        right, of = pdnc.clustering(novel, attribution)
        pure += right
        characters += of
        both, predicted, gold = pdnc.pairs(novel, attribution)
        pair_counts = [pair_counts[0] + both, pair_counts[1] + predicted, pair_counts[2] + gold]
        total.add(result)
        books[name] = {
            "quotes": result.quotes,
            "accuracy": result.accuracy,
            "by_type": {t: result.of(t) for t in pdnc.TYPES},
            "found": result.found / max(1, result.quotes),
            "clustering": right / max(1, of),
            "pair_precision": both / max(1, predicted),
            "pair_recall": both / max(1, gold),
            "seconds": round(seconds, 2),
        }
    return {
        "books": books,
        "overall": {
            "quotes": total.quotes,
            "accuracy": total.accuracy,
            "by_type": {t: total.of(t) for t in pdnc.TYPES},
            "counts": {t: total.total[t] for t in pdnc.TYPES},
            "found": total.found / max(1, total.quotes),
            "clustering": pure / max(1, characters),
            "pair_precision": pair_counts[0] / max(1, pair_counts[1]),
            "pair_recall": pair_counts[0] / max(1, pair_counts[2]),
            "novel_min": min((b["accuracy"] for b in books.values()), default=0.0),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=pdnc.DATA)
    parser.add_argument("--novel", action="append", help="score only these novels")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    report = run(args.data, args.novel or pdnc.novels(args.data))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, b in report["books"].items():
        types = "  ".join(f"{t[:4]} {b['by_type'][t]:.3f}" for t in pdnc.TYPES)
        print(
            f"{name:30} {b['quotes']:5} quotes  acc {b['accuracy']:.3f}  {types}  "
            f"found {b['found']:.3f}  clusters {b['clustering']:.2f} "
            f"(pairs P {b['pair_precision']:.2f} R {b['pair_recall']:.2f})  {b['seconds']:.2f} s"
        )
    o = report["overall"]
    types = "  ".join(f"{t} {o['by_type'][t]:.3f} ({o['counts'][t]})" for t in pdnc.TYPES)
    print(
        f"overall: {o['quotes']} quotes, accuracy {o['accuracy']:.3f}, {types}, "
        f"found {o['found']:.3f}, novel min {o['novel_min']:.3f}, clustering {o['clustering']:.3f}"
        f" (name pairs: precision {o['pair_precision']:.3f}, recall {o['pair_recall']:.3f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
