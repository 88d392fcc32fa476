"""Hearing speech and judging it, and a job's proof-listening, which hears with them.

    features   Whisper's log-mel input from 16 kHz audio, written from the published definition
    listener   `Listener`: a Whisper model (CTranslate2) transcribing `Clip`s in batches
    judge      `judge`: the chunk's text against what was heard → a `Verdict` by `Thresholds`
    ready      whether this machine can listen, with which model; `load_listener`
    proof_listening
               a run's listening thread: each chunk made is heard through its `Ears` (a
               `Listener`) and judged, the verdicts kept in the job store
    retakes    the flagged chunks spoken again, the best take kept
    stage      `WhisperListening`: the two above as the jobs' `Listening`, which the web app
               and the command line hand to submission and to the runs
    whisper_files, whisper_install
               the listening models (`whisper:<size>`): their folder and files; download
    command    their part of `audiopub voices`: list, download, remove

Jobs own the interface (`jobs.listening`) and never import this package; of it, only the
stage's three modules import jobs. The listener and the judge know nothing of jobs.

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
