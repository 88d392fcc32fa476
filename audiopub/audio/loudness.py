"""Loudness to the audiobook standard, by ffmpeg's EBU R128 `loudnorm` filter in two passes.

The standard audiobook distributors hold files to (ACX's): an RMS level between -23 and
-18 dB and peaks no higher than -3 dB. Piper's voices speak at about -26 LUFS with peaks near
-2 dB, so a book straight from the engine fails both. Integrated loudness -20 LUFS puts speech
in the middle of the RMS window; a true-peak ceiling of -3.5 dBTP leaves lossy encoders (MP3,
AAC overshoot by a few tenths of a dB) room to stay under -3 dB.

Pass one measures the audio; pass two applies exactly the gain the measurement asks for
(`linear`), and loudnorm falls back to its gentle dynamic mode only where the gain would push
peaks past the ceiling. Loudness gates out pauses and RMS does not: a short chapter that is
mostly pause (a title and a sentence between the room tone at its head and tail) reaches
-20 LUFS with its RMS under the window, so it is aimed louder, as far as its RMS needs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from audiopub.audio.ffmpeg import run_ffmpeg, stderr_tail
from audiopub.errors import MuxFailed


@dataclass(frozen=True)
class LoudnessTarget:
    integrated_lufs: float
    true_peak_db: float
    range_lu: float = 11.0  # loudness range allowed; speech in one voice stays well inside
    min_rms_db: float | None = None  # the least RMS to aim for, where loudness leaves it lower


# RMS aimed at no lower than -21 dB: 2 dB inside ACX's -23 to -18 dB window.
AUDIOBOOK: Final = LoudnessTarget(integrated_lufs=-20.0, true_peak_db=-3.5, min_rms_db=-21.0)
_JSON: Final = re.compile(r"\{[^{}]*\"input_i\"[^{}]*\}", re.S)
_RMS: Final = re.compile(r"RMS level dB:\s*(\S+)")
_LOUDEST_LUFS: Final = -5.0  # never aim higher, whatever the RMS asks: speech would distort


@dataclass(frozen=True)
class Measured:
    integrated_lufs: float
    true_peak_db: float
    range_lu: float
    threshold_lufs: float
    offset_lu: float
    rms_db: float | None = None  # None: not measured, or silence


def measure(input_args: Sequence[str], target: LoudnessTarget = AUDIOBOOK) -> Measured:
    """Pass one over the audio ffmpeg reads with `input_args` (e.g. ["-i", "chapter.wav"])."""
    stderr = run_ffmpeg(
        [
            *input_args,
            "-map",
            "0:a",
            "-af",
            "astats=measure_perchannel=none:measure_overall=RMS_level,"
            f"{_loudnorm(target)}:print_format=json",
            "-f",
            "null",
            "-",
        ],
        "measure the loudness",
    )
    found = _JSON.search(stderr)
    if found is None:
        raise MuxFailed(
            "Could not measure the loudness: ffmpeg printed no measurement."
            f"\nffmpeg said:\n{stderr_tail(stderr)}"
        )
    values = json.loads(found.group(0))
    rms = _RMS.findall(stderr)
    rms_db = float(rms[-1]) if rms else None
    return Measured(
        float(values["input_i"]),
        float(values["input_tp"]),
        float(values["input_lra"]),
        float(values["input_thresh"]),
        float(values["target_offset"]),
        rms_db if rms_db is not None and math.isfinite(rms_db) else None,
    )


def normalise_filter(
    measured: Measured, sample_rate: int, target: LoudnessTarget = AUDIOBOOK
) -> str:
    """Pass two: the filter that brings the measured audio to `target`, at `sample_rate`
    (loudnorm works at 192 kHz; the resampler brings it back)."""
    if measured.integrated_lufs == float("-inf"):  # digital silence: nothing to raise
        return f"aresample={sample_rate}"
    if target.min_rms_db is not None and measured.rms_db is not None:
        lufs = measured.integrated_lufs + target.min_rms_db - measured.rms_db
        target = replace(
            target, integrated_lufs=min(max(target.integrated_lufs, lufs), _LOUDEST_LUFS)
        )
    return (
        f"{_loudnorm(target)}:measured_I={measured.integrated_lufs}"
        f":measured_TP={measured.true_peak_db}:measured_LRA={measured.range_lu}"
        f":measured_thresh={measured.threshold_lufs}:offset={measured.offset_lu}"
        f":linear=true,aresample={sample_rate}"
    )


def _loudnorm(target: LoudnessTarget) -> str:
    return f"loudnorm=I={target.integrated_lufs}:TP={target.true_peak_db}:LRA={target.range_lu}"
