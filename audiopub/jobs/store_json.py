"""Figures the job store keeps as JSON text: seconds per stage, peak GPU memory, word starts.

The queue, the ledger and the hearings store the same kinds of figures, so each is written
and read back here, one way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence


def times_json(stage_times: Mapping[str, float] | None) -> str | None:
    """Seconds per stage as stored: JSON, or NULL when there are none."""
    return json.dumps(dict(stage_times)) if stage_times else None


def times_of(stored: str | None) -> dict[str, float]:
    return json.loads(stored) if stored else {}


def vram_json(peaks: Mapping[int, float]) -> str:
    """Peak VRAM (MiB) per device index as stored: {"0": MiB}, devices in order."""
    return json.dumps({str(index): mb for index, mb in sorted(peaks.items())})


def vram_of(stored: str | None) -> dict[int, float]:
    """Peak VRAM as stored, {"0": MiB}, with its device indices as ints again."""
    return {int(index): mb for index, mb in json.loads(stored).items()} if stored else {}


def words_json(word_starts: Sequence[int] | None) -> str | None:
    return json.dumps(list(word_starts)) if word_starts is not None else None


def words_of(text: str | None) -> tuple[int, ...] | None:
    return tuple(json.loads(text)) if text is not None else None
