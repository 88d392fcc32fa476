"""Figures for people, with one definition each: speed, real-time factor, durations, sizes.

Two clocks measure speed, and every figure says which it uses:

    wall     seconds on the clock while the work ran: what a person waits. Across a job's
             runs (a pause, a crash and a resume) only the time spent speaking counts.
    engine   seconds the engine worked, summed over every engine process: on four processes
             a wall second holds up to four engine seconds. It compares engines and machines
             whatever the number of processes.

and two spans: "this run" (since a conversion was started or resumed: what the CLI prints
after a resume) and "job" (everything the job has made under its current plan).

A command's wall time runs from start to finish (loading the model, planning, stitching and
encoding included); a job's counts only the time spent speaking, from its first chunk sent
to the engine: starting the engine (its processes, its voice) is a stage of its own
(`ENGINE_START`), timed apart and left out of every speed. Where both are shown they are
labelled so (`START_TO_FINISH`, `SPEAKING_ONLY`), since they rightly differ.

Time left is estimated from the machine's recorded speed (`audiopub bench`, saved in the data
directory) until the run has spoken enough to say better (`estimate_left_s`).

    chars/s            characters spoken ÷ seconds (higher is faster)
    real-time factor   seconds ÷ seconds of audio made (below 1 is faster than real time)

The CLI summary, the job card, `audiopub jobs --details` and the benchmark all use `Speed`.
Pure functions and plain data: no UI imports.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Final


class Clock(str, Enum):
    WALL = "wall clock"
    ENGINE = "engine time"


START_TO_FINISH: Final = "start to finish"  # a command's wall time, everything included
SPEAKING_ONLY: Final = "speaking only"  # the wall time a job's runs spent making its chunks
# Engine time is summed over processes: with four, a chapter's engine-time speed reads about a
# quarter of the job's wall-clock one, and says why.
PER_PROCESS: Final = "each engine process's seconds added up"
# The job stage that loads the engine (starts its processes, loads the voice) before any chunk.
ENGINE_START: Final = "engine start-up"


@dataclass(frozen=True)
class Speed:
    """`chars` spoken as `audio_s` seconds of audio in `seconds` on `clock`."""

    chars: int
    seconds: float
    audio_s: float
    clock: Clock

    @property
    def chars_per_s(self) -> float | None:
        return self.chars / self.seconds if self.seconds > 0 and self.chars else None

    @property
    def rtf(self) -> float | None:
        return self.seconds / self.audio_s if self.seconds > 0 and self.audio_s > 0 else None

    def eta_s(self, chars_left: int) -> float | None:
        """Seconds to speak `chars_left` more at this speed."""
        rate = self.chars_per_s
        return chars_left / rate if rate else None

    def describe(self, span: str = "") -> str:
        """ "1,234 chars in 9.6 s = 128 chars/s, real-time factor 0.268 (wall clock)"; with a
        `span`, "(wall clock, speaking only)"."""
        return (
            f"{count(self.chars)} chars in {seconds_short(self.seconds)} = "
            f"{rate(self.chars_per_s)}, real-time factor {factor(self.rtf)} "
            f"({', '.join(filter(None, (self.clock.value, span)))})"
        )


# How many characters the machine's recorded speed counts for in a run's estimate: at first it
# decides alone; after a few chunks the run's own speed outweighs it.
RECORDED_WEIGHT_CHARS: Final = 1000


def estimate_left_s(
    run: Speed, chars_left: int, recorded_chars_per_s: float | None
) -> float | None:
    """Seconds to speak `chars_left` more: at `run`'s speed, counted together with the machine's
    recorded speed as if it had spoken `RECORDED_WEIGHT_CHARS` at that speed. So the first
    estimate (nothing spoken yet) is the recorded speed's, and the first chunks, which a pool
    of processes returns all at once after a wait, don't swing it; without a recorded speed,
    the run's own (None before its first chunk)."""
    if not recorded_chars_per_s or recorded_chars_per_s <= 0:
        return run.eta_s(chars_left)
    chars = run.chars + RECORDED_WEIGHT_CHARS
    seconds = run.seconds + RECORDED_WEIGHT_CHARS / recorded_chars_per_s
    return chars_left * seconds / chars


# Narrated English runs at about 150 words a minute, i.e. ~15 characters a second at speed 1.0:
# a rough guess at "how long will this chapter be" before a voice has read a book. Voices
# differ (a Piper voice reads ~18 a second), so a voice's measured pace replaces it.
CHARS_PER_SECOND_OF_SPEECH: Final = 15.0


def estimate_speech_s(chars: int, speed: float = 1.0, pace: float | None = None) -> float:
    """Length of the narration of `chars` characters at `speed`, at `pace` characters a
    second of audio at speed 1.0 (a voice's, measured), else at the rough guess above."""
    return chars / ((pace or CHARS_PER_SECOND_OF_SPEECH) * max(speed, 0.1))


def clock(seconds: float | None) -> str:
    """1:02:03, 2:03 or 0:05; an em dash when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return "—"
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def approx_duration(seconds: float) -> str:
    """≈ 2 h 17 min, ≈ 4 min, ≈ 30 s: for estimates, where a clock would look too exact."""
    if seconds < 60:
        return f"≈ {max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"≈ {minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"≈ {hours} h {minutes} min" if minutes else f"≈ {hours} h"


def count(value: int) -> str:
    """12,345"""
    return f"{value:,}"


def size(num_bytes: float) -> str:
    """1.4 MB, 820 kB, 12 B (decimal units, as file managers show them)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if num_bytes >= scale:
            value = num_bytes / scale
            return f"{value:.0f} {unit}" if value >= 100 else f"{value:.1f} {unit}"
    return f"{int(num_bytes)} B"


def rate(chars_per_s: float | None) -> str:
    return "—" if not chars_per_s else f"{chars_per_s:,.0f} chars/s"


def factor(rtf: float | None) -> str:
    return "—" if not rtf else f"{rtf:.3f}"


# Stages in the order a job goes through them; engine stages ("engine.<stage>") sit between
# synthesis and stitching, loading the model first, then in the engine's own order.
_STAGE_ORDER: Final = (
    "prepare",
    ENGINE_START,
    "synthesis",
    "engine.load",
    "engine.",
    "stitch",
    "encode",
)


def stage_times(times: Mapping[str, float]) -> str:
    """ "synthesis 12.3 s · model 12.1 s · phonemes 0.05 s · stitch 0.10 s"; "—" when empty.

    Engine stages are part of synthesis, so they are named without their "engine." prefix.
    """

    def order(name: str) -> int:
        return next(
            (i for i, p in enumerate(_STAGE_ORDER) if name.startswith(p)), len(_STAGE_ORDER)
        )

    parts = [
        f"{name.removeprefix('engine.')} {seconds_short(seconds)}"
        for name, seconds in sorted(times.items(), key=lambda item: order(item[0]))
    ]
    return " · ".join(parts) or "—"


def seconds_short(seconds: float) -> str:
    """0.05 s, 1.23 s, 12.3 s, 123 s."""
    if seconds < 10:
        return f"{seconds:.2f} s"
    return f"{seconds:.1f} s" if seconds < 100 else f"{seconds:,.0f} s"


def when(timestamp: float | None) -> str:
    """Local date and time of a Unix timestamp, to the minute."""
    if timestamp is None:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))
