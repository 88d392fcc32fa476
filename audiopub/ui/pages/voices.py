"""Voices: every Piper voice, Supertonic release and Kokoro there is to download, and those
installed.

Opening the page asks the Hugging Face Hub for its current list (a few seconds at most; the
copy on this computer otherwise, with a note). Filters by language and quality; a voice shows
its size, speakers and licence. Download runs in the background with a progress bar (bytes,
rate, time left) and can be cancelled; it goes on if the tab is closed. Remove removes what
Audiopub downloaded; Preview speaks a sentence in the voice's language; Use makes an installed
Supertonic release the one Supertonic speaks with (as `audiopub voices use` does).

`/voices?language=de&quality=medium` opens the page filtered (the Convert page links so).
"""

from __future__ import annotations

import logging
import time
from functools import partial
from pathlib import Path

from nicegui import run, ui

from audiopub import figures
from audiopub import settings as defaults
from audiopub.book.scripts import primary_subtag
from audiopub.errors import AudiopubError
from audiopub.tts.registry import engine_info, get_preview_engine
from audiopub.tts.supertonic.releases import choose_release
from audiopub.ui.components.audio_player import AudioPlayer
from audiopub.ui.components.dialogs import confirm
from audiopub.ui.components.voice_rows import RowActions, voice_row
from audiopub.ui.services import Services
from audiopub.ui.theme import frame, section_title
from audiopub.ui.voice_downloads import DownloadState
from audiopub.ui.voice_list import (
    UNFINISHED,
    OnDisk,
    VoiceRow,
    build_rows,
    hub_address,
    installed_now,
    language_names,
    language_options,
    qualities,
    sample,
    visible,
)
from audiopub.voices.catalogue import Catalogue, refresh_catalogue

log = logging.getLogger(__name__)

POLL_S = 0.25  # how often the page looks at the running download


def page(services: Services, language: str = "", quality: str = "") -> None:
    VoicesPage(services, language, quality)


