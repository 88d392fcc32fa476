"""What a job panel shows, read from the store (the truth) and the latest event (the live rate).

Built off the event loop (`run.io_bound`), then handed to the UI as plain data.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from audiopub.jobs.events import JobEvent
from audiopub.jobs.models import ChapterRow, Job, JobProgress, JobState
from audiopub.jobs.store import JobStore
from audiopub.ui.activity import JobActivity

# A finished job stays in the job list this long; after that it lives in the library only.
RECENT_S: Final = 30 * 60


@dataclass(frozen=True)
class Metrics:
    chars_per_s: float | None
    rtf: float | None  # engine seconds per second of audio
    elapsed_s: float | None
    eta_s: float | None


@dataclass(frozen=True)
class JobView:
    job: Job
    progress: JobProgress
    metrics: Metrics
    log: tuple[str, ...]  # the last lines of the job's log
    log_total: int  # lines ever logged, so a panel can tell which of `log` are new
    chapters: tuple[ChapterRow, ...] = ()  # filled for finished jobs (the player's marks)
    output_bytes: int | None = None  # size of the finished book, if it is on disk
    cover: Path | None = None
    live_provider: str | None = None  # what the worker reports the engine runs on right now
    # The worker still has the job in hand (it stops between chunks): a paused or cancelled
    # job can't be resumed or deleted until it lets go.
    held: bool = False

    @property
    def audio_s(self) -> float:
        return sum(c.duration_s or 0.0 for c in self.chapters)


def metrics(job: Job, progress: JobProgress, event: JobEvent | None, now: float) -> Metrics:
    """chars/s, real-time factor, elapsed and ETA.

    While the job runs, the worker's own figures for this run win (they count only chunks made
    now, against the wall clock); otherwise they come from the store's engine timings.
    """
    running = job.state is JobState.RUNNING
    live = event if running and event is not None and event.job_id == job.id else None
    stored_rate = progress.chars_done / progress.synth_s if progress.synth_s > 0 else None
    rate = live.chars_per_s if live is not None and live.chars_per_s > 0 else stored_rate
    stored_rtf = progress.synth_s / progress.audio_s if progress.audio_s > 0 else None
    rtf = live.real_time_factor if live is not None and live.real_time_factor else stored_rtf
    elapsed = None
    if job.started_at is not None:
        end = now if running else (job.finished_at or job.updated_at)
        elapsed = max(0.0, end - job.started_at)
    eta: float | None = None
    if job.state is JobState.DONE:
        eta = 0.0
    elif running:
        if live is not None and live.eta_s is not None:
            eta = live.eta_s
        elif rate:
            eta = (progress.chars_total - progress.chars_done) / rate
    return Metrics(rate, rtf, elapsed, eta)


def job_view(store: JobStore, activity: JobActivity, job: Job, now: float | None = None,
             cover: Path | None = None, held: bool = False) -> JobView:
    now = time.time() if now is None else now
    progress = store.progress(job.id)
    chapters: tuple[ChapterRow, ...] = ()
    size = None
    if job.state is JobState.DONE:
        chapters = tuple(store.chapters(job.id))
        try:
            size = job.output_path.stat().st_size
        except OSError:
            size = None
    event = activity.latest(job.id)
    total, lines = activity.log(job.id)
    return JobView(job, progress, metrics(job, progress, event, now), tuple(lines), total,
                   chapters, size, cover, event.provider if event is not None else None, held)


def is_listed_as_active(job: Job, now: float) -> bool:
    """The job list on the convert page: everything unfinished, and books finished recently."""
    if job.state is not JobState.DONE:
        return True
    return job.finished_at is not None and now - job.finished_at < RECENT_S


def chapter_starts(chapters: tuple[ChapterRow, ...]) -> list[tuple[str, float]]:
    """(title, start second) of each chapter in the finished book, as the muxer placed them."""
    marks: list[tuple[str, float]] = []
    position = 0.0
    for chapter in chapters:
        marks.append((chapter.title, position))
        position += chapter.duration_s or 0.0
    return marks
