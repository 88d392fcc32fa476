"""One job: state, where it really runs, overall and per-chapter progress, figures, log, controls.

The card is built once and then updated in place from `JobView`s, so an open log or chapter
list does not collapse at every refresh.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from nicegui import run, ui

from audiopub import figures as fmt
from audiopub.errors import AudiopubError
from audiopub.jobs.models import ChapterProgress, ChapterState, Job, JobState
from audiopub.tts import registry
from audiopub.ui.chosen_forms import chosen, describe
from audiopub.ui.components.dialogs import confirm_delete
from audiopub.ui.components.flagged_list import flagged_rows, flagged_title
from audiopub.ui.engine_catalog import engine_label
from audiopub.ui.jobview import (
    RTF_LABEL,
    SPEED_LABEL,
    STARTUP_LABEL,
    JobView,
    chapter_figures,
)
from audiopub.ui.services import Services
from audiopub.ui.theme import stat

STATE_TEXT = {
    JobState.QUEUED: "Queued",
    JobState.RUNNING: "Running",
    JobState.PAUSED: "Paused",
    JobState.DONE: "Done",
    JobState.FAILED: "Failed",
    JobState.CANCELLED: "Cancelled",
}


# The engines whose voices sound different in more or fewer steps.

# While the worker finishes the chunk in hand after a pause or cancel.
STOPPING_TEXT = {JobState.PAUSED: "Pausing…", JobState.CANCELLED: "Cancelling…"}


def _uses_steps(engine: str) -> bool:
    """Whether the engine takes steps; one no longer offered is not asked."""
    return any(info.name == engine and info.uses_steps for info in registry.engines())


def settings_summary(job: Job) -> str:
    s = job.settings
    parts = [engine_label(s.engine), s.voice or "default voice", f"{s.speed:.2f}×"]
    if _uses_steps(s.engine):  # steps an engine ignores would suggest otherwise
        parts.append(f"{s.steps} steps")
    parts.append("GPU requested" if s.use_gpu else "CPU")
    if s.chapters:
        count = len(s.chapters)
        parts.append(f"{count} chapter{'' if count == 1 else 's'} chosen")
    return " · ".join(parts)


def device_text(view: JobView) -> str:
    job = view.job
    where = (view.live_provider if job.state is JobState.RUNNING else None) or job.device
    if where is None:
        return "Device: chosen when the job starts"
    return f"{'Runs' if job.state is JobState.RUNNING else 'Ran'} on: {where}"


class JobCard:
    def __init__(
        self, services: Services, view: JobView, refresh: Callable[[], Awaitable[None]]
    ) -> None:
        self.services = services
        self.job_id = view.job.id
        self._refresh = refresh
        self._log_seen = 0
        self._chapter_rows: list[_ChapterRow] = []
        self._chapter_titles: tuple[str, ...] = ()
        self._flagged: tuple[object, ...] = ()
        job = view.job

        with ui.card().classes("ap-card w-full gap-3").mark("job", f"job-{job.id}") as self.card:
            with ui.row().classes("w-full items-start no-wrap gap-3"):
                with ui.column().classes("gap-0 flex-1 min-w-0"):
                    ui.label(job.title or "Untitled").classes(
                        "text-base font-semibold truncate"
                    ).mark("job-title")
                    ui.label(job.author or "Unknown author").classes("ap-muted text-sm")
                self.state = ui.label().classes("ap-chip").mark("job-state")
            ui.label(settings_summary(job)).classes("ap-muted text-sm").mark("job-settings")
            if job.settings.cast is not None:  # read in a cast of voices (`convert --cast`)
                ui.label(f"cast: {job.settings.cast.summary()}").classes("ap-muted text-sm").mark(
                    "job-cast"
                )
            if view.language_note:
                ui.label(view.language_note).classes("ap-banner ap-warn text-sm").mark(
                    "job-language-note"
                )
            self.device = ui.label().classes("text-sm").mark("job-device")
            self.stage = ui.label().classes("text-sm").mark("job-stage")
            with ui.row().classes("w-full items-center no-wrap gap-3"):
                self.bar = (
                    ui.linear_progress(value=0, show_value=False)
                    .props("rounded size=8px")
                    .classes("flex-1")
                    .mark("job-progress")
                )
                self.percent = ui.label().classes("ap-figure w-12 text-right").mark("job-percent")
            self.chars = ui.label().classes("ap-muted text-sm ap-figure").mark("job-chars")
            self.listening = ui.label().classes("ap-muted text-sm ap-figure").mark("job-listening")
            with ui.expansion().classes("w-full ap-expansion").mark("job-flagged") as self.flagged:
                self.flagged_box = ui.column().classes("w-full gap-2")
            with ui.row().classes("w-full gap-x-10 gap-y-2"):
                # The job's figures on the wall clock, running or done (see audiopub.figures).
                self.rate = stat(SPEED_LABEL, "job-rate")
                self.rtf = stat(RTF_LABEL, "job-rtf")
                self.startup = stat(STARTUP_LABEL, "job-startup")
                self.elapsed = stat("Elapsed", "job-elapsed")
                self.eta = stat("Remaining", "job-eta")
            self.stages = ui.label().classes("ap-muted text-xs ap-figure").mark("job-stages")
            self.error = ui.label().classes("ap-banner ap-error text-sm").mark("job-error")
            with ui.expansion("Chapters").classes("w-full ap-expansion").mark("job-chapters"):
                self.chapter_box = ui.column().classes("w-full gap-1")
            with ui.expansion("Log").classes("w-full ap-expansion"):
                self.log = ui.log(max_lines=200).classes("ap-log w-full").mark("job-log")
            with ui.row().classes("gap-2 items-center"):
                self.pause = _button(
                    "Pause", "pause", "job-pause", lambda: self._control(services.jobs.pause)
                )
                self.resume = _button(
                    "Resume",
                    "play_arrow",
                    "job-resume",
                    lambda: self._control(services.jobs.resume),
                )
                self.cancel = _button(
                    "Cancel", "stop", "job-cancel", lambda: self._control(services.jobs.cancel)
                )
                self.download = (
                    ui.button(
                        "Download .m4b",
                        icon="download",
                        on_click=lambda: ui.download.from_url(f"/library/{self.job_id}/download"),
                    )
                    .props("unelevated no-caps")
                    .mark("job-download")
                )
                forms = chosen(view.job)
                also = f" (and get {describe(forms)})" if forms is not None else ""
                self.library = (
                    ui.link(f"Listen in the library{also}", "/library")
                    .classes("text-sm ap-link")
                    .mark("job-library")
                )
                self.delete_button = _button(
                    "Delete", "delete_outline", "job-delete", self._confirm_delete
                )
                self.delete_button.props("flat")
        self.update(view)

    def update(self, view: JobView) -> None:
        job, progress, m = view.job, view.progress, view.metrics
        state = job.state
        # Once every chunk is spoken only stitching and encoding remain, which can't stop half-way.
        encoding = state is JobState.RUNNING and 0 < progress.chunks_total == progress.chunks_done
        stopping = view.held and state in (JobState.PAUSED, JobState.CANCELLED)
        self.state.set_text(STOPPING_TEXT[state] if stopping else STATE_TEXT[state])
        self.state.classes(replace=f"ap-chip ap-chip-{state.value}")
        self.device.set_text(device_text(view))
        self.stage.set_text(view.stage)
        self.stage.set_visibility(bool(view.stage))
        self.bar.set_value(round(progress.fraction, 4))
        self.percent.set_text(f"{100 * progress.fraction:.0f}%")
        self.chars.set_text(
            f"{fmt.count(progress.chars_done)} of {fmt.count(progress.chars_total)} characters · "
            f"{progress.chunks_done} of {progress.chunks_total} chunks"
            + (
                f" ({progress.reused_chunks} reused from earlier jobs)"
                if progress.reused_chunks
                else ""
            )
            + (" · encoding the audiobook" if encoding else "")
            if progress.chunks_total
            else "Planned when the job starts"
        )
        self.rate.set_text(fmt.rate(m.chars_per_s))
        self.rtf.set_text(fmt.factor(m.rtf))
        self.startup.set_text(fmt.seconds_short(m.startup_s) if m.startup_s is not None else "—")
        self.elapsed.set_text(fmt.clock(m.elapsed_s))
        self.eta.set_text(fmt.clock(m.eta_s) if state is JobState.RUNNING else "—")
        self.stages.set_text(f"Job stages: {fmt.stage_times(job.stage_times)}")
        self.stages.set_visibility(bool(job.stage_times))
        self.error.set_text(job.error or "")
        self.error.set_visibility(bool(job.error) and state is not JobState.DONE)
        self._update_listening(view)
        self._update_chapters(view)
        self._update_log(view)
        self.pause.set_visibility(
            state is JobState.QUEUED or (state is JobState.RUNNING and not encoding)
        )
        self.cancel.set_visibility(
            state in (JobState.QUEUED, JobState.PAUSED)
            or (state is JobState.RUNNING and not encoding)
        )
        self.resume.set_visibility(state.is_resumable)
        self.resume.set_enabled(not stopping)
        self.delete_button.set_enabled(not stopping)
        self.download.set_visibility(state is JobState.DONE)
        self.library.set_visibility(state is JobState.DONE)
        self.delete_button.set_visibility(state in (JobState.FAILED, JobState.CANCELLED))

    def _update_listening(self, view: JobView) -> None:
        self.listening.set_text(view.listening.describe() if view.listening else "")
        self.listening.set_visibility(view.listening is not None)
        self.flagged.set_visibility(bool(view.flagged))
        if view.flagged != self._flagged:
            self._flagged = view.flagged
            self.flagged.set_text(flagged_title(len(view.flagged)))
            self.flagged_box.clear()
            with self.flagged_box:
                flagged_rows(view.flagged, marker="job-flagged")

    def _update_chapters(self, view: JobView) -> None:
        chapters = view.progress.chapters
        titles = tuple(c.title for c in chapters)
        if titles != self._chapter_titles:
            self._chapter_titles = titles
            self.chapter_box.clear()
            self._chapter_rows = []
            with self.chapter_box:
                if not chapters:
                    ui.label("The chapters are planned when the job starts.").classes("ap-muted")
                for chapter in chapters:
                    self._chapter_rows.append(_ChapterRow(chapter.title))
        for chapter, row in zip(chapters, self._chapter_rows):
            row.update(chapter)

    def _update_log(self, view: JobView) -> None:
        new = view.log_total - self._log_seen
        if new <= 0:
            return
        for line in view.log[-min(new, len(view.log)) :]:
            self.log.push(line)
        self._log_seen = view.log_total

    async def _control(self, action: Callable[[str], Job]) -> None:
        try:
            await run.io_bound(action, self.job_id)
        except AudiopubError as exc:
            ui.notify(str(exc), type="warning")
        await self._refresh()

    async def _confirm_delete(self) -> None:
        await confirm_delete(self.services, self.job_id, "Delete this job and its files?")
        await self._refresh()

    def delete(self) -> None:
        self.card.delete()


class _ChapterRow:
    """Title, progress and count; once stitched, the chapter's speed and time per stage."""

    def __init__(self, title: str) -> None:
        with ui.column().classes("w-full gap-0").mark("job-chapter"):
            with ui.row().classes("w-full items-center no-wrap gap-3"):
                ui.label(title).classes("flex-1 min-w-0 truncate text-sm")
                self.bar = (
                    ui.linear_progress(value=0, show_value=False)
                    .props("rounded size=6px")
                    .classes("w-32")
                )
                self.count = ui.label().classes("ap-muted text-xs ap-figure w-28 text-right")
            self.figures = (
                ui.label().classes("ap-muted text-xs ap-figure").mark("job-chapter-figures")
            )

    def update(self, chapter: ChapterProgress) -> None:
        done = chapter.state is ChapterState.DONE
        fraction = chapter.chars_done / chapter.chars_total if chapter.chars_total else 0.0
        self.bar.set_value(1.0 if done else round(fraction, 4))
        self.count.set_text(f"{fmt.count(chapter.chars_done)} / {fmt.count(chapter.chars_total)}")
        # Engine time, summed over engine processes: the card's top line has wall time.
        self.figures.set_text(
            chapter_figures(chapter.chars_per_s, chapter.rtf, chapter.stage_times)
        )
        self.figures.set_visibility(done and chapter.chars_per_s is not None)


def _button(text: str, icon: str, marker: str, handler: Callable[[], Awaitable[None]]) -> ui.button:
    return ui.button(text, icon=icon, on_click=handler).props("outline no-caps").mark(marker)