class VoicesPage:
    def __init__(self, services: Services, language: str, quality: str) -> None:
        self.services = services
        self.opened_at = time.time()
        self.rows: list[VoiceRow] = []
        self.catalogue: Catalogue | None = None
        self.endpoint = ""
        self.wanted = (primary_subtag(language)[:16] if language else "", quality[:16])
        self.followed: float | None = None  # start of the download this page shows running
        self.seen: tuple[float, int] | None = None  # the download state last shown
        self.ready = False  # the list is known: filter changes show rows from now on

        with frame(self.services, "Voices", "/voices"):
            with ui.card().classes("ap-card w-full gap-3"):
                section_title("Voices", "record_voice_over")
                ui.label(
                    "Voices to download from the Hugging Face Hub, and those installed. "
                    "A new voice is offered on the Convert page once it is installed."
                ).classes("ap-muted text-sm")
                with ui.row().classes("items-center gap-3").mark("voices-loading") as self.loading:
                    ui.spinner(size="1.5em")
                    ui.label("Asking the Hugging Face Hub for its current list of voices…").classes(
                        "ap-muted"
                    )
                self.note = _banner("ap-warn", "catalogue-note")
                self.source = ui.label().classes("ap-muted text-xs").mark("catalogue-source")
                with ui.row().classes("w-full items-center gap-4"):
                    self.language = (
                        ui.select(
                            {"": "All languages"},
                            value="",
                            label="Language",
                            with_input=True,
                            on_change=self._show_rows,
                        )
                        .classes("w-72")
                        .props("outlined dense")
                        .mark("voice-language")
                    )
                    self.quality = (
                        ui.select(
                            {"": "Any quality", **{grade: grade for grade in qualities()}},
                            value="",
                            label="Quality",
                            on_change=self._show_rows,
                        )
                        .classes("w-40")
                        .props("outlined dense")
                        .mark("voice-quality")
                    )
                    self.count = ui.label().classes("ap-muted text-sm").mark("voice-count")
                self.filter_note = _banner("ap-warn", "filter-note")

            with ui.card().classes("ap-card w-full gap-2").mark("download-panel") as self.panel:
                self.panel_title = ui.label().classes("font-semibold").mark("download-voice")
                self.bar = (
                    ui.linear_progress(value=0, show_value=False, size="10px")
                    .props("rounded")
                    .mark("download-progress")
                )
                with ui.row().classes("w-full items-center gap-4"):
                    self.figures = (
                        ui.label("Starting…")
                        .classes("ap-figure text-sm flex-1")
                        .mark("download-figures")
                    )
                    self.cancel_button = (
                        ui.button("Cancel", icon="close", on_click=self._cancel)
                        .props("outline dense no-caps")
                        .mark("download-cancel")
                    )
            self.panel.set_visibility(False)
            self.message = _banner("", "download-message")
            self.error = _banner("ap-error", "download-error")

            with ui.column().classes("w-full gap-1"):
                self.preview_note = (
                    ui.label().classes("ap-muted text-sm").mark("voice-preview-note")
                )
                self.preview_audio = AudioPlayer("voice-preview-audio")
                self.preview_error = _banner("ap-error", "voice-preview-error")

            with ui.card().classes("ap-card w-full gap-0 p-0"):
                self.list = ui.column().classes("w-full gap-0 px-4").mark("voice-list")

        self.actions = RowActions(self._download, self._preview, self._remove, self._use)
        ui.timer(0.01, self._load, once=True)
        ui.timer(POLL_S, self._poll)

    # --- loading -------------------------------------------------------------------------

    async def _load(self) -> None:
        try:
            catalogue = await run.io_bound(refresh_catalogue)
            have = await run.io_bound(installed_now)
            endpoint = await run.io_bound(hub_address)
            names = await run.io_bound(language_names)
        except Exception as exc:  # a damaged models folder, a bug: a message, not a spinner
            log.exception("listing voices failed")
            self.loading.set_visibility(False)
            _show(self.error, f"The voices could not be listed ({type(exc).__name__}: {exc}).")
            return
        if catalogue is None or have is None or endpoint is None or names is None:  # shutting down
            return
        self.catalogue, self.endpoint = catalogue, endpoint
        self.loading.set_visibility(False)
        _show(self.note, catalogue.note)
        self.source.set_text(f"Listed from {catalogue.source}.")
        self.source.set_visibility(not catalogue.note)  # the note says where the list is from
        self._rebuild(have)
        self.language.set_options(language_options(self.rows, names))
        language, quality = self.wanted
        problems = []
        if language and language not in self.language.options:
            problems.append(f"No voice in the list speaks “{language}”: showing every language.")
            language = ""
        if quality and quality not in qualities():
            problems.append(f"“{quality}” is not a quality ({', '.join(qualities())}).")
            quality = ""
        _show(self.filter_note, " ".join(problems) or None)
        self.language.value, self.quality.value = language, quality
        self.ready = True
        self._show_rows()
        self.list.mark("voice-list", "voice-list-loaded")  # for tests: the list is complete

    def _rebuild(self, have: OnDisk) -> None:
        if self.catalogue is not None:
            self.rows = build_rows(self.catalogue, have, self.endpoint)

    async def _reload_installed(self) -> None:
        have = await run.io_bound(installed_now)
        if have is not None:
            self._rebuild(have)
            self._show_rows()

    def _show_rows(self) -> None:
        if not self.ready:
            return
        shown = visible(self.rows, self.language.value, self.quality.value)
        self.count.set_text(f"{len(shown)} of {len(self.rows)} voices")
        state = self.services.downloads.state()
        downloading = state.voice_id if state is not None and state.running else None
        self.list.clear()
        with self.list:
            if not shown:
                ui.label("No voice matches these filters.").classes("ap-muted py-4").mark(
                    "voice-list-empty"
                )
            for row in shown:
                voice_row(row, self.actions, downloading)

    # --- downloads -----------------------------------------------------------------------

    async def _download(self, row: VoiceRow) -> None:
        _show(self.message, None)
        _show(self.error, None)
        try:
            self.services.downloads.start(row.id)  # returns at once: a thread downloads
        except AudiopubError as exc:
            _show(self.error, str(exc))
            return
        await self._poll()

    def _cancel(self) -> None:
        self.services.downloads.cancel()
        self.cancel_button.props("loading")

    async def _poll(self) -> None:
        state = self.services.downloads.state()
        if state is None or (state.started_at, state.version) == self.seen:
            return
        self.seen = (state.started_at, state.version)
        if state.running:
            if self.followed != state.started_at:  # a new download: rows lose their buttons
                self.followed = state.started_at
                self.cancel_button.props(remove="loading")
                self._show_rows()
            self._show_progress(state)
        elif self.followed == state.started_at or (state.finished_at or 0) >= self.opened_at:
            self.followed = None  # it ended while this page was open: say how
            self.panel.set_visibility(False)
            self._show_outcome(state)
            await self._reload_installed()

    def _show_progress(self, state: DownloadState) -> None:
        self.panel.set_visibility(True)
        self.panel_title.set_text(f"Downloading {state.voice_id}")
        progress = state.progress
        if progress is not None and progress.total_bytes:
            self.bar.set_value(round(progress.done_bytes / progress.total_bytes, 4))
            self.figures.set_text(progress.describe())
        else:
            self.bar.set_value(0)
            self.figures.set_text("Asking the Hub for the files…")

    def _show_outcome(self, state: DownloadState) -> None:
        if state.installed is not None:
            done = state.installed
            what = (
                "was already installed"
                if done.already
                else f"is installed ({figures.size(done.size)})"
            )
            _show(
                self.message,
                f"{done.id} {what}. Preview it below, or choose it on the Convert page.",
            )
        else:
            _show(self.error, state.error or f"Downloading {state.voice_id} failed.")

    # --- remove and preview --------------------------------------------------------------

    async def _remove(self, row: VoiceRow) -> None:
        question = (
            f"Discard the files of the unfinished download of {row.id}?"
            if row.status == UNFINISHED
            else f"Remove {row.id} from this computer?"
        )
        if not await confirm(question, "Discard" if row.status == UNFINISHED else "Remove"):
            return
        _show(self.message, None)
        _show(self.error, None)
        try:
            removed = await run.io_bound(_remove_files, row.id)
        except AudiopubError as exc:
            _show(self.error, str(exc))
            return
        if removed is not None:
            _show(
                self.message,
                f"Removed {row.id}."
                if row.status != UNFINISHED
                else f"Discarded the unfinished download of {row.id}.",
            )
        await self._reload_installed()

    async def _use(self, row: VoiceRow) -> None:
        _show(self.message, None)
        _show(self.error, None)
        try:
            chosen = await run.io_bound(choose_release, row.id)
        except AudiopubError as exc:
            _show(self.error, str(exc))
            return
        if chosen is not None:
            _show(self.message, f"Supertonic speaks with {chosen.id} from now on.")
        await self._reload_installed()

    async def _preview(self, row: VoiceRow) -> None:
        language = (
            row.languages[0]
            if not engine_info(row.engine).multilingual
            else (self.language.value if self.language.value in row.languages else "en")
        )
        text, note = sample(language)
        self.preview_note.set_text(f"{row.name}: “{text}”" + (f" {note}" if note else ""))
        _show(self.preview_error, None)
        await self.preview_audio.speak(
            _speak,
            self.services,
            row,
            text,
            language,
            show=partial(_show, self.preview_error),
            failing="The preview failed",
        )


def _remove_files(voice_id: str) -> list[Path]:
    """What `audiopub voices remove` removes for this row (blocking)."""
    # Here, not at the top: it brings in huggingface_hub, which nothing else loads at startup.
    from audiopub.voices.install import remove

    return remove(voice_id)  # its engine's catalogue removes it


def _speak(services: Services, row: VoiceRow, text: str, language: str) -> bytes:
    """`text` in the row's voice (blocking); a multilingual engine speaks it as `language`."""
    # Supertonic: its first style; a multi-speaker Piper model: its first speaker.
    voices = get_preview_engine(row.engine).voices()
    voice = next((v.id for v in voices if not row.voice or v.model == row.voice), row.voice or "")
    spoken_as = language if engine_info(row.engine).multilingual else None
    return services.previews.say(
        [text],
        row.engine,
        voice,
        defaults.DEFAULT_SPEED,
        defaults.DEFAULT_STEPS,
        language=spoken_as,
    )


def _banner(kind: str, marker: str) -> ui.label:
    label = ui.label().classes(f"ap-banner {kind}").mark(marker)
    label.set_visibility(False)
    return label


def _show(label: ui.label, text: str | None) -> None:
    label.set_text(text or "")
    label.set_visibility(bool(text))
