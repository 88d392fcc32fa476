"""Downloading a voice or model into the models folder, and removing it again: the one door
for every engine's downloads. An engine that declares its own catalogue
(`EngineInfo.downloads`: Supertonic's releases, Kokoro) fetches and removes its own; a voice
of Piper's index, which the voice library lists (`catalogue`), is fetched by the Piper
engine's downloads (`tts.piper.downloads`).

Where files go: the folders the engines already read, so a downloaded voice is found by the
same lookup as one a person copied there, with no second search path to keep in sync. Files
are fetched into a staging folder beside their destination, `<folder>/.downloads/<id>/`, and
checked there before they are moved into place with renames on the same filesystem, so a
half-downloaded voice never appears as installed. Why not the user's Hugging Face cache:
models would then live in two places (the cache and models/) or be symlinks into a cache that
`huggingface-cli delete-cache` can empty under Audiopub's feet; the cache is still read, so a
file already there is copied instead of downloaded again.

When a download is interrupted (Ctrl-C, cancel, lost connection), the files already complete
stay in the staging folder and the same command continues from them; any other failure removes
the staging folder. `remove` removes only what Audiopub downloaded (it has a record).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from audiopub import settings
from audiopub.errors import AudiopubError, VoiceNotFound
from audiopub.tts import hub
from audiopub.tts.downloads import STAGING, Installed
from audiopub.tts.piper.downloads import (
    first_voice,
    install_piper,
    piper_dir,
    piper_key,
    remove_piper,
)
from audiopub.tts.registry import downloads_owning
from audiopub.voices.catalogue import local_catalogue


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
        f"{first_voice(installed.id.split(':', 1)[1], installed.path)}"
    )


# --- removing ----------------------------------------------------------------------------


def remove(voice_id: str) -> list[Path]:
    """Remove a downloaded voice or model (and any unfinished download of it); the paths
    removed. Voices Audiopub did not download are left alone: VoiceNotFound says so."""
    owner = downloads_owning(voice_id)
    if owner is not None:
        return owner.remove(voice_id)
    return remove_piper(voice_id)


def unfinished_downloads() -> list[str]:
    """Downloads interrupted before they finished: their names, to continue or discard."""
    names = []
    for folder in (piper_dir() / STAGING, settings.models_dir() / STAGING):
        if folder.is_dir():
            names += sorted(p.name for p in folder.iterdir() if p.is_dir())
    return names
