"""Kokoro-82M's files as the Hub repository `onnx-community/Kokoro-82M-v1.0-ONNX` lays them out,
its voices (style vectors) and voice mixes.

    <models>/kokoro/onnx/model_quantized.onnx   int8 (best on the CPU; no CUDA kernels)
    <models>/kokoro/onnx/model.onnx             fp32    (onnx/model_fp16.onnx: fp16)
    <models>/kokoro/tokenizer.json              the phoneme vocabulary, {"model": {"vocab"}}
    <models>/kokoro/voices/<name>.bin           raw little-endian float32, 510 × 1 × 256

A voice is 510 style rows, one per phoneme count: a text of n phonemes is spoken with row
n - 1 (as the reference pipeline picks it). A voice's name says its language (first letter)
and gender (second letter): `af_heart` is American English, female. A mix,
"af_heart:0.6+bf_emma:0.4", is the weighted sum of its voices' vectors.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final

import numpy as np

from audiopub import settings
from audiopub.errors import EngineUnavailable, ModelMissing
from audiopub.tts.engine import VoiceGender
from audiopub.tts.kokoro.environment import DIR

SAMPLE_RATE: Final = 24_000
STYLE_ROWS: Final = 510  # also the model's phoneme window: 512 positions less the two pads
STYLE_WIDTH: Final = 256
TOKENIZER: Final = "tokenizer.json"
CONFIG: Final = "config.json"
VOICES: Final = "voices"
# Variant → the model file in the repository. int8 first: the one the CPU runs best.
VARIANTS: Final = {
    "int8": "onnx/model_quantized.onnx",
    "fp32": "onnx/model.onnx",
    "fp16": "onnx/model_fp16.onnx",
}
# The int8 graph's ConvInteger/MatMulInteger/DynamicQuantizeLinear have no CUDA kernels.
GPU_PREFERENCE: Final = ("fp32", "fp16", "int8")
CPU_PREFERENCE: Final = ("int8", "fp32", "fp16")
MIX_SEPARATOR: Final = "+"
WEIGHT_SEPARATOR: Final = ":"

# The first letter of a voice's name: its language as a BCP 47 tag and as espeak-ng's voice.
LANGUAGES: Final = {
    "a": ("en-US", "en-us"),
    "b": ("en-GB", "en-gb"),
    "e": ("es", "es"),
    "f": ("fr-FR", "fr-fr"),
    "h": ("hi", "hi"),
    "i": ("it", "it"),
    "p": ("pt-BR", "pt-br"),
    "j": ("ja", "ja"),
    "z": ("zh", "cmn"),
}
GENDERS: Final = {"f": "female", "m": "male"}


@dataclass(frozen=True)
class KokoroFiles:
    """One Kokoro model folder: the model variants there, its vocabulary, its voices."""

    folder: Path

    def variants(self) -> dict[str, Path]:
        """The model variants present, by name."""
        return {
            name: self.folder / path
            for name, path in VARIANTS.items()
            if (self.folder / path).is_file()
        }

    def model(self, on_gpu: bool, variant: str | None = None) -> tuple[str, Path]:
        """The variant to load (asked for, or the best present for the device) and its file."""
        present = self.variants()
        if variant is not None:
            if variant not in present:
                raise ModelMissing(
                    f"Kokoro's {variant} model ({VARIANTS.get(variant, variant)}) "
                    f"is not in {self.folder}; `audiopub voices download kokoro "
                    f"--variant {variant}` installs it."
                )
            return variant, present[variant]
        for name in GPU_PREFERENCE if on_gpu else CPU_PREFERENCE:
            if name in present:
                return name, present[name]
        raise ModelMissing(
            f"No Kokoro model in {self.folder}; `audiopub voices download kokoro` installs one."
        )

    def vocabulary(self) -> dict[str, int]:
        """Phoneme symbol → token id, from the repository's tokenizer (or a config that holds
        the vocabulary, as the original repository's does)."""
        return _vocabulary(self.folder / TOKENIZER, self.folder / CONFIG)

    def stamp(self) -> tuple[tuple[str, int, int], ...]:
        """Size and modification time of the model variants and vocabulary: an engine loaded
        from files since removed, replaced or joined by a better variant is noticed."""
        paths = [
            *(self.folder / path for path in VARIANTS.values()),
            self.folder / TOKENIZER,
            self.folder / CONFIG,
        ]
        return tuple(
            (path.name, stat.st_size, stat.st_mtime_ns)
            for path in paths
            if (stat := _stat(path)) is not None
        )

    def voice_names(self) -> list[str]:
        folder = self.folder / VOICES
        if not folder.is_dir():
            return []
        return sorted(path.stem for path in folder.glob("*.bin") if path.is_file())

    def voice_path(self, name: str) -> Path:
        return self.folder / VOICES / f"{name}.bin"

    def style(self, name: str) -> np.ndarray:
        """A voice's style rows, [510, 256]."""
        path = self.voice_path(name)
        if not path.is_file():
            available = ", ".join(self.voice_names()) or "none"
            raise EngineUnavailable(f"Unknown Kokoro voice {name!r}; available: {available}")
        stat = path.stat()
        return _read_style(str(path), stat.st_size, stat.st_mtime_ns)


