"""What is on this computer to speak with, and where each voice came from. No network."""

from __future__ import annotations

from dataclasses import dataclass

from audiopub import settings
from audiopub.tts.downloads import BUILT_IN, DOWNLOADED, YOURS
from audiopub.tts.piper import PIPER
from audiopub.tts.piper.files import find_voices
from audiopub.tts.registry import downloads
from audiopub.voices.install import PIPER_RECORD, piper_dir

__all__ = ["BUILT_IN", "DOWNLOADED", "YOURS"]  # where the pages have always found them


@dataclass(frozen=True)
class PiperVoice:
    id: str  # what `--voice` takes
    language: str  # de-DE
    origin: str  # BUILT_IN, DOWNLOADED or YOURS
    size: int


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


def installed_ids() -> set[str]:
    """Ids as the catalogues name them (`piper:KEY`, `supertonic-3`), to mark the installed."""
    ids = {f"piper:{voice.id}" for voice in piper_voices()}
    ids |= {offer.id for found in downloads() for offer in found.offers() if offer.installed}
    return ids
