"""Learn the speaker ranker's weights (`audiopub/book/cast/speakers.json`) from the 22 novels of
the Project Dialogism Novel Corpus (Vishnubhotla, Hammond and Hirst, LREC 2022), numpy only.

    python scripts/train_speakers.py [--data ../shared/pdnc-dev] [--folds 4] [--no-write]

Each novel is read and put through the sieves (`attribution.sieves`); every speech turn's
candidates get their features (`ranker.turns`) and a label: the candidates whose names are
aliases of the annotated speaker of the turn's quotations. A conditional logit (softmax over a
turn's candidates) is fitted by gradient descent with an L2 penalty, on the turns the model
decides (every turn no tag names, `ranker.settled`); the sieves' answer is one of its features,
and it replaces that answer only by a margin (`MARGIN`).

Prints the leave-novels-out figures first (novels in `--folds` groups: each group scored with
weights learned on the others, so every novel is scored once by a model that never saw it),
then fits on all 22 and writes the weights with the figures beside them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pdnc  # noqa: E402

from audiopub.book.cast.attribution import _result, sieves  # noqa: E402
from audiopub.book.cast.models import Quote  # noqa: E402
from audiopub.book.cast.ranker import FEATURES, WEIGHTS, rank_speakers, settled, turns  # noqa: E402

# How far the model's first candidate must score above the sieves' answer (a pronoun tag, a
# name just before, the turn-taking) to replace it. Chosen as the smallest of `MARGINS` that
# keeps the hand-labelled chapters of tests/data/quotes above their floors
# (tests/test_score_quotes.py): data the weights never see.
# The turn-taking sieve is surer than a pronoun tag's or a name's nearest person (on those
# chapters it is right almost always), so a tagged answer needs no margin (`MARGIN_TAGGED`):
# on the 22 novels that does better left out, and the chapters keep their figures.
MARGIN = 2.0
MARGIN_TAGGED = 0.0
Margin = tuple[float, float]  # (over the turn-taking's answer, over a tagged one)
MARGINS: tuple[Margin, ...] = (
    *((m, m) for m in (0.0, 1.0, 2.0, 3.0, float("inf"))),
    (2.0, 0.0),
    (2.0, 1.0),
)

CITATION = (
    "Learned from the Project Dialogism Novel Corpus: Vishnubhotla, Hammond and Hirst, "
    "'The Project Dialogism Novel Corpus: A Dataset for Quotation Attribution in Literary "
    "Texts', LREC 2022 (github.com/Priya22/project-dialogism-novel-corpus, 22 novels)."
)
L2 = 1e-3


def examples(name: str, data: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """(features, which candidates are right) per turn whose annotated speaker is among its
    candidates."""
    novel = pdnc.load(name, data)
    book = pdnc.read(novel)
    paragraphs, cast, narrator = sieves(book)
    found = turns(paragraphs, cast, narrator)
    # Each quotation stands for its turn, so the scorer's alignment labels the turns.
    quotes = tuple(
        Quote(p.chapter, p.index, s.start, s.end, s.text, str(k))
        for k, turn in enumerate(found)
        for p in turn.paragraphs
        for s in p.spans
    )
    spans = pdnc.quote_spans(novel, book, quotes)
    gold: dict[int, Counter[str]] = {}
    for g, voters in zip(novel.gold, pdnc.votes(novel, spans, quotes), strict=True):
        for k in voters:
            gold.setdefault(int(str(k)), Counter())[g.speaker] += 1
    names = [{pdnc.norm(f) for f in (person.name, *person.forms)} - {""} for person in cast.people]
    if narrator is not None:
        names[narrator].add("_narr")  # the annotation's mark for the first-person narrator
    out = []
    for k, turn in enumerate(found):
        if k not in gold or not turn.candidates:
            continue
        if settled(turn):
            continue  # the sieves' to decide: the model learns only what it will do
        speaker = gold[k].most_common(1)[0][0]
        aliases = novel.aliases.get(speaker, frozenset({pdnc.norm(speaker)}))
        right = np.array([bool(names[c] & aliases) for c in turn.candidates])
        if right.any():
            out.append((turn.features, right))
    return out


def fit(data: list[tuple[np.ndarray, np.ndarray]], steps: int = 400) -> np.ndarray:
    """Conditional logit by Adam on the whole batch: maximise the probability of the right
    candidates among each turn's."""
    x = np.concatenate([f for f, _ in data])
    right = np.concatenate([r for _, r in data]).astype(float)
    group = np.concatenate([np.full(len(f), i) for i, (f, _) in enumerate(data)])
    n = len(data)
    w = np.zeros(x.shape[1])
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for step in range(1, steps + 1):
        s = x @ w
        s -= np.max(s)
        e = np.exp(s)
        z = np.bincount(group, e, n)
        zr = np.bincount(group, e * right, n)
        p = e / z[group]  # P(candidate)
        pr = e * right / zr[group]  # P(candidate | right)
        grad = (x * (p - pr)[:, None]).sum(0) / n + L2 * w
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        w -= 0.05 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w