def default_folder() -> Path:
    """Where Kokoro's files are: AUDIOPUB_KOKORO_DIR, or `kokoro` in the models folder."""
    # Asked without arguments by the registry (`EngineInfo.default_model_dir`) and the
    # installer for every caller: read from the settings in force, as the models folder is.
    override = DIR.read()
    return override if override is not None else settings.models_dir() / "kokoro"


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


@lru_cache(maxsize=64)
def _read_style(path: str, size: int, mtime_ns: int) -> np.ndarray:
    """The file's vectors (cached per file version: size and mtime are part of the key)."""
    expected = STYLE_ROWS * STYLE_WIDTH * 4
    if size != expected:
        raise ModelMissing(
            f"{path} is {size:,} bytes, not a Kokoro voice ({STYLE_ROWS} × 1 × "
            f"{STYLE_WIDTH} float32: {expected:,} bytes)"
        )
    rows = np.fromfile(path, dtype="<f4").reshape(STYLE_ROWS, STYLE_WIDTH)
    rows.setflags(write=False)
    return rows


def _vocabulary(tokenizer: Path, config: Path) -> dict[str, int]:
    for path, keys in ((tokenizer, ("model", "vocab")), (config, ("vocab",))):
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text("utf-8"))
            for key in keys:
                data = data[key]
            vocab = {str(symbol): int(token) for symbol, token in data.items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ModelMissing(f"{path} holds no Kokoro vocabulary ({exc})") from exc
        if vocab:
            return vocab
    raise ModelMissing(
        f"No Kokoro vocabulary: neither {tokenizer} nor {config} has one; "
        "`audiopub voices download kokoro` installs it."
    )


def language_of(name: str) -> tuple[str, str]:
    """(BCP 47 tag, espeak-ng voice) of a voice by its first letter; English if unknown."""
    return LANGUAGES.get(name[:1].lower(), LANGUAGES["a"])


def gender_of(name: str) -> VoiceGender | None:
    """A voice's gender by its second letter ("af_heart": female), None if it names none."""
    letter = name[1:2].lower()
    return "female" if letter == "f" else "male" if letter == "m" else None


def describe(name: str) -> str:
    """ "jm_kumo (ja, male)"."""
    gender = GENDERS.get(name[1:2].lower(), "")
    return f"{name} ({', '.join(filter(None, [language_of(name)[0], gender]))})"


@dataclass(frozen=True)
class VoiceMix:
    """A voice, or several blended: (name, weight) pairs whose weights sum to 1."""

    parts: tuple[tuple[str, float], ...]

    @property
    def first(self) -> str:
        """The voice whose language the mix speaks in: the heaviest (the first of equals)."""
        return max(self.parts, key=lambda part: part[1])[0]

    def style(self, files: KokoroFiles) -> np.ndarray:
        """The weighted sum of the voices' style rows."""
        total = np.zeros((STYLE_ROWS, STYLE_WIDTH), dtype=np.float64)
        for name, weight in self.parts:
            total += weight * files.style(name)
        return total.astype(np.float32)


def parse_mix(voice: str) -> VoiceMix:
    """ "af_heart", "af_heart:0.6+bf_emma:0.4" or "af_heart+bf_emma" (equal shares) as a mix;
    EngineUnavailable says what is wrong with it."""
    pieces = [piece.strip() for piece in voice.split(MIX_SEPARATOR)]
    if not voice.strip() or any(not piece for piece in pieces):
        raise EngineUnavailable(
            f"Kokoro voice {voice!r} is empty or has an empty part; write "
            "one voice (af_heart) or a mix (af_heart:0.6+bf_emma:0.4)."
        )
    names, weights = [], []
    for piece in pieces:
        name, separator, weight = piece.partition(WEIGHT_SEPARATOR)
        names.append(name.strip())
        weights.append(_weight(weight, voice) if separator else None)
    if len(set(names)) != len(names):
        raise EngineUnavailable(f"Kokoro voice mix {voice!r} names a voice twice.")
    if all(weight is None for weight in weights):
        return VoiceMix(tuple((name, 1 / len(names)) for name in names))
    if any(weight is None for weight in weights):
        raise EngineUnavailable(
            f"Kokoro voice mix {voice!r}: give every voice a weight "
            "(af_heart:0.6+bf_emma:0.4), or none for equal shares."
        )
    given = [float(w) for w in weights if w is not None]
    if not math.isclose(sum(given), 1.0, abs_tol=1e-3):
        raise EngineUnavailable(
            f"Kokoro voice mix {voice!r}: the weights add up to {sum(given):g}, not 1."
        )
    return VoiceMix(tuple(zip(names, given, strict=True)))


def _weight(text: str, voice: str) -> float:
    try:
        weight = float(text)
    except ValueError:
        weight = math.nan
    if not (math.isfinite(weight) and 0 < weight <= 1):
        raise EngineUnavailable(
            f"Kokoro voice mix {voice!r}: {text.strip()!r} is not a weight "
            "(a number above 0, at most 1)."
        )
    return weight


def vocabulary_symbols(vocab: Mapping[str, int]) -> frozenset[str]:
    """The phonemes a lexicon may give (the pad `$` is none)."""
    return frozenset(symbol for symbol, token in vocab.items() if token != 0)
