"""A chapter's levels, measured and brought to the audiobook standard, by ffmpeg.

What distributors check each file for (ACX): RMS between -23 and -18 dB, peaks no higher than
-3 dBFS, a noise floor no higher than -60 dB. Piper's voices speak at about -26 LUFS with
sample peaks near -5 dB (joe measured -25.5 LUFS, RMS -25.8 dB, true peak -5.2 dB): too
quiet, and with a peak-to-loudness ratio too wide for a gain alone to land in the window.

So each chapter WAV gets, in one ffmpeg pass, the gain that puts its integrated loudness (EBU
R128) at the target (or its RMS at -21 dB, if that needs more) and a look-ahead limiter at -4
dBFS for the peaks that gain lifts too far: 2,000 times real time, where a two-pass `loudnorm`
(192 kHz) ran at ~100. The result is measured again, and the figures before and after are kept
with the chapter: they are what the job's details show, and a chapter still out of range is
named in the job's log.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from audiopub.atomic import atomic_write
from audiopub.audio.ffmpeg import run_ffmpeg
from audiopub.audio.loudness import AUDIOBOOK, LoudnessTarget

RMS_RANGE_DB: Final = (-23.0, -18.0)
MAX_PEAK_DB: Final = -3.0
_PASSES: Final = 2  # gain + limiter passes at most; the second one only for short, loud speech
_RMS_MARGIN_DB: Final = 0.5  # what a first pass must leave above the window's floor
MAX_NOISE_FLOOR_DB: Final = -60.0
# Sample peaks; true peaks (between samples) measured 0.2 dB above the limit on speech.
LIMIT_DB: Final = -4.0
_SILENT_LUFS: Final = -70.0  # EBU R128's absolute gate: what ebur128 reports for silence
_MEASURE: Final = (
    "astats=measure_perchannel=none:measure_overall=RMS_level+Peak_level"
    "+Noise_floor,ebur128=peak=true:framelog=quiet"
)
_FIGURES: Final = {
    "rms_db": r"RMS level dB:\s*(\S+)",
    "peak_db": r"Peak level dB:\s*(\S+)",
    "noise_floor_db": r"Noise floor dB:\s*(\S+)",
    "integrated_lufs": r"I:\s*(\S+) LUFS",
    "true_peak_db": r"True peak:\s*Peak:\s*(\S+) dBFS",
}


@dataclass(frozen=True)
class Levels:
    """One file's levels; None where there is nothing to measure (digital silence)."""

    integrated_lufs: float | None
    true_peak_db: float | None
    rms_db: float | None
    peak_db: float | None
    noise_floor_db: float | None

    def problems(self) -> list[str]:
        """What is outside the audiobook standard, in words; [] when all is within it."""
        found = []
        low, high = RMS_RANGE_DB
        if self.rms_db is not None and not low <= self.rms_db <= high:
            found.append(f"RMS {self.rms_db:.1f} dB (should be {low:g} to {high:g})")
        if self.peak_db is not None and self.peak_db > MAX_PEAK_DB:
            found.append(f"peak {self.peak_db:.1f} dB (should be at most {MAX_PEAK_DB:g})")
        if self.noise_floor_db is not None and self.noise_floor_db > MAX_NOISE_FLOOR_DB:
            found.append(
                f"noise floor {self.noise_floor_db:.1f} dB "
                f"(should be at most {MAX_NOISE_FLOOR_DB:g})"
            )
        return found

    def describe(self) -> str:
        """E.g. "-20.1 LUFS, RMS -21.0 dB, peak -4.0 dB, noise floor -inf"."""

        def db(value: float | None, unit: str = "dB") -> str:
            return "-inf" if value is None else f"{value:.1f} {unit}"

        return (
            f"{db(self.integrated_lufs, 'LUFS')}, RMS {db(self.rms_db)}, "
            f"peak {db(self.peak_db)}, noise floor {db(self.noise_floor_db)}"
        )

    def to_dict(self) -> dict[str, float | None]:
        return asdict(self)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Levels:
        return Levels(**{name: data.get(name) for name in Levels.__dataclass_fields__})


def measure_levels(wav: Path) -> Levels:
    """One pass of ffmpeg's astats and ebur128 (true peak) over `wav`."""
    result = run_ffmpeg(["-i", str(wav), "-af", _MEASURE, "-f", "null", "-"], "measure the levels")
    figures = {
        name: _number(re.findall(pattern, result, re.S)) for name, pattern in _FIGURES.items()
    }
    loudness = figures["integrated_lufs"]
    if loudness is not None and loudness <= _SILENT_LUFS:  # nothing above R128's gate
        figures["integrated_lufs"] = None
    return Levels(**figures)


def master_chapter(wav: Path, before: Levels, target: LoudnessTarget = AUDIOBOOK) -> bool:
    """Bring `wav` (measured as `before`) to `target` loudness, peaks limited, in place and
    atomically; False, and the file left as it is, when it is silent."""
    if before.integrated_lufs is None or before.rms_db is None:
        return False
    # Loudness gates out pauses, RMS does not: a short chapter that is mostly pause (a title
    # page) reaches -20 LUFS with its RMS still under the window, so the larger gain wins.
    gain = target.integrated_lufs - before.integrated_lufs
    if target.min_rms_db is not None:
        gain = max(gain, target.min_rms_db - before.rms_db)
    audio_filter = f"volume={gain:.2f}dB,{limiter()}"
    with atomic_write(wav) as partial:
        run_ffmpeg(
            [
                "-y",
                "-i",
                str(wav),
                "-af",
                audio_filter,
                "-c:a",
                "pcm_s16le",
                "-f",
                "wav",
                str(partial),
            ],
            "level the chapter",
        )
    return True


def level_chapter(wav: Path, target: LoudnessTarget = AUDIOBOOK) -> tuple[Levels, Levels]:
    """Measure `wav`, bring it to `target` and measure it again: (before, after). Where the
    limiter took back so much that the RMS is still under the window (short, loud speech in
    long pauses), a second pass adds what is missing."""
    before = after = measure_levels(wav)
    for _ in range(_PASSES):
        if not master_chapter(wav, after, target):
            break
        after = measure_levels(wav)
        if after.rms_db is None or after.rms_db >= RMS_RANGE_DB[0] + _RMS_MARGIN_DB:
            break
    return before, after


def limiter(limit_db: float = LIMIT_DB) -> str:
    """ffmpeg's look-ahead limiter, holding sample peaks at `limit_db`. Look-ahead 5 ms, release
    50 ms: fast enough for plosives, too short to pump between words. `latency=true` keeps the
    output aligned with the input, so chunk positions hold."""
    return (
        f"alimiter=limit={10 ** (limit_db / 20):.4f}:level=false:attack=5:release=50:latency=true"
    )


def _number(found: list[str]) -> float | None:
    """The last figure ffmpeg printed (its summary), or None for -inf, nan or none."""
    if not found:
        return None
    value = float(found[-1])
    return value if math.isfinite(value) else None
