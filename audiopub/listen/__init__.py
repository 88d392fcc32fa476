"""Hearing speech and judging it: what proof-listening hears with, and nothing of jobs.

    features   Whisper's log-mel input from 16 kHz audio, written from the published definition
    listener   `Listener`: a Whisper model (CTranslate2) transcribing `Clip`s in batches
    judge      `judge`: the chunk's text against what was heard → a `Verdict` by `Thresholds`
    ready      whether this machine can listen, with which model; `load_listener`
    whisper_files, whisper_install
               the listening models (`whisper:<size>`): their folder and files; download
    command    their part of `audiopub voices`: list, download, remove

A job's listening stage and its retakes are the pipeline's (`jobs.proof_listening`,
`jobs.retakes`): they hear through the stage's `Ears`, which a `Listener` is.

CTranslate2 and tokenizers come with the optional extra `listen`
(`pip install 'audiopub[listen]'`); nothing here imports them until a listener is loaded, so
the rest of Audiopub runs without them. Models are `whisper:<size>` in the voice library.
"""

from __future__ import annotations

from pathlib import Path

from audiopub.listen.judge import Thresholds, Verdict, judge
from audiopub.listen.listener import Clip, Listener
from audiopub.listen.whisper_files import installed_sizes


def installed_listening_models(models_dir: Path | None = None) -> list[str]:
    """The listening model sizes installed and complete ("base", …), smallest first."""
    return installed_sizes(models_dir)


__all__ = ["Clip", "Listener", "Thresholds", "Verdict", "installed_listening_models", "judge"]
