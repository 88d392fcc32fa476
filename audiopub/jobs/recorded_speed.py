"""The machine's speed as its saved benchmark results recorded it, read back for a job's first
estimate of the time left.

Every `audiopub bench` run saves its result (the JSON of `BenchResult.to_dict()`, the same as
`--output` writes) in `<data dir>/bench/` (`bench.saved` writes them). A job reads the newest
one for its engine, voice and device, so that its first estimate of the time left comes from
how fast this machine really speaks, instead of from nothing (a run that has spoken nothing
has no speed of its own).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from audiopub import settings

log = logging.getLogger(__name__)

BENCH_DIR: Final = "bench"  # inside the data directory
# The results' layout (docs/bench-schema.md, bench/schema.json): defined here, beside the
# reader jobs use, and written by the benchmarks (`bench.results`).
SCHEMA_ID: Final = "audiopub-bench/1"


def results_dir() -> Path:
    return settings.data_dir() / BENCH_DIR


def machine_speed(
    engine: str, voice: str, on_gpu: bool, steps: int | None = None, folder: Path | None = None
) -> float | None:
    """Characters a second this machine spoke `voice` of `engine` at, on the GPU or not, in the
    newest saved benchmark of them (None if none): a whole book's run where there is one (the
    job's own pipeline, on the wall clock), else the longest text of its tables at `steps`."""
    for result in reversed(_results(folder or results_dir())):
        facts = result.get("engine") or {}
        device = result.get("device") or {}
        if (
            facts.get("name") != engine
            or facts.get("voice") != voice
            or bool(device.get("requested_gpu")) != on_gpu
        ):
            continue
        speed = _chars_per_s(result, steps)
        if speed:
            return speed
    return None


def _results(folder: Path) -> list[dict[str, Any]]:
    """The saved results, oldest first; a file that is not one (edited, half-copied) is
    passed over, with a note in the log."""
    results = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.info("passing over benchmark result %s: %s", path, exc)
            continue
        if isinstance(data, dict) and data.get("schema") == SCHEMA_ID:
            results.append(data)
    return sorted(results, key=lambda data: str(data.get("created", "")))


def _chars_per_s(result: Mapping[str, Any], steps: int | None) -> float | None:
    book = result.get("book")
    if book and book.get("summary"):
        rows = [row for row in book["summary"] if row.get("steps") in (steps, None)]
        return float((rows or book["summary"])[0]["chars_per_s"]["median"])
    cells = result.get("synthesis") or []
    cells = [cell for cell in cells if cell.get("steps") in (steps, None)] or cells
    if not cells:
        return None
    longest = max(cells, key=lambda cell: cell["chars"])
    return float(longest["chars_per_s"]["median"])
