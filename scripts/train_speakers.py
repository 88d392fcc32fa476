"""Learn the speaker ranker's weights (`audiopub/book/cast/speakers.json`) from the 22 novels of
the Project Dialogism Novel Corpus (Vishnubhotla, Hammond and Hirst, LREC 2022), numpy only.

    python scripts/train_speakers.py [--data ../shared/pdnc-dev] [--folds 4] [--no-write]
        [--rounds 5] [--members 5] [--save-folds DIR | --from-folds DIR]

Each novel is read and put through the sieves (`attribution.sieves`) once; every speech turn's
candidates get their features (`ranker.turns`) and a label: the candidates whose names are
aliases of the annotated speaker of the turn's quotations. A scorer with a linear part and one
small hidden layer (`ranker.Model`; softmax over a turn's candidates) is fitted by gradient
descent with an L2 penalty, on the turns the model decides (every turn no tag names,
`ranker.settled`); the sieves' answer is one of its features, and it replaces that answer only
by a margin (`MARGINS`). Each round's scorer is the average of `--members` of them, fitted
from different random starts (`MEMBERS`).

Prints the leave-novels-out figures first (novels in `--folds` groups: each group scored with
weights learned on the others, so every novel is scored once by a model that never saw it),
then fits on all 22 and writes the weights with the figures beside them.

`--save-folds DIR` keeps each group's models. `--from-folds DIR` fits nothing: it scores
every novel with the models its group learned in the run that saved them, and the shipped
weights on all 22, and writes the shipped weights back with those figures and the margins
given: how a change to the sieves or the margins is measured left out, and shipped, without
a new fit (the folds must come from the run that made the shipped weights).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pdnc  # noqa: E402

from audiopub.book.cast.attribution import _result, sieves  # noqa: E402
from audiopub.book.cast.characters import Cast  # noqa: E402
from audiopub.book.cast.conversation import Paragraph, units  # noqa: E402
from audiopub.book.cast.models import Quote  # noqa: E402
from audiopub.book.cast.ranker import (  # noqa: E402
    FEATURES,
    WEIGHTS,
    Margins,
    Model,
    model_of,
    rank_speakers,
    rounds,
    settled,
    turns,
    weights,
)
from audiopub.book.models import Book  # noqa: E402

# How far the model's first candidate must score above the sieves' answer to replace it
# (`ranker.Margins`). Over the turn-taking's or a tag's answer none is needed: left out, the
# novels do best with the model deciding. To give a turn to the first-person narrator
# instead, it must be surer: the hand-labelled chapters of tests/data/quotes (data the
# weights never see, with a quiet narrator) keep their floors (tests/test_score_quotes.py).
# `--margin-*` tries others: a narrator margin of 0.5 did worse left out (0.820 against 0.824),
# and later one of 1.0 (0.8482 against 0.8495: The Mysterious Affair at Styles 0.816 against
# 0.830, though on the shipped weights it gave The Sun Also Rises four more lines in a thousand).
MARGINS = Margins(turn=0.0, tagged=0.0, narrator=2.0)
# Rounds of the model (`ranker.rank_speakers`): each sees the speakers the one before chose, each as
# much as it was sure of it (`ranker.Round`). Left out, on the 22 novels, with the models of the
# run that made the shipped weights and today's sieves (`--from-folds`): the sieves alone
# 0.7491, 1 round 0.8283, 2 0.8449, 3 0.8504, 4 0.8517, 5 0.8532 (24,511 of 28,728 quotations;
# the worst novel 0.709); explicit quotations 0.9703, 0.9705, 0.9701, 0.9699, 0.9701. Before a
# tag's own description kept the first round's choice (`ranker.ranked`), explicit quotations
# fell from 0.9702 after one round to 0.9692 after five. In earlier runs, with fewer tags found:
# every choice counted whole 0.829 at five against 0.833; sureness on the neighbours' own features
# alone 0.831. More did no better (6 0.832 against 0.833; before that, 6 0.824, 7 0.822), nor did
# learning each round from earlier rounds that never saw the novel (cross-fitted in two groups:
# 0.820), nor two features for exchanges of three people or more (the speaker two back, and anyone
# else of the last six turns: 0.836 against 0.837, the worst novel 0.651 against 0.664). A
# description owning an answer ('"…" was his mother's only reply') is kept: without it 0.836 (worst
# 0.657) against 0.837 (0.669). Two features for a kin word calling the listener ('"…, mother?"':
# whose titles fit answers) gained little, measured on tags read otherwise than now (0.8486 against
# 0.8480): not kept.
ROUNDS = 5

CITATION = (
    "Learned from the Project Dialogism Novel Corpus: Vishnubhotla, Hammond and Hirst, "
    "'The Project Dialogism Novel Corpus: A Dataset for Quotation Attribution in Literary "
    "Texts', LREC 2022 (github.com/Priya22/project-dialogism-novel-corpus, 22 novels)."
)
# Left out, in a run with two features fewer: 1e-3 0.826; 3e-3 0.822; 3e-4 0.821. Later 2e-3
# 0.8470 against 0.8495.
L2 = 1e-3
LEARNING_RATE = 0.01
# Hidden units: 16 and 32 both beat the linear model by about 2 points of turns left out
# (0.727 → 0.747, 0.748); more learn the training novels, not the next one.
UNITS = 32
# Scorers averaged into the shipped one (`fit`), each from its own random start. Left out, on
# the same sieves: one 0.8387 (the worst novel 0.673), three 0.8413 (0.679); later, with the
# kin features, one 0.8433 (0.674), five 0.8443 (0.675); later five 0.8494 (0.692), eight
# 0.8495 (0.701), explicit quotations 0.9657 and 0.9668: less wobble from the random starts.
MEMBERS = 8
# Features tried and left out, one scorer a round, against 0.8444 with the same sieves: the
# turn after calling its listener "sir" or "madam" (0.8437); everyone a turn of the chapter was
# given to, as a candidate (0.8436); a call by name further off in the exchange, by the parity
# of its distance (0.8428, though the worst novel rose from 0.676 to 0.684). Nor did choosing
# an exchange's speakers together after the last round (Viterbi over its scores, with a score
# for the same speaker twice running, for the one two back, for a third person; the three
# chosen on the other folds): left out, over the quotations aligned with a turn, 0.8581
# against 0.8582 choosing turn by turn. Nor did weighing each novel's turns alike, so the small
# novels count as much as the long ones: left out, one scorer, 0.8412 (the worst novel 0.668)
# against 0.8436 (0.674) with every turn alike. Later, against 0.8437 (0.677): "the girl" or
# "the boy" said by someone the book titles "Mrs." or "Mr.", with "replied the other" said by
# the one who spoke the turn before (0.8431, 0.666); and "she continued", "he went on" said by
# the one who spoke last, in the dev novels right for only a third of such turns. Later, five
# scorers a round, against 0.8465 (0.678): the turn before calling its listener by a kin word
# ("my dear mother"), with the titles and the family name of whom it may be (0.8464, 0.674).
# Nor, against 0.8461 (0.680), did counting each turn once per annotated quotation it holds,
# as the score counts them (0.8438, 0.675).
# Later, against 0.8477 (0.687): whom the narration names as spoken or turned to ("said to
# Ronny", "approached Fielding and said") as two features, answering in the next turn and
# listening in this one (0.8480, the worst novel 0.680).
# Later, against 0.8495 (24,404 quotations; the worst novel 0.701): a description's noun being a
# word for a person, and the narration just before saying it (`ranker.FEATURES`
# "described_role", "described_scene"), with the sieves then shipped: 0.8490 (0.696); with the
# tags then added beside them (a place after the verb, "Her voice lingered", 24,391 → 24,417
# quotations): 0.8499 (0.703); and with a tag between two quotations the next one's where the
# first had its own before it: 0.84997 (24,418), shipped then.
# Later, against that: a first name the family calls someone only titled by (Miss Steele is
# Anne), names misspelt once joined to the name, more tags read, a word for what someone does
# made someone of their own whatever its gender ("the maid"), and the scorer finding speech
# with no letters: 0.8521 (24,480; the worst novel 0.696, A Passage to India, 0.706 before),
# shipped; the same without the gendered roles: 0.8510 (the worst novel 0.693).
# Later, on those same weights (the folds saved, `--from-folds`), the sieves reading "said to
# Mrs. Bhattacharya" as whom it is said to, and a name alone answering "May I know your name?"
# as the one who answers: 0.8532 (24,512; the worst novel 0.709, The Sport of the Gods; A
# Passage to India 0.696 → 0.711), shipped. A margin over the turn-taking's answer then gained
# a few quotations and cost the worst novel some (0.2: 0.8535, 0.705; 0.25: 0.8536, 0.705;
# 0.3: 0.8531, 0.705): not shipped. Then, against 24,512 (explicit 8,914): a turn whose tag
# describes someone of their own keeping them where the first round chose them, 24,512
# (explicit 8,920); with "contribution" a word for what is said, 24,513 (8,921); and a bracket
# after a tag's verb read as an aside, 24,511 (8,922: 0.9701), shipped. Not kept: a subject
# with a clause set apart before its verb ("Ronny, who was about to be transferred …,
# approached Fielding … and said"), 24,502 (explicit 8,916: the ranker then gave Ronny the
# next lines, A Passage to India 0.711 → 0.706); round one's choice for every turn a pronoun
# or a name nearby tags, explicit up on one group, overall 6 to 43 quotations down.
# How far a run moves with its data: joining the Nawab Bahadur's other name changed only A
# Passage to India's cast, and scored 0.8486 against 0.8495: that novel 0.688 → 0.697, while
# novels scored by models that learned from it moved by up to 0.013 (The Sport of the Gods
# 0.702 → 0.689). A step of 0.001 overall is within that.


@dataclass(frozen=True)
class Prepared:
    """A novel read, put through the sieves and aligned with its annotation once: every round
    and every fold starts from here (the sieves take most of a round's time)."""

    novel: pdnc.Novel
    book: Book
    state: bytes  # the sieves' (paragraphs, cast, narrator), pickled: each use gets its own
    gold: dict[int, Counter[str]]  # per speech turn, the annotated speakers of its quotations
    names: list[set[str]]  # per person of the cast, their names as the annotation writes them

    def sieves(self) -> tuple[list[Paragraph], Cast, int | None]:
        return pickle.loads(self.state)


def prepare(name: str, data: Path) -> Prepared:
    novel = pdnc.load(name, data)
    book = pdnc.read(novel)
    paragraphs, cast, narrator = sieves(book)
    # Each quotation stands for its turn, so the scorer's alignment labels the turns.
    quotes = tuple(
        Quote(p.chapter, p.index, s.start, s.end, s.text, str(k))
        for k, unit in enumerate(units(paragraphs))
        for p in unit
        for s in p.spans
    )
    spans = pdnc.quote_spans(novel, book, quotes)
    gold: dict[int, Counter[str]] = {}
    for g, voters in zip(novel.gold, pdnc.votes(novel, spans, quotes), strict=True):
        for voter in voters:
            gold.setdefault(int(str(voter)), Counter())[g.speaker] += 1
    names = [{pdnc.norm(f) for f in (person.name, *person.forms)} - {""} for person in cast.people]
    if narrator is not None:
        names[narrator].add("_narr")  # the annotation's mark for the first-person narrator
    state = pickle.dumps((paragraphs, cast, narrator))
    return Prepared(novel, book, state, gold, names)


def examples(
    novel: Prepared, earlier: Sequence[Model] = (), margin: Margins = MARGINS
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(features, which candidates are right) per turn whose annotated speaker is among its
    candidates, as the round after the `earlier` models' sees them."""
    paragraphs, cast, narrator = novel.sieves()
    found = turns(paragraphs, cast, narrator, rounds(paragraphs, cast, narrator, earlier, margin))
    out = []
    for k, turn in enumerate(found):
        if k not in novel.gold or not turn.candidates:
            continue
        if settled(turn):
            continue  # the sieves' to decide: the model learns only what it will do
        speaker = novel.gold[k].most_common(1)[0][0]
        aliases = novel.novel.speaker_aliases(speaker)
        right = np.array([bool(novel.names[c] & aliases) for c in turn.candidates])
        if right.any():
            out.append((turn.features, right))
    return out


def fit_rounds(
    names: list[str],
    novels: dict[str, Prepared],
    first: dict[str, list[tuple[np.ndarray, np.ndarray]]],
    rounds: int,
    margin: Margins,
    members: int = MEMBERS,
) -> list[Model]:
    """A model per round, each learned from the turns as the rounds before it leave them
    (`first`: each novel's examples for the first round)."""
    models: list[Model] = []
    for r in range(rounds):
        seen = [first[n] if r == 0 else examples(novels[n], models, margin) for n in names]
        models.append(fit([e for novel in seen for e in novel], members))
    return models


def fit(data: list[tuple[np.ndarray, np.ndarray]], members: int = MEMBERS) -> Model:
    """`members` scorers fitted from different starting weights, averaged: one `Model` whose
    hidden layer holds all of theirs, its linear part and output weights their mean."""
    fitted = [fit_one(data, seed=seed) for seed in range(members)]
    return Model(
        np.mean([m.linear for m in fitted], axis=0),
        np.concatenate([m.hidden for m in fitted], axis=1),
        np.concatenate([m.bias for m in fitted]),
        np.concatenate([m.out for m in fitted]) / members,
    )


def fit_one(
    data: list[tuple[np.ndarray, np.ndarray]], units: int = UNITS, steps: int = 800, seed: int = 0
) -> Model:
    """Maximise the probability of the right candidates among each turn's (a softmax over
    the turn's scores), by Adam on the whole batch with an L2 penalty (stopping sooner, at 500
    steps, scored 0.8485 left out against 0.8495 at 800). The hidden layer starts
    from seeded random weights: the same data makes the same model. In single precision,
    which fits as well and takes under half the time (the products with `x` are most of it)."""
    x = np.concatenate([f for f, _ in data]).astype(np.float32)
    right = np.concatenate([r for _, r in data]).astype(np.float32)
    group = np.concatenate([np.full(len(f), i) for i, (f, _) in enumerate(data)])
    starts = np.cumsum([0] + [len(f) for f, _ in data[:-1]])
    n = len(data)
    rng = np.random.default_rng(seed)
    params = {
        "linear": np.zeros(x.shape[1], np.float32),
        "hidden": rng.normal(0.0, 0.3, (x.shape[1], units)).astype(np.float32),
        "bias": np.zeros(units, np.float32),
        "out": rng.normal(0.0, 0.3, units).astype(np.float32),
    }
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    for step in range(1, steps + 1):
        inner = x @ params["hidden"] + params["bias"]
        active = np.maximum(inner, 0.0)
        s = x @ params["linear"] + active @ params["out"]
        s -= np.maximum.reduceat(s, starts)[group]  # each turn's own: none underflows whole
        e = np.exp(s)
        z = np.bincount(group, e, n).astype(np.float32)
        zr = np.bincount(group, e * right, n).astype(np.float32)
        # d(mean negative log-likelihood)/d(score): P(candidate) - P(candidate | right).
        ds = (e / z[group] - e * right / zr[group]) / np.float32(n)
        d_inner = np.outer(ds, params["out"]) * (inner > 0)
        grads = {
            "linear": x.T @ ds,
            "hidden": x.T @ d_inner,
            "bias": d_inner.sum(0),
            "out": active.T @ ds,
        }
        for k, g in grads.items():
            g = g + L2 * params[k]
            m, v = moments[k]
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g**2
            moments[k] = (m, v)
            params[k] -= (
                LEARNING_RATE * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
            )
    return Model(*(params[k].astype(float) for k in ("linear", "hidden", "bias", "out")))


def score(
    names: list[str], novels: dict[str, Prepared], models: Sequence[Model], margin: Margins
) -> dict[str, pdnc.Score]:
    """Each novel cast with these models (none: the sieves alone), scored."""
    scores: dict[str, pdnc.Score] = {}
    for name in names:
        novel = novels[name]
        paragraphs, cast, narrator = novel.sieves()
        if models:
            rank_speakers(paragraphs, cast, narrator, models, margin)
        scores[name] = pdnc.score(novel.novel, novel.book, _result(paragraphs, cast))
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


def rounded(values: np.ndarray) -> list[float]:
    return [round(float(x), 4) for x in values]


def stored(models: Sequence[Model]) -> list[dict]:
    """The models as the weights file holds them, each round's numbers to four places."""
    return [
        {
            "linear": rounded(m.linear),
            "hidden": [rounded(row) for row in m.hidden],
            "bias": rounded(m.bias),
            "out": rounded(m.out),
        }
        for m in models
    ]


def save_fold(folder: Path, fold: int, test: list[str], models: Sequence[Model]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    data = {"features": list(FEATURES), "test": test, "rounds": stored(models)}
    (folder / f"fold{fold}.json").write_text(json.dumps(data), encoding="utf-8")


def load_fold(folder: Path, fold: int) -> tuple[list[str], list[Model]]:
    """A group's novels and the models learned without them (`save_fold`), as rounded as
    the shipped ones."""
    path = folder / f"fold{fold}.json"
    if not path.is_file():
        raise SystemExit(f"{path}: no such group saved (--save-folds writes one per --folds)")
    data = json.loads(path.read_text(encoding="utf-8"))
    if data["features"] != list(FEATURES):
        raise SystemExit(f"{folder}: saved with other features than the ranker's")
    at = {name: i for i, name in enumerate(data["features"])}
    return data["test"], [model_of(r, at) for r in data["rounds"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=pdnc.DATA)
    parser.add_argument("--folds", type=int, default=4, help="0: no leave-novels-out figures")
    parser.add_argument("--no-write", action="store_true", help="do not write the weights")
    for field in fields(Margins):
        parser.add_argument(
            f"--margin-{field.name}",
            type=float,
            default=getattr(MARGINS, field.name),
            help=f"the margin to ship over the sieves' answer: {field.name}",
        )
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds of the model")
    parser.add_argument(
        "--members", type=int, default=MEMBERS, help="scorers averaged into each round's"
    )
    kept = parser.add_mutually_exclusive_group()
    kept.add_argument("--save-folds", type=Path, help="keep each group's models in this folder")
    kept.add_argument(
        "--from-folds",
        type=Path,
        help="fit nothing: score with the groups' models saved here and the shipped weights",
    )
    args = parser.parse_args()
    if args.from_folds and not args.folds:
        parser.error("--from-folds scores the saved groups: give --folds as many as were saved")
    names = pdnc.novels(args.data)
    shipped = Margins(**{f.name: getattr(args, f"margin_{f.name}") for f in fields(Margins)})
    started = time.perf_counter()
    novels = {name: prepare(name, args.data) for name in names}
    first = {} if args.from_folds else {name: examples(novels[name]) for name in names}
    print(f"features of {len(names)} novels in {time.perf_counter() - started:.1f} s")
    # Every novel scored by models that never saw it, after each number of rounds.
    held: list[dict[str, pdnc.Score]] = [{} for _ in range(args.rounds + 1)]
    for fold in range(args.folds):
        if args.from_folds:
            test, models = load_fold(args.from_folds, fold)
        else:
            test = names[fold :: args.folds]
            train = [name for name in names if name not in test]
            models = fit_rounds(train, novels, first, args.rounds, shipped, args.members)
            if args.save_folds:
                save_fold(args.save_folds, fold, test, models)
        for r in range(min(args.rounds, len(models)) + 1):
            held[r].update(score(test, novels, models[:r], shipped))
    left_out = {}
    if args.folds:
        for r in range(args.rounds):
            alone = " (the sieves alone)" if r == 0 else ""
            report(f"leave-novels-out, {r} rounds{alone}", held[r], each=False)
        left_out = report(
            f"leave-novels-out ({args.folds} folds by novel), {args.rounds} rounds, "
            f"margins {shipped}",
            held[args.rounds],
        )
    if args.from_folds:
        models = list(weights())
    else:
        models = fit_rounds(names, novels, first, args.rounds, shipped, args.members)
    seen = report("trained on all 22 (scored on the same)", score(names, novels, models, shipped))
    ranked = sorted(zip(FEATURES, models[0].linear, strict=True), key=lambda x: -abs(x[1]))
    print("the first round's linear weights:")
    for name, value in ranked:
        print(f"  {name:36} {value:+.3f}")
    if not args.no_write:
        shipped_data = {
            "about": "Weights of the speaker ranker (audiopub/book/cast/ranker.py), "
            "made by scripts/train_speakers.py.",
            "data": CITATION,
            "leave_novels_out": left_out,
            "trained_on_all": seen,
            "margins": asdict(shipped),
            "features": list(FEATURES),
            "rounds": stored(models),
        }
        # A key a line, its value on that line: the hidden layer's rows stay readable and the
        # file small.
        lines = (f" {json.dumps(k)}: {json.dumps(v)}" for k, v in shipped_data.items())
        WEIGHTS.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
        print(f"wrote {WEIGHTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
