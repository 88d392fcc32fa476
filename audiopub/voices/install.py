"""Downloading a voice or model into the models folder, and removing it again: the one door
for every engine's downloads. Each engine declares its own catalogue (`EngineInfo.downloads`:
Piper's voice index, Supertonic's releases, Kokoro), which fetches and removes its own; an id
without an engine (a voice's key, as people type it) is the default engine's.

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
from audiopub.tts.engine_info import Downloads
from audiopub.tts.registry import downloads, downloads_owning


def install(
    voice_id: str,
    revision: str | None = None,
    on_progress: Callable[[hub.Progress], None] | None = None,
    cancel: threading.Event | None = None,
    variant: str | None = None,
) -> Installed:
    """Download `voice_id` (as `audiopub voices --all` lists it) and install it. `revision` is
    a branch, tag or commit of its Hub repository; `variant` one of the model's variants, for
    an engine that has several (Kokoro's)."""
    owner = _owner(voice_id)
    if variant is not None and variant not in owner.variants:
        has = ", ".join(owner.variants) or "none"
        raise AudiopubError(f"--variant chooses a model's variant: {voice_id} has {has}.")
    return owner.install(voice_id, revision, variant, on_progress, cancel)


def how_to_speak(voice_id: str, installed: Installed) -> str:
    """The line that says how to speak with what `install(voice_id)` installed."""
    return _owner(voice_id).how_to_speak(installed)


def _owner(voice_id: str) -> Downloads:
    """The catalogue `voice_id` is of: the engine's that claims it, else for a bare id the
    default engine's (`piper:KEY` is typed as KEY)."""
    owner = downloads_owning(voice_id)
    bare = ":" not in voice_id
    if owner is None and bare:
        owner = downloads_owning(f"{settings.DEFAULT_ENGINE}:{voice_id.strip()}")
    if owner is not None:
        return owner
    if bare:
        raise VoiceNotFound(f"No voice or model {voice_id!r}: `audiopub voices --all` lists them.")
    raise VoiceNotFound(
        f"Unknown engine {voice_id.strip().partition(':')[0]!r} in {voice_id!r}: use an id "
        "`audiopub voices --all` lists"
    )


# --- removing ----------------------------------------------------------------------------


def remove(voice_id: str) -> list[Path]:
    """Remove a downloaded voice or model (and any unfinished download of it); the paths
    removed. Voices Audiopub did not download are left alone: VoiceNotFound says so."""
    return _owner(voice_id).remove(voice_id)


def unfinished_downloads() -> list[str]:
    """Downloads interrupted before they finished: their ids, to continue or discard. Each
    engine's, then the rest of the models folder's (a listening model's)."""
    names = [name for found in downloads() for name in found.unfinished()]
    staging = settings.models_dir() / STAGING
    if staging.is_dir():
        names += sorted(p.name for p in staging.iterdir() if p.is_dir() and p.name not in names)
    return names
