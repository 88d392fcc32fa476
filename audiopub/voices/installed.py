"""What is on this computer to speak with, and where each voice came from. No network."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from audiopub import settings
from audiopub.errors import ModelMissing
from audiopub.tts.downloads import BUILT_IN, DOWNLOADED, YOURS
from audiopub.tts.piper import PIPER
from audiopub.tts.piper.files import find_voices
from audiopub.tts.supertonic.engine import default_model_dir as active_supertonic_dir
from audiopub.tts.supertonic.files import ModelFiles
from audiopub.voices.catalogue import SUPERTONIC_RELEASES
from audiopub.voices.install import PIPER_RECORD, SUPERTONIC_RECORD, piper_dir, supertonic_dir


@dataclass(frozen=True)
class PiperVoice:
    id: str  # what `--voice` takes
    language: str  # de-DE
    origin: str  # BUILT_IN, DOWNLOADED or YOURS
    size: int


@dataclass(frozen=True)
class SupertonicModel:
    id: str  # the release's id, or the folder's name for one set up by hand
    path: Path
    origin: str
    active: bool  # the folder the Supertonic engine reads (AUDIOPUB_SUPERTONIC_DIR or default)


def piper_voices() -> list[PiperVoice]:
    """The built-in voice, downloaded ones and the user's own, as the Piper engine finds them."""
    folder = piper_dir()
    voices = []
    for files in find_voices(folder).values():
        place = files.model.parent
        if place not in settings.model_folders(PIPER.name):
            origin = BUILT_IN
        elif (place / f"{files.id}{PIPER_RECORD}").is_file():
            origin = DOWNLOADED
        else:
            origin = YOURS
        size = files.model.stat().st_size + files.config.stat().st_size
        voices.append(
            PiperVoice(files.id, files.id.split("-", 1)[0].replace("_", "-"), origin, size)
        )
    return voices


def supertonic_models() -> list[SupertonicModel]:
    """Complete Supertonic models: each release's folder and the engine's own folder."""
    active = active_supertonic_dir().resolve()
    candidates = {supertonic_dir(release).resolve(): release.id for release in SUPERTONIC_RELEASES}
    candidates.setdefault(active, active.name)
    models = []
    for path, name in candidates.items():
        try:
            ModelFiles.locate(path)
        except ModelMissing:
            continue
        origin = DOWNLOADED if (path / SUPERTONIC_RECORD).is_file() else YOURS
        models.append(SupertonicModel(name, path, origin, path == active))
    return models


def installed_ids() -> set[str]:
    """Ids as the catalogue names them (`piper:KEY`, `supertonic-3`), to mark the installed."""
    ids = {f"piper:{voice.id}" for voice in piper_voices()}
    ids |= {model.id for model in supertonic_models()}
    return ids
