"""Where the listening models (Whisper, converted for CTranslate2) live and which files make one.

`whisper:<size>` is the Hub repository `Systran/faster-whisper-<size>`, installed into
<models>/whisper-<size>/ in the repository's own layout. Of its files Audiopub reads the
CTranslate2 model, its config, the tokenizer (to name the prompt's tokens and turn the answer
into text), the vocabulary (CTranslate2 will not load a model without it: vocabulary.txt in the
older sizes, vocabulary.json in large-v3) and, where the repository has it (large-v3),
preprocessor_config.json for the number of mel bins. The model card and the rest are not
downloaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from audiopub import settings

SIZES: Final = ("tiny", "base", "small", "medium", "large-v3")
PREFIX: Final = "whisper:"
MODEL: Final = "model.bin"
REQUIRED: Final = (MODEL, "config.json", "tokenizer.json")
VOCABULARIES: Final = ("vocabulary.txt", "vocabulary.json")  # one of them
OPTIONAL: Final = ("preprocessor_config.json",)
RECORD: Final = "audiopub-download.json"  # inside the folder: what Audiopub downloaded


def repo_of(size: str) -> str:
    return f"Systran/faster-whisper-{size}"


def size_of(model_id: str) -> str | None:
    """ "whisper:base" → "base"; None for anything that is not a listening model's id."""
    if not model_id.startswith(PREFIX):
        return None
    size = model_id.removeprefix(PREFIX).strip()
    return size if size in SIZES else None


def model_folder(size: str, models_dir: Path | None = None) -> Path:
    """<models>/whisper-<size>/, whether or not anything is there."""
    return (models_dir or settings.models_dir()) / f"whisper-{size}"


def is_complete(folder: Path) -> bool:
    """Whether the folder holds every file a listening model needs."""
    return all((folder / name).is_file() for name in REQUIRED) and any(
        (folder / name).is_file() for name in VOCABULARIES
    )


def installed_sizes(models_dir: Path | None = None) -> list[str]:
    """The sizes installed and complete, smallest first."""
    return [size for size in SIZES if is_complete(model_folder(size, models_dir))]
