"""A voice for a book's language, named from the voice lists that ship with Audiopub (what
each engine's catalogue suggests: Piper's index, Kokoro's voices), for the warning that a book
is not in its voice's language: a person told only "choose a voice in the book's language" does
not know which one, nor how to get it.

No network: each catalogue is the newest on this computer.
"""

from __future__ import annotations

from dataclasses import dataclass

from audiopub import settings
from audiopub.book.scripts import primary_subtag
from audiopub.tts.registry import downloads, engine_info, engines


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


def language_name(tag: str) -> str:
    """ "French" for "fr-FR", as the first catalogue that names the language says; the tag
    where none does."""
    primary = primary_subtag(tag)
    for found in downloads():
        names = found.language_names()
        if primary in names:
            return names[primary][0]
    return tag


def voices_for(tag: str) -> list[Suggestion]:
    """Each engine's voice (at most one each, as its catalogue suggests: installed first, its
    region where the tag names one) that best reads `tag`'s language, in the engines' order."""
    found = []
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
