"""The compute bound: how many characters per second this machine could speak at best.

A model that needs F GFLOP per second of audio, on a machine that multiplies float32 matrices
at P GFLOP/s, makes at most P / F seconds of audio per second; at c characters per second of
audio that is P / F · c characters per second, and

    share of compute bound = measured chars/s ÷ (P ÷ GFLOP per char),  GFLOP per char = F / c.

F is counted, not guessed (`piper_gflop_per_audio_s`): the voice speaks each bench text once
under ONNX Runtime's profiler with graph optimisations and weight prepacking off, so every
node is the graph's own and reports its real input, weight and output shapes. Each Conv,
ConvTranspose, MatMul and Gemm node counts 2 FLOP per multiply-add:

    Conv           2 · |output| · (C_in / groups) · kernel        (weight [C_out, C_in/g, k…])
    ConvTranspose  2 · |input| · (C_out / groups) · kernel        (weight [C_in, C_out/g, k…])
    MatMul / Gemm  2 · |output| · K                                (K: the first input's last axis)

and the sum is divided by the seconds of audio produced. Element-wise ops, norms and
activations are left out: they are memory-bound and well under 1% of the multiply-adds. P comes
from machine.matmul_gflops (NumPy's BLAS on all cores), a ceiling no real model reaches: VITS
convolutions have few channels and are dominated by memory traffic, so 20-40% is good.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from audiopub import settings
from audiopub.bench.texts import TEXTS
from audiopub.tts.engine import split_speaker
from audiopub.tts.piper import PIPER
from audiopub.tts.piper.config import PiperVoiceConfig, phoneme_ids
from audiopub.tts.piper.files import find_voices

# en_US-joe-medium: piper_gflop_per_audio_s gives 5.76 (short text), 5.91 (mid), 6.02 (long) and
# 5.95 over all three. 67% is the HiFi-GAN decoder and 21% the flow, both paid per audio frame,
# so the figure barely moves with the text (the text encoder's 11% grows with the text).
# Re-count with `audiopub bench --count-flops`.
JOE_GFLOP_PER_AUDIO_S: Final = 5.95

_COUNTED_OPS: Final = ("Conv", "ConvTranspose", "MatMul", "Gemm")


@dataclass(frozen=True)
class ComputeBound:
    matmul_gflops: float  # this machine, float32, all cores (P)
    matmul_size: int
    model_gflop_per_audio_s: float | None  # F; None when unknown for this engine/voice
    flop_source: str  # where F comes from: a documented constant, a count now, or why none
    basis: str | None  # which measurement the share is computed from ("long", "book", ...)
    measured_chars_per_s: float | None
    chars_per_audio_s: float | None  # c, from the same measurement
    bound_chars_per_s: float | None  # P / (F / c)
    share: float | None  # measured / bound, 0..1


def compute_bound(
    matmul_gflops: float,
    matmul_size: int,
    gflop_per_audio_s: float | None,
    flop_source: str,
    basis: str | None,
    chars_per_s: float | None,
    chars_per_audio_s: float | None,
) -> ComputeBound:
    bound = share = None
    if gflop_per_audio_s and chars_per_audio_s and chars_per_s:
        gflop_per_char = gflop_per_audio_s / chars_per_audio_s
        bound = matmul_gflops / gflop_per_char
        share = chars_per_s / bound
    return ComputeBound(
        round(matmul_gflops, 1),
        matmul_size,
        gflop_per_audio_s,
        flop_source,
        basis,
        _rounded(chars_per_s),
        _rounded(chars_per_audio_s),
        _rounded(bound),
        None if share is None else round(share, 4),
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def model_cost(engine_name: str, voice: str, recount: bool) -> tuple[float | None, str]:
    """F for this engine and voice, and where the figure comes from."""
    # Piper's name compared outside its package: counting operations reads a Piper voice's
    # one ONNX graph (see the top); the other engines' graphs are not counted.
    if engine_name != PIPER.name:
        return None, f"not counted for {engine_name} (its cost depends on steps and model)"
    if voice == settings.DEFAULT_PIPER_VOICE and not recount:
        return JOE_GFLOP_PER_AUDIO_S, "constant JOE_GFLOP_PER_AUDIO_S (ORT profile count)"
    files = find_voices().get(split_speaker(voice)[0])  # every speaker costs the same
    if files is None:
        return None, f"unknown Piper voice {voice!r}"
    value = piper_gflop_per_audio_s(files.model, files.config, list(TEXTS.values()))
    return round(value, 3), "counted now from an ORT profile (--count-flops)"


def piper_gflop_per_audio_s(model: Path, config_path: Path, texts: Sequence[str]) -> float:
    """Count a Piper voice's multiply-adds per second of audio (method: module docstring)."""
    import onnxruntime as ort  # a profiling session: only when counting

    from audiopub.tts.phonemes import phonemize  # phonemizer and eSpeak: only when counting

    config = PiperVoiceConfig.from_dict(json.loads(config_path.read_text("utf-8")))
    with tempfile.TemporaryDirectory(prefix="audiopub-flops-") as folder:
        options = ort.SessionOptions()
        options.enable_profiling = True
        options.profile_file_prefix = str(Path(folder) / "profile")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        # Prepacked weights vanish from the profile's shapes; we need them.
        options.add_session_config_entry("session.disable_prepacking", "1")
        session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        names = {i.name for i in session.get_inputs()}
        samples = 0
        for text in texts:
            ids = phoneme_ids(phonemize(text, config.espeak_voice), config.phoneme_id_map)
            # The same inputs as PiperEngine._speak, at speed 1.
            feeds = {
                "input": np.array([ids], dtype=np.int64),
                "input_lengths": np.array([len(ids)], dtype=np.int64),
                "scales": np.array(
                    [config.noise_scale, config.length_scale, config.noise_w], dtype=np.float32
                ),
            }
            if "sid" in names:
                feeds["sid"] = np.array([0], dtype=np.int64)
            samples += session.run(None, feeds)[0].size
        events = json.loads(Path(session.end_profiling()).read_text("utf-8"))
    return count_flops(events) / 1e9 / (samples / config.sample_rate)


def count_flops(events: Iterable[dict[str, Any]]) -> float:
    """Multiply-add FLOPs of the Conv/ConvTranspose/MatMul/Gemm nodes in an ORT profile."""
    total = 0.0
    for event in events:
        args = event.get("args", {})
        if event.get("cat") != "Node" or args.get("op_name") not in _COUNTED_OPS:
            continue
        inputs = [_shape(entry) for entry in args.get("input_type_shape", [])]
        outputs = [_shape(entry) for entry in args.get("output_type_shape", [])]
        total += _node_flops(args["op_name"], inputs, outputs)
    return total


def _shape(entry: dict[str, list[int]]) -> list[int]:
    return next(iter(entry.values()))  # {"float": [1, 256, 566]}


def _node_flops(op: str, inputs: list[list[int]], outputs: list[list[int]]) -> float:
    if op == "Conv":
        return 2.0 * math.prod(outputs[0]) * math.prod(inputs[1][1:])
    if op == "ConvTranspose":
        return 2.0 * math.prod(inputs[0]) * math.prod(inputs[1][1:])
    return 2.0 * math.prod(outputs[0]) * inputs[0][-1]  # MatMul, Gemm
