"""A Supertonic model directory on disk: finding, checking and reading its files.

Official layout (the Hugging Face release; the GitHub examples clone it into `assets/`):

    onnx/{duration_predictor,text_encoder,vector_estimator,vocoder}.onnx
    onnx/tts.json, onnx/unicode_indexer.json
    voice_styles/*.json

Nothing is downloaded: a missing or half-downloaded directory raises ModelMissing with a
message naming what is wrong and where the files go.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from audiopub.errors import EngineUnavailable, ModelMissing
from audiopub.tts.supertonic.environment import DIR

GRAPHS: Final = ("duration_predictor", "text_encoder", "vector_estimator", "vocoder")
CONFIG_FILE: Final = "tts.json"
INDEXER_FILE: Final = "unicode_indexer.json"
LAYOUTS: Final = (Path("."), Path("assets"))
_LFS_POINTER: Final = b"version https://git-lfs.github.com/spec/v1"


@dataclass(frozen=True)
class SupertonicConfig:
    """The parts of `tts.json` inference needs."""

    sample_rate: int
    base_chunk_size: int  # waveform samples per autoencoder frame
    chunk_compress_factor: int  # autoencoder frames folded into one latent frame
    latent_dim: int

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SupertonicConfig:
        return cls(
            sample_rate=int(data["ae"]["sample_rate"]),
            base_chunk_size=int(data["ae"]["base_chunk_size"]),
            chunk_compress_factor=int(data["ttl"]["chunk_compress_factor"]),
            latent_dim=int(data["ttl"]["latent_dim"]),
        )

    @property
    def latent_channels(self) -> int:
        return self.latent_dim * self.chunk_compress_factor

    @property
    def samples_per_frame(self) -> int:
        return self.base_chunk_size * self.chunk_compress_factor


@dataclass(frozen=True)
class Style:
    """A voice: style vectors for the text-to-latent graphs and the duration predictor."""

    ttl: np.ndarray  # float32 [1, 50, 256]
    dp: np.ndarray  # float32 [1, 8, 16]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Style:
        """The release's format: {"style_ttl": {"dims": [...], "data": [...]}, "style_dp": …}."""

        def tensor(key: str) -> np.ndarray:
            values = np.asarray(data[key]["data"], dtype=np.float32)
            return values.reshape([int(d) for d in data[key]["dims"]])

        return cls(ttl=tensor("style_ttl"), dp=tensor("style_dp"))

    def repeated(self, batch: int) -> Style:
        return Style(np.repeat(self.ttl, batch, axis=0), np.repeat(self.dp, batch, axis=0))


def is_lfs_pointer(path: Path) -> bool:
    """A Git LFS pointer: what a clone without `git lfs` holds instead of the real file."""
    with path.open("rb") as file:
        return file.read(len(_LFS_POINTER)) == _LFS_POINTER


@dataclass(frozen=True)
class ModelFiles:
    """Where a model directory keeps its graphs, config, indexer and voices."""

    onnx_dir: Path
    voices_dir: Path

    @classmethod
    def locate(cls, model_dir: Path) -> ModelFiles:
        """Find the files in either layout, or raise ModelMissing saying what is wrong."""
        files = cls.unchecked(model_dir)
        base = files.onnx_dir.parent
        missing = [path for path in files.required() if not path.is_file()]
        pointers = [path for path in files.required() if path.is_file() and is_lfs_pointer(path)]
        if not files.voices_dir.is_dir() or not any(files.voices_dir.glob("*.json")):
            missing.append(files.voices_dir / "*.json")
        if missing or pointers:
            raise ModelMissing(_missing_message(model_dir, base, missing, pointers))
        return files

    @classmethod
    def unchecked(cls, model_dir: Path) -> ModelFiles:
        """Where the files would be: the layout whose onnx/ folder exists (else the plain one)."""
        base = next(
            (model_dir / layout for layout in LAYOUTS if (model_dir / layout / "onnx").is_dir()),
            model_dir,
        )
        return cls(base / "onnx", base / "voice_styles")

    def required(self) -> list[Path]:
        return [
            *(self.graph(name) for name in GRAPHS),
            self.onnx_dir / CONFIG_FILE,
            self.onnx_dir / INDEXER_FILE,
        ]

    def graph(self, name: str) -> Path:
        return self.onnx_dir / f"{name}.onnx"

    def read_json(self, name: str) -> Any:
        path = self.onnx_dir / name
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ModelMissing(
                f"{path} is not readable JSON ({exc}); "
                "replace it with the official file (see models/README.md)"
            ) from exc

    def voice_paths(self) -> list[Path]:
        # Listed on every call, so style files dropped in the folder show up at once.
        return sorted(self.voices_dir.glob("*.json"))

    def voice_path(self, voice: str) -> Path:
        path = self.voices_dir / f"{voice}.json"
        if path.parent != self.voices_dir or not path.is_file():  # also refuses "../x"
            available = ", ".join(item.stem for item in self.voice_paths()) or "none"
            raise EngineUnavailable(
                f"Supertonic has no voice {voice!r} in {self.voices_dir}; available: {available}"
            )
        return path


def folder_stamp(model_dir: Path) -> tuple[tuple[str, int, int], ...] | None:
    """Size and modification time of the model's graphs, config and indexer, in whichever
    layout they are; None when any is missing. A few stats: cheap enough for every lookup, so
    an engine loaded from files since removed or replaced is noticed."""
    stamps = []
    for path in ModelFiles.unchecked(model_dir).required():
        try:
            stat = path.stat()
        except OSError:
            return None
        stamps.append((path.name, stat.st_size, stat.st_mtime_ns))
    return tuple(stamps)


def read_style(path: Path) -> Style:
    if is_lfs_pointer(path):
        raise ModelMissing(
            f"{path} is a Git LFS pointer, not a voice style: "
            "run `git lfs pull` in that clone or download the file"
        )
    try:
        return Style.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (
        OSError,
        UnicodeDecodeError,
        json.JSONDecodeError,
        KeyError,
        TypeError,
        ValueError,
    ) as exc:
        raise EngineUnavailable(f"{path} is not a Supertonic voice style ({exc!r})") from exc


def fits(shape: tuple[int, ...], expected: list[int | str]) -> bool:
    """Whether a style tensor (batch 1) fits a graph input; named dimensions fit anything."""
    if len(shape) != len(expected) or shape[0] != 1:
        return False
    return all(
        not isinstance(want, int) or want == got
        for want, got in zip(expected[1:], shape[1:], strict=True)
    )


def _missing_message(model_dir: Path, base: Path, missing: list[Path], pointers: list[Path]) -> str:
    def names(paths: list[Path]) -> str:
        return ", ".join(str(path.relative_to(base)) for path in paths)

    lines = [f"The Supertonic model in {model_dir} is missing or incomplete."]
    if missing:
        lines.append(f"  Missing: {names(missing)}")
    if pointers:
        lines.append(
            f"  Git LFS pointer files instead of the real weights: {names(pointers)} "
            "(run `git lfs install && git lfs pull` in that clone, or download the files)"
        )
    lines.append(
        "Expected: onnx/duration_predictor.onnx, onnx/text_encoder.onnx, "
        "onnx/vector_estimator.onnx, onnx/vocoder.onnx, onnx/tts.json, "
        "onnx/unicode_indexer.json and voice_styles/<voice>.json."
    )
    lines.append(
        f"Put the official Supertonic files in {model_dir} (see models/README.md), "
        f"or set {DIR.env} to the folder that holds them."
    )
    return "\n".join(lines)
