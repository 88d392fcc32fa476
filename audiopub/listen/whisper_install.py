"""Listening models from the Hub: `whisper:<size>` is `Systran/faster-whisper-<size>`, installed
into <models>/whisper-<size>/ (see whisper_files for which of its files, and why).

As for every download: the files are fetched and checked (size, the Hub's SHA-256 for LFS
files) in a staging folder, an interrupted download continues from the files already complete,
and the folder appears whole by one rename, so a half-downloaded model is never found.
`remove_whisper` removes only a folder Audiopub downloaded (it holds the record).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

from audiopub import settings
from audiopub.atomic import atomic_write
from audiopub.errors import DownloadFailed, VoiceNotFound
from audiopub.listen.whisper_files import (
    OPTIONAL,
    PREFIX,
    RECORD,
    REQUIRED,
    SIZES,
    VOCABULARIES,
    is_complete,
    model_folder,
    repo_of,
    size_of,
)
from audiopub.tts import hub
from audiopub.tts.downloads import (
    STAGING,
    Installed,
    download,
    download_record,
    folder_size,
    remove_downloaded_folder,
    staging_folder,
)


def _size(model_id: str) -> str:
    size = size_of(model_id)
    if size is None:
        raise VoiceNotFound(
            f"There is no listening model {model_id!r}; choose one of "
            f"{', '.join(PREFIX + s for s in SIZES)}."
        )
    return size


def wanted(paths: set[str]) -> list[str]:
    """The repository's files Audiopub downloads: the required ones, its vocabulary (the
    first of vocabulary.txt / vocabulary.json it has) and the optional ones it has."""
    vocabulary = [name for name in VOCABULARIES if name in paths][:1]
    return [*REQUIRED, *vocabulary, *(name for name in OPTIONAL if name in paths)]


def install_whisper(
    model_id: str,
    revision: str | None = None,
    on_progress: Callable[[hub.Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Installed:
    """Download `whisper:<size>` (at `revision`, default main) into the models folder."""
    size = _size(model_id)
    model_id, repo, revision = f"{PREFIX}{size}", repo_of(size), revision or "main"
    target = model_folder(size)
    if target.exists():
        if not is_complete(target):
            raise DownloadFailed(
                f"{target} exists but is not a complete listening model; move "
                f"it away (or `audiopub voices remove {model_id}` if Audiopub "
                "downloaded it) and try again."
            )
        return Installed(model_id, target, folder_size(target), already=True)
    _, listing = hub.repo_files(repo, revision)
    by_path = {file.path: file for file in listing}
    names = wanted(set(by_path))
    missing = [name for name in names if name not in by_path]
    if missing or not any(name in by_path for name in VOCABULARIES):
        raise DownloadFailed(
            f"{repo} at {revision} is not a listening model Audiopub can read "
            f"(missing: {', '.join(missing) or ' or '.join(VOCABULARIES)})."
        )
    files = [by_path[name] for name in names]
    with staging_folder(settings.models_dir(), target.name) as staging:
        download(repo, files, staging, model_id, on_progress, cancel)
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # huggingface_hub's bookkeeping
        with atomic_write(staging / RECORD) as temp:
            record = download_record(model_id, repo, revision, files, {})
            temp.write_text(json.dumps(record, indent=1), "utf-8")
        if not is_complete(staging):
            raise DownloadFailed(f"The downloaded {model_id} is incomplete.")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(staging, target)  # one rename: the model appears whole or not at all
    return Installed(model_id, target, sum(file.size for file in files))


def remove_whisper(model_id: str) -> list[Path]:
    """Remove a listening model Audiopub downloaded (and any unfinished download of it)."""
    size = _size(model_id)
    target = model_folder(size)
    removed = []
    staging = settings.models_dir() / STAGING / target.name
    if staging.exists():
        shutil.rmtree(staging)
        removed.append(staging)
    return remove_downloaded_folder(
        target, RECORD, removed, VoiceNotFound(f"{PREFIX}{size} is not installed in {target}.")
    )