def score(
    names: list[str],
    data: Path,
    w: np.ndarray | None,
    margins: tuple[Margin, ...] = ((MARGIN, MARGIN_TAGGED),),
) -> dict[Margin, dict[str, pdnc.Score]]:
    """Each novel cast with these weights (None: the sieves alone) and each margin, scored."""
    scores: dict[Margin, dict[str, pdnc.Score]] = {m: {} for m in margins}
    for name in names:
        novel = pdnc.load(name, data)
        book = pdnc.read(novel)
        for m in margins:
            paragraphs, cast, narrator = sieves(book)
            if w is not None:
                rank_speakers(paragraphs, cast, narrator, w, m)
            scores[m][name] = pdnc.score(novel, book, _result(paragraphs, cast))
    return scores


def report(title: str, scores: dict[str, pdnc.Score], each: bool = True) -> dict:
    total = pdnc.Score(Counter(), Counter(), 0, 0)
    for s in scores.values():
        total.add(s)
    figures = {
        "quotes": total.quotes,
        "accuracy": round(total.accuracy, 4),
        **{t.lower(): round(total.of(t), 4) for t in pdnc.TYPES},
        "found": round(total.found / max(1, total.quotes), 4),
        "novel_min": round(min(s.accuracy for s in scores.values()), 4),
    }
    print(f"{title}: {figures}")
    for name, s in scores.items() if each else ():
        types = "  ".join(f"{t[:4]} {s.of(t):.3f}" for t in pdnc.TYPES)
        print(f"  {name:30} {s.accuracy:.3f}  {types}")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=pdnc.DATA)
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--no-write", action="store_true", help="do not write the weights")
    parser.add_argument("--margin", type=float, default=MARGIN, help="the margin to ship")
    parser.add_argument(
        "--margin-tagged",
        type=float,
        default=MARGIN_TAGGED,
        help="the margin over a pronoun tag's or a name's answer to ship",
    )
    args = parser.parse_args()
    names = pdnc.novels(args.data)
    started = time.perf_counter()
    per_novel = {name: examples(name, args.data) for name in names}
    print(f"features of {len(names)} novels in {time.perf_counter() - started:.1f} s")
    shipped = (args.margin, args.margin_tagged)
    margins = tuple(sorted({*MARGINS, shipped}))
    held: dict[Margin, dict[str, pdnc.Score]] = {m: {} for m in margins}
    for fold in range(args.folds):
        test = names[fold :: args.folds]
        train = [e for name in names if name not in test for e in per_novel[name]]
        for m, scores in score(test, args.data, fit(train), margins).items():
            held[m].update(scores)
    for m in margins:
        if m != shipped:
            report(f"leave-novels-out, margins {m}", held[m], each=False)
    left_out = report(
        f"leave-novels-out ({args.folds} folds by novel), margins {shipped}", held[shipped]
    )
    w = fit([e for name in names for e in per_novel[name]])
    seen = report(
        "trained on all 22 (scored on the same)",
        score(names, args.data, w, (shipped,))[shipped],
    )
    for name, value in sorted(zip(FEATURES, w, strict=True), key=lambda x: -abs(x[1])):
        print(f"  {name:36} {value:+.3f}")
    if not args.no_write:
        WEIGHTS.write_text(
            json.dumps(
                {
                    "about": "Weights of the speaker ranker (audiopub/book/cast/ranker.py), "
                    "made by scripts/train_speakers.py.",
                    "data": CITATION,
                    "leave_novels_out": left_out,
                    "trained_on_all": seen,
                    "margin": args.margin,
                    "margin_tagged": args.margin_tagged,
                    "features": list(FEATURES),
                    "weights": [round(float(x), 4) for x in w],
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
        print(f"wrote {WEIGHTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
