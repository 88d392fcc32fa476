"""Benchmark results kept in the data directory, for later jobs' estimates of the time left.

Every `audiopub bench` run saves its result (the JSON of `BenchResult.to_dict()`, the same as
`--output` writes) in `<data dir>/bench/`; a job reads the machine's speed back from them
(`jobs.recorded_speed`).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from audiopub.atomic import atomic_write
from audiopub.jobs.recorded_speed import results_dir


def save(result: Mapping[str, Any]) -> Path:
    """Keep a result for later jobs; named by when it ran and its engine (and a few random
    characters: two runs within a second keep both)."""
    stamp = str(result["created"]).replace(":", "").replace("+0000", "Z")
    path = results_dir() / f"{stamp}-{result['engine']['name']}-{secrets.token_hex(3)}.json"
    with atomic_write(path) as temp:
        temp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return path
