"""Downloading model files from the Hub into the models folder, safely: the staging folder
beside the destination, fetching with progress and checks, durable moves into place, records of
what was downloaded, and removing a downloaded folder again.

Every download (a Piper voice, a Supertonic release, Kokoro, a listening model) goes through
these steps; what is fetched and where it is placed is each model's own business. Files are
fetched into `<folder>/.downloads/<name>/` and checked (size, an index's MD5, the Hub's SHA-256)
there, then moved into place by renames on the same filesystem. When a download is
interrupted (Ctrl-C, cancel, lost connection), the files already complete stay in the staging
folder and the next attempt continues from them; any other failure removes it.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import filelock

from audiopub.errors import AudiopubError, DownloadCancelled, DownloadFailed, HubUnreachable

if TYPE_CHECKING:  # for the hints only: the Hub client brings huggingface_hub (see `download`)
    from audiopub.tts import hub

STAGING: Final = ".downloads"

# Where an installed voice or model came from, as the voice lists say it.
BUILT_IN: Final = "built in"
DOWNLOADED: Final = "downloaded"  # Audiopub downloaded it: only these are removed
YOURS: Final = "added by you"


@dataclass(frozen=True)
class Installed:
    """What a download left on disk."""

    id: str
    path: Path  # the voice's .onnx or the model's folder
    size: int
    already: bool = False  # it was installed before: nothing was downloaded


def download(
    repo: str,
    files: list[hub.HubFile],
    staging: Path,
    what: str,
    on_progress: Callable[[hub.Progress], None] | None,
    cancel: threading.Event | None,
    md5: dict[str, str] | None = None,
) -> dict[str, Path]:
    """Fetch and verify every file into `staging`; their local paths by repository path."""
    # The Hub client brings huggingface_hub: imported by what fetches, not by what only looks
    # for downloads (the Voices page's unfinished ones).
    from audiopub.tts import hub

    needed = sum(f.size for f in files if not _complete(staging / f.path, f.size))
    hub.check_space(staging, needed, what)  # before a single byte is fetched
    transfer = hub.Transfer(sum(f.size for f in files), on_progress, cancel)
    staged, done = {}, 0
    for file in files:
        local = hub.fetch(file, repo, staging, transfer)
        hub.verify(local, file, (md5 or {}).get(file.path))
        staged[file.path] = local
        done += file.size
        transfer.finish_file(done)
    return staged


def _complete(path: Path, size: int) -> bool:
    return path.is_file() and path.stat().st_size == size


@contextmanager
def staging_folder(folder: Path, name: str) -> Iterator[Path]:
    """`folder/.downloads/name`, held by this process alone; removed afterwards unless the
    download was interrupted (its finished files are the next attempt's head start)."""
    staging = folder / STAGING / name
    staging.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(staging) + ".lock")
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout as exc:
        raise DownloadFailed(
            f"{name} is already being downloaded (by another Audiopub "
            "process?); wait for it to finish."
        ) from exc
    keep = False
    try:
        yield staging
    except (HubUnreachable, DownloadCancelled, KeyboardInterrupt):
        keep = True
        raise
    finally:
        if not keep:
            shutil.rmtree(staging, ignore_errors=True)
        lock.release()
        Path(lock.lock_file).unlink(missing_ok=True)
        _remove_if_empty(folder / STAGING)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass  # not empty (another download) or already gone


def durable_replace(source: Path, destination: Path) -> None:
    with open(source, "rb+") as handle:  # its bytes on disk before the name says "installed"
        os.fsync(handle.fileno())
    os.replace(source, destination)


def download_record(
    voice_id: str, repo: str, revision: str, files: list[hub.HubFile], md5: dict[str, str]
) -> dict[str, Any]:
    """What was downloaded from where: the origin of an installed voice, kept beside it."""
    from audiopub.tts import hub  # huggingface_hub, as in `download`

    return {
        "id": voice_id,
        "repo": repo,
        "endpoint": hub.endpoint(),
        "revision": revision,
        "commit": files[0].commit if files else None,
        "downloaded": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "files": {
            f.path: {"size": f.size, "sha256": f.sha256, "md5": md5.get(f.path)} for f in files
        },
    }


def folder_size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def remove_downloaded_folder(
    target: Path, record: str, staged: list[Path], not_installed: AudiopubError
) -> list[Path]:
    """Remove a model folder Audiopub downloaded (one that holds its `record` file); `staged`:
    unfinished downloads already removed, which are enough when the folder is not there."""
    if not target.exists():
        if staged:
            return staged
        raise not_installed
    if not (target / record).is_file():
        raise AudiopubError(
            f"{target} was not downloaded by Audiopub (it has no {record}); "
            "delete it yourself if you mean to."
        )
    # Renamed away first, so an engine never finds half a model while it is deleted.
    doomed = target.with_name(f".{target.name}.removing")
    os.rename(target, doomed)
    shutil.rmtree(doomed)
    return [target, *staged]


def discard_staging(folder: Path, name: str) -> list[Path]:
    """Remove the unfinished download `name` in `folder`, if any; the paths removed."""
    staging = folder / STAGING / name
    if not staging.exists():
        return []
    shutil.rmtree(staging)
    _remove_if_empty(folder / STAGING)
    return [staging]
