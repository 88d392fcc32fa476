"""Whether this machine can proof-listen, and with which listening model.

Asked before anything is spoken (submission, the web page's switch), so a job that wants to
listen and can't says what to install first; `load_listener` loads the model a job hears with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from audiopub import settings as defaults
from audiopub.errors import ListeningUnavailable
from audiopub.listen.listener import Listener
from audiopub.listen.whisper_files import installed_sizes

PREFERRED_MODEL: Final = "base"  # the thresholds were calibrated with it (proof-listening.md)


def listening_model(models_dir: Path | None = None) -> str | None:
    """The installed listening model a job hears with: base where installed (its thresholds
    were calibrated), else the first installed; None when there is none."""
    installed = installed_sizes(models_dir)
    if PREFERRED_MODEL in installed:
        return PREFERRED_MODEL
    return installed[0] if installed else None


def require_listening(models_dir: Path | None = None) -> str:
    """The model a job would hear with, or ListeningUnavailable saying what to install: the
    check made when a person asks for proof-listening, before anything is spoken."""
    try:
        import ctranslate2  # noqa: F401 — what `Listener.load` needs, checked without loading
        import tokenizers  # noqa: F401
    except ImportError as exc:
        raise ListeningUnavailable(
            f"Proof-listening needs the `listen` extra ({exc.name} is not installed): "
            "pip install 'audiopub[listen]'"
        ) from exc
    size = listening_model(models_dir)
    if size is None:
        raise ListeningUnavailable(
            "Proof-listening needs a listening model, and none is "
            "installed: `audiopub voices download whisper:base`."
        )
    return size


def listening_ready(models_dir: Path | None = None) -> bool:
    try:
        require_listening(models_dir)
    except ListeningUnavailable:
        return False
    return True


def load_listener(use_gpu: bool) -> Listener:
    """The listener a job hears with (float16 on a GPU, int8 on the CPU), or
    ListeningUnavailable."""
    size = require_listening()
    return Listener.load(size, use_gpu=use_gpu, models_dir=defaults.models_dir())
