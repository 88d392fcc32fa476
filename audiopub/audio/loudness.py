"""Loudness to the audiobook standard, by ffmpeg's EBU R128 `loudnorm` filter in two passes.

The standard audiobook distributors hold files to (ACX's): an RMS level between -23 and
-18 dB and peaks no higher than -3 dB. Piper's voices speak at about -26 LUFS with peaks near
-2 dB, so a book straight from the engine fails both. Integrated loudness -20 LUFS puts speech
in the middle of the RMS window; a true-peak ceiling of -3.5 dBTP leaves lossy encoders (MP3,
AAC overshoot by a few tenths of a dB) room to stay under -3 dB.

Pass one measures the audio; pass two applies exactly the gain the measurement asks for
(`linear`), and loudnorm falls back to its gentle dynamic mode only where the gain would push
peaks past the ceiling.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from audiopub.audio.ffmpeg import run_ffmpeg, stderr_tail
from audiopub.errors import MuxFailed


@dataclass(frozen=True)
class LoudnessTarget:
    integrated_lufs: float
    true_peak_db: float
    range_lu: float = 11.0  # loudness range allowed; speech in one voice stays well inside


AUDIOBOOK: Final = LoudnessTarget(integrated_lufs=-20.0, true_peak_db=-3.5)
_JSON: Final = re.compile(r"\{[^{}]*\"input_i\"[^{}]*\}", re.S)


@dataclass(frozen=True)
class Measured:
    integrated_lufs: float
    true_peak_db: float
    range_lu: float
    threshold_lufs: float
    offset_lu: float


def measure(input_args: Sequence[str], target: LoudnessTarget = AUDIOBOOK) -> Measured:
    """Pass one over the audio ffmpeg reads with `input_args` (e.g. ["-i", "chapter.wav"])."""
    stderr = run_ffmpeg([*input_args, "-map", "0:a", "-af",
                         f"{_loudnorm(target)}:print_format=json", "-f", "null", "-"],
                        "measure the loudness")
    found = _JSON.search(stderr)
    if found is None:
        raise MuxFailed("Could not measure the loudness: ffmpeg printed no measurement."
                        f"\nffmpeg said:\n{stderr_tail(stderr)}")
    values = json.loads(found.group(0))
    return Measured(float(values["input_i"]), float(values["input_tp"]),
                    float(values["input_lra"]), float(values["input_thresh"]),
                    float(values["target_offset"]))


def normalise_filter(measured: Measured, sample_rate: int,
                     target: LoudnessTarget = AUDIOBOOK) -> str:
    """Pass two: the filter that brings the measured audio to `target`, at `sample_rate`
    (loudnorm works at 192 kHz; the resampler brings it back)."""
    if measured.integrated_lufs == float("-inf"):  # digital silence: nothing to raise
        return f"aresample={sample_rate}"
    return (f"{_loudnorm(target)}:measured_I={measured.integrated_lufs}"
            f":measured_TP={measured.true_peak_db}:measured_LRA={measured.range_lu}"
            f":measured_thresh={measured.threshold_lufs}:offset={measured.offset_lu}"
            f":linear=true,aresample={sample_rate}")


def _loudnorm(target: LoudnessTarget) -> str:
    return (f"loudnorm=I={target.integrated_lufs}:TP={target.true_peak_db}"
            f":LRA={target.range_lu}")
