"""A voice for a book's language, named from the voice lists that ship with Audiopub (Piper's
index, and what each engine's own catalogue suggests: Kokoro's voices), for the warning that
a book is not in its voice's language: a person told only "choose a voice in the book's
language" does not know which one, nor how to get it.

No network: the Piper index is the newest on this computer (`catalogue.local_catalogue`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from audiopub import settings
from audiopub.tts.piper import PIPER
from audiopub.tts.piper.downloads import PiperEntry
from audiopub.tts.registry import engine_info, engines
from audiopub.voices.catalogue import Catalogue, local_catalogue

# Piper qualities, most wanted first: medium is what most voices come in (and the embedded
# voice's), high is larger and slower for a small gain.
QUALITY_PREFERENCE: Final = ("medium", "high", "low", "x_low")


@dataclass(frozen=True)
class Suggestion:
    """A voice that reads the book's language, and how to speak with it."""

    engine: str  # the engine's name
    voice: str  # what --voice takes
    download: str  # what `audiopub voices download` takes
    installed: bool
    whole_model: bool = False  # the download is the engine's model, every voice in it (Kokoro)

    def describe(self) -> str:
        """ "piper:fr_FR-siwis-medium (`audiopub voices download …`, then --voice …)"."""
        use = (
            f"--voice {self.voice}"
            if self.engine == settings.DEFAULT_ENGINE
            else f"--engine {self.engine} --voice {self.voice}"
        )
        name = (
            f"{engine_info(self.engine).label}'s {self.voice}"
            if self.whole_model
            else self.download
        )
        if self.installed:
            return f"{name} (installed: {use})"
        return f"{name} (`audiopub voices download {self.download}`, then {use})"


def _primary(tag: str) -> str:
    return tag.strip().replace("_", "-").split("-", 1)[0].lower()


def language_name(tag: str, catalogue: Catalogue | None = None) -> str:
    """ "French" for "fr-FR", as Piper's index names the language; the tag where none does.
    (`catalogue`: one already read, else the local one.)"""
    primary = _primary(tag)
    for entry in (catalogue or local_catalogue()).piper.values():
        if entry.language_family.lower() == primary:
            return entry.language_english
    return tag


def voices_for(tag: str, catalogue: Catalogue | None = None) -> list[Suggestion]:
    """The Piper voice and each other engine's (at most one each, as its catalogue suggests:
    Kokoro's) that best read `tag`'s language: installed first, its region where the tag
    names one, medium quality."""
    found = []
    piper = _best_piper(tag, catalogue or local_catalogue())
    if piper is not None:
        found.append(piper)
    for info in engines():
        suggested = info.downloads.suggest(tag) if info.downloads is not None else None
        if suggested is not None:
            found.append(
                Suggestion(
                    info.name,
                    suggested.voice,
                    suggested.download,
                    suggested.installed,
                    suggested.whole_model,
                )
            )
    return found


def _best_piper(tag: str, catalogue: Catalogue) -> Suggestion | None:
    # Reads the models folder, and brings huggingface_hub (the downloads' records).
    from audiopub.voices.installed import installed_ids

    primary = _primary(tag)
    region = tag.replace("_", "-").lower()
    # One speaker: a multi-speaker model's voice ids name speakers its config lists, which
    # are not known before it is downloaded.
    entries = [
        entry
        for entry in catalogue.piper.values()
        if entry.language_family.lower() == primary and entry.num_speakers == 1
    ]
    if not entries:
        return None
    have = installed_ids()

    def rank(entry: PiperEntry) -> tuple[bool, bool, int, str]:
        return (
            entry.id not in have,
            entry.language.lower() != region and "-" in region,
            _quality_rank(entry.quality),
            entry.key,
        )

    best = min(entries, key=rank)
    return Suggestion(PIPER.name, best.key, best.id, best.id in have)


def _quality_rank(quality: str) -> int:
    return (
        QUALITY_PREFERENCE.index(quality)
        if quality in QUALITY_PREFERENCE
        else len(QUALITY_PREFERENCE)
    )
