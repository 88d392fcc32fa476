"""Kokoro's catalogue as the voice library asks for it (`EngineInfo.downloads`): one download,
`kokoro`, that brings the model and every voice.

What brings the Hub client (`install`) is imported when a download or a fresh list runs, so
listing what is installed never loads it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from audiopub.book.scripts import primary_subtag
from audiopub.tts.downloads import DOWNLOADED, STAGING, YOURS, Installed
from audiopub.tts.engine_info import Listing, Offer, Suggested, matches_language
from audiopub.tts.kokoro.files import LANGUAGES, VARIANTS, KokoroFiles, default_folder, language_of
from audiopub.tts.kokoro.repository import (
    KOKORO_ID,
    KOKORO_REPO,
    RECORD,
    describe_voice,
    kokoro_index,
)

if TYPE_CHECKING:
    from audiopub.tts.hub import Progress

ENGINE: Final = "kokoro"
LANGUAGE_CODES: Final = tuple(dict.fromkeys(primary_subtag(tag) for tag, _ in LANGUAGES.values()))


class KokoroDownloads:
    variants: tuple[str, ...] = tuple(VARIANTS)
    qualities: tuple[str, ...] = ()

    def source(self) -> str | None:
        return None  # its voice list is asked for by `listing` itself

    def refresh(self, timeout_s: float) -> None:
        pass  # `listing` asks the Hub for its voices

    def language_names(self) -> Mapping[str, tuple[str, str]]:
        return {}

    def origin(self) -> str | None:
        """Where the installed model came from; None when no model and voices are there."""
        folder = default_folder()
        files = KokoroFiles(folder)
        if not (files.variants() and files.voice_names()):
            return None
        return DOWNLOADED if (folder / RECORD).is_file() else YOURS

    def unfinished(self) -> list[str]:
        # Staged beside its folder, which AUDIOPUB_KOKORO_DIR may put outside models/.
        staging = default_folder().parent / STAGING / KOKORO_ID
        return [KOKORO_ID] if staging.is_dir() else []

    def offers(self) -> Sequence[Offer]:
        origin = self.origin()
        return [
            Offer(
                KOKORO_ID,
                ENGINE,
                "Kokoro-82M",
                LANGUAGE_CODES,
                "Every voice, each reading " + ", ".join(LANGUAGE_CODES),
                installed=origin,
                unfinished=bool(self.unfinished()),
                licence_path=KOKORO_REPO,
                voice="" if origin else None,
            )
        ]

    def sizes(self, timeout_s: float) -> Mapping[str, int]:
        return {}  # the model's size depends on the variant: none is shown

    def notes(self) -> list[str]:
        return []

    def listing(
        self, language: str | None, ask_hub: bool, sizes: Mapping[str, int]
    ) -> Listing | None:
        from audiopub.tts.kokoro.install import kokoro_voices  # the Hub client: see the top

        kokoro = kokoro_voices(ask_hub=ask_hub)
        wanted = [
            name
            for name in kokoro.voices
            if language is None or matches_language(language, [language_of(name)[0]])
        ]
        if not wanted:
            return None
        installed = set(KokoroFiles(default_folder()).voice_names())
        lines = []
        for name in wanted:
            tag, gender = describe_voice(name)
            mark = "installed" if name in installed else ""
            lines.append(f"{name:40} {tag:8} {gender:7} {mark}".rstrip())
        return Listing(
            f"Kokoro voices ({len(wanted)}, from {kokoro.source}; "
            "`audiopub voices download kokoro` installs them all):",
            tuple(lines),
            KOKORO_ID,
        )

    def suggest(self, tag: str) -> Suggested | None:
        primary = primary_subtag(tag)
        region = tag.replace("_", "-").lower()
        voices = {
            name: language.lower()
            for name, (language, _) in kokoro_index().items()
            if primary_subtag(language) == primary
        }
        if not voices:
            return None
        files = KokoroFiles(default_folder())
        installed = set(files.voice_names()) if files.variants() else set()
        name = min(
            voices,
            key=lambda voice: (
                voice not in installed,
                voices[voice] != region and "-" in region,
                voice,
            ),
        )
        return Suggested(name, KOKORO_ID, name in installed, whole_model=True)

    def owns(self, download_id: str) -> bool:
        return download_id.strip() == KOKORO_ID

    def install(
        self,
        download_id: str,
        revision: str | None,
        variant: str | None,
        on_progress: Callable[[Progress], None] | None,
        cancel: threading.Event | None,
    ) -> Installed:
        from audiopub.tts.kokoro.install import install_kokoro  # the Hub client: see the top

        return install_kokoro(revision, variant, on_progress, cancel)

    def how_to_speak(self, installed: Installed) -> str:
        return (
            "Speak with it: audiopub convert BOOK.epub --engine kokoro --voice VOICE "
            "(`audiopub voices` lists them)"
        )

    def remove(self, download_id: str) -> list[Path]:
        from audiopub.tts.kokoro.install import remove_kokoro  # the Hub client: see the top

        return remove_kokoro()
