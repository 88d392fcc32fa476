"""scripts/score_quotes.py runs on the hand-labelled quotations and the cast finder stays as
good as it was measured: a regression floor about five points under each figure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Measured: 544 quotations, accuracy 96.9 % (explicit 95.6, pronoun 96.1, untagged 98.5),
# finding recall 99.4 %, precision 98.7 %.
FLOORS = {"accuracy": 0.89, "recall": 0.94, "precision": 0.93}
CATEGORY_FLOORS = {"explicit": 0.89, "pronoun": 0.85, "untagged": 0.92}


def test_the_scorer_runs_and_the_figures_stay_above_their_floors() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "score_quotes.py"), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        cwd=ROOT,
    )
    report = json.loads(result.stdout)
    overall = report["overall"]
    assert overall["quotes"] >= 300
    assert set(report["books"]) >= {"sherlock", "just-so", "war-of-the-worlds"}
    for figure, floor in FLOORS.items():
        assert overall[figure] >= floor, (figure, overall[figure])
    for category, floor in CATEGORY_FLOORS.items():
        assert overall["by_category"][category] >= floor, (category, overall["by_category"])
    # A whole novel is cast in seconds on the CPU (generous for a loaded machine).
    assert all(book["seconds"] < 20 for book in report["books"].values())
