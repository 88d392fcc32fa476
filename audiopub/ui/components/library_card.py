"""A finished audiobook: what it is, how it was made, play it (with chapters), download, delete."""

from __future__ import annotations

import bisect
from collections.abc import Awaitable, Callable

from nicegui import events, run, ui

from audiopub import figures as fmt
from audiopub.errors import AudiopubError
from audiopub.export.names import safe_name
from audiopub.export.subtitles import Cue
from audiopub.ui.chosen_forms import chosen, make_downloads
from audiopub.ui.components.dialogs import confirm_delete
from audiopub.ui.components.flagged_list import flagged_rows, flagged_title
from audiopub.ui.components.job_card import settings_summary
from audiopub.ui.jobview import JobView, chapter_starts
from audiopub.ui.services import Services


class LibraryCard:
    def __init__(
        self, services: Services, view: JobView, refresh: Callable[[], Awaitable[None]]
    ) -> None:
        self.services = services
        self.view = view
        self.job_id = view.job.id
        self._refresh = refresh
        self.player: ui.audio | None = None
        job, m = view.job, view.metrics
        with ui.card().classes("ap-card w-full gap-3").mark("book", f"book-{job.id}") as self.card:
            with ui.row().classes("w-full no-wrap gap-4 items-start"):
                with ui.element("div").classes("ap-cover").style("width:5rem;min-width:5rem"):
                    if view.cover is not None:
                        ui.image(f"/library/{job.id}/cover").classes("w-full h-full").props(
                            "fit=cover no-spinner"
                        )
                    else:
                        ui.icon("headphones").classes("text-4xl ap-muted")
                with ui.column().classes("gap-1 flex-1 min-w-0"):
                    ui.label(job.title or "Untitled").classes(
                        "text-base font-semibold truncate"
                    ).mark("book-title")
                    ui.label(job.author or "Unknown author").classes("ap-muted text-sm")
                    size = fmt.size(view.output_bytes) if view.output_bytes else "file missing"
                    ui.label(
                        f"{fmt.clock(view.audio_s)} · {len(view.chapters)} chapters · {size}"
                        f" · finished {fmt.when(job.finished_at)}"
                    ).classes("text-sm ap-figure").mark("book-facts")
                    ui.label(settings_summary(job)).classes("ap-muted text-sm")
                    ui.label(
                        f"{fmt.rate(m.chars_per_s)} · real-time factor {fmt.factor(m.rtf)}"
                        f" ({m.speed.clock.value}, {fmt.SPEAKING_ONLY})"
                        f" · ran on {job.device or 'unknown'}"
                    ).classes("ap-muted text-sm ap-figure").mark("book-speed")
            with ui.row().classes("gap-2"):
                self.play_button = (
                    ui.button("Play", icon="play_arrow", on_click=self._toggle)
                    .props("outline no-caps")
                    .mark("book-play")
                )
                self.play_button.set_enabled(bool(view.output_bytes))
                ui.button(
                    "Download .m4b",
                    icon="download",
                    on_click=lambda: ui.download.from_url(f"/library/{job.id}/download"),
                ).props("unelevated no-caps").mark("book-download")
                with (
                    ui.button("Subtitles", icon="subtitles")
                    .props("flat no-caps")
                    .mark("book-subtitles")
                ):
                    with ui.menu():
                        for fmt_name, label in (("srt", "SubRip (.srt)"), ("vtt", "WebVTT (.vtt)")):
                            ui.menu_item(
                                label, on_click=lambda f=fmt_name: self._subtitles(f)
                            ).mark(f"book-subtitles-{fmt_name}")
                with (
                    ui.button("Export", icon="ios_share")
                    .props("flat no-caps")
                    .mark("book-export") as self.export_button
                ):
                    with ui.menu():
                        for kind, label in (
                            ("epub", "Read-aloud EPUB (highlights as it reads)"),
                            ("mp3-book", "MP3, one file with chapters"),
                            ("mp3", "MP3, a file per chapter (.zip)"),
                            ("m4a", "M4A (AAC), a file per chapter (.zip)"),
                            ("opus", "Opus, a file per chapter (.zip)"),
                            ("audiobookshelf", "Audiobookshelf folder: Author/Title (.zip)"),
                        ):
                            ui.menu_item(label, on_click=lambda k=kind: self._export(k)).mark(
                                f"book-export-{kind}"
                            )
                ui.button("Delete", icon="delete_outline", on_click=self._confirm_delete).props(
                    "flat no-caps"
                ).mark("book-delete")
            if chosen(job) is not None:
                self.forms = ui.row().classes("items-center gap-2").mark("book-forms")
                with self.forms:
                    ui.spinner(size="1.2em")
                    ui.label("Making the forms chosen for this book…").classes("ap-muted")
                ui.timer(0.01, self._show_forms, once=True)
            self.player_box = ui.column().classes("w-full gap-2").mark("book-player")
            self.player_box.set_visibility(False)
            if view.listening is not None:
                ui.label(view.listening.describe()).classes("ap-muted text-sm ap-figure").mark(
                    "book-listening"
                )
            if view.flagged:
                with (
                    ui.expansion(flagged_title(len(view.flagged)))
                    .classes("w-full ap-expansion")
                    .mark("book-flagged")
                ):
                    flagged_rows(view.flagged, self._play_at, marker="book-flagged")

    async def _toggle(self) -> None:
        if self.player is None:
            await self._open_player()
            return
        showing = not self.player_box.visible
        self._show_player(showing)
        if showing:
            self.player.play()
        else:
            self.player.pause()

    async def _open_player(self, start_s: float = 0.0) -> None:
        """Build the player, shown and playing from `start_s`. The new element starts itself
        (autoplay, and a media fragment for where): a play() or seek sent beside it can reach
        the page before the element does, and is then lost."""
        cues = await run.io_bound(self.services.library.book_cues, self.job_id)
        if cues is None:  # the app is shutting down
            return
        self._build_player(cues, start_s)
        self._show_player(True)

    def _show_player(self, showing: bool) -> None:
        self.player_box.set_visibility(showing)
        self.play_button.set_text("Stop" if showing else "Play")
        self.play_button.props(f"icon={'stop' if showing else 'play_arrow'}")

    def _build_player(self, cues: list[Cue], start_s: float) -> None:
        source = f"/library/{self.job_id}/audio"
        if start_s > 0:
            source += f"#t={start_s:.3f}"
        with self.player_box:
            self.player = ui.audio(source, autoplay=True).classes("w-full").mark("book-audio")
            # Read along: the sentence being heard, under the progress bar.
            self.cues, self.cue_starts = cues, [cue.start_s for cue in cues]
            self.sentence = ui.label().classes("ap-read-along w-full").mark("book-sentence")
            self.sentence.set_visibility(bool(cues))
            self.player.on(
                "timeupdate",
                self._show_sentence,
                throttle=0.2,
                js_handler="(event) => emit(event.target.currentTime)",
            )
            with ui.column().classes("w-full gap-0"):
                for number, (title, start) in enumerate(chapter_starts(self.view.chapters), 1):
                    button = (
                        ui.button(on_click=lambda s=start: self._seek(s), color=None)
                        .props("flat no-caps align=left")
                        .classes("w-full")
                        .mark(f"book-chapter-{number}")
                    )
                    with button, ui.row().classes("w-full no-wrap items-center gap-3"):
                        ui.label(f"{number}.").classes("ap-muted w-8 text-left ap-figure")
                        ui.label(title).classes("flex-1 text-left truncate")
                        ui.label(fmt.clock(start)).classes("ap-muted ap-figure")

    async def _show_forms(self) -> None:
        """The forms chosen when the book was converted: made on the first view (from its
        audio), then a download each."""
        try:
            made = await run.io_bound(make_downloads, self.services.store, self.job_id)
        except AudiopubError as exc:
            self.forms.clear()
            with self.forms:
                ui.label(str(exc)).classes("ap-banner ap-error").mark("book-forms-error")
            return
        if made is None:  # the app is shutting down
            return
        self.forms.clear()
        with self.forms:
            for number, download in enumerate(made):
                url = f"/library/{self.job_id}/forms/{number}"
                ui.button(
                    download.name, icon="download", on_click=lambda u=url: ui.download.from_url(u)
                ).props("outline no-caps").mark(f"book-form-{number}")

    def _show_sentence(self, event: events.GenericEventArguments) -> None:
        self.sentence.set_text(sentence_at(self.cues, self.cue_starts, float(event.args)))

    async def _subtitles(self, fmt_name: str) -> None:
        try:
            text = await run.io_bound(self.services.library.subtitles, self.job_id, fmt_name)
        except AudiopubError as exc:
            ui.notify(str(exc), type="warning", multi_line=True)
            return
        if text is None:  # the app is shutting down
            return
        ui.download.content(
            text.encode("utf-8"),
            f"{safe_name(self.view.job.title, 'audiobook')}.{fmt_name}",
            SUBTITLE_MEDIA_TYPES[fmt_name],
        )

    async def _export(self, kind: str) -> None:
        """Made once (seconds to minutes: nothing is spoken again), then downloaded."""
        self.export_button.props("loading")
        try:
            await run.io_bound(self.services.library.export_file, self.job_id, kind)
        except AudiopubError as exc:
            ui.notify(str(exc), type="warning", multi_line=True)
            return
        finally:
            self.export_button.props(remove="loading")
        ui.download.from_url(f"/library/{self.job_id}/export/{kind}")

    async def _play_at(self, seconds: float) -> None:
        """Open the player (if it is closed) and play from `seconds` into the book."""
        if self.player is None:
            await self._open_player(seconds)
            return
        if not self.player_box.visible:
            self._show_player(True)
        self._seek(seconds)

    def _seek(self, seconds: float) -> None:
        if self.player is not None:
            self.player.seek(seconds)
            self.player.play()

    async def _confirm_delete(self) -> None:
        await confirm_delete(
            self.services,
            self.job_id,
            f"Delete “{self.view.job.title}”? The audiobook file is deleted too.",
        )
        await self._refresh()

    def update(self, view: JobView) -> None:
        """A finished book does not change; only its file can go missing."""
        self.view = view
        self.play_button.set_enabled(bool(view.output_bytes))

    def delete(self) -> None:
        self.card.delete()


SUBTITLE_MEDIA_TYPES = {"srt": "application/x-subrip", "vtt": "text/vtt"}


def sentence_at(cues: list[Cue], starts: list[float], seconds: float) -> str:
    """The sentence heard at `seconds`, or the last one heard during the pause after it, so the
    line does not blink between sentences (`starts`: the cues' starts, in order)."""
    index = bisect.bisect_right(starts, seconds) - 1
    return cues[index].text.replace("\n", " ") if index >= 0 else ""
