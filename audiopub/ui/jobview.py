"""What a job panel shows, read from the store (the truth) and the latest event (the live rate).

Built off the event loop (`run.io_bound`), then handed to the UI as plain data.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final

from audiopub import figures as fmt
from audiopub.errors import AudiopubError
from audiopub.figures import Clock, Speed
from audiopub.jobs.events import JobEvent
from audiopub.jobs.hearings import FlaggedChunk, ListeningSummary
from audiopub.jobs.models import ChapterRow, Job, JobProgress, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import language_note
from audiopub.tts import registry
from audiopub.tts.engine import voice_of
from audiopub.ui.activity import JobActivity

# A finished job stays in the job list this long; after that it lives in the library only.
RECENT_S: Final = 30 * 60

# The job's speed, on the wall clock while it spoke: what a person waits, every engine process
# together, the engine's start-up left out (it has a figure of its own).
SPEED_LABEL: Final = f"Speed ({Clock.WALL.value}, {fmt.SPEAKING_ONLY})"
RTF_LABEL: Final = f"Real-time factor ({Clock.WALL.value}, {fmt.SPEAKING_ONLY})"
STARTUP_LABEL: Final = "Engine start-up"


@dataclass(frozen=True)
class Metrics:
    speed: Speed  # the job's, on the wall clock: the same definition while running and done
    elapsed_s: float | None
    eta_s: float | None
    startup_s: float | None = None  # the latest run's engine start-up, once it is done

    @property
    def chars_per_s(self) -> float | None:
        return self.speed.chars_per_s

    @property
    def rtf(self) -> float | None:
        return self.speed.rtf


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
    stage: str = ""  # what the worker says it is doing for a running job ("Loading the voice…")
    # What proof-listening found, for a job that listens (None for one that doesn't), and the
    # chunks still wrong after their repairs, where they are in the book.
    listening: ListeningSummary | None = None
    flagged: tuple[FlaggedChunk, ...] = ()
    # The book is not in the voice's language: what that means, and a voice that reads it.
    language_note: str | None = None

    @property
    def audio_s(self) -> float:
        return sum(c.duration_s or 0.0 for c in self.chapters)


def metrics(job: Job, progress: JobProgress, event: JobEvent | None, now: float) -> Metrics:
    """The job's speed and real-time factor, elapsed time and ETA.

    Speed is the characters the job spoke over the wall-clock time its runs spent speaking them
    (see `figures`; chunks whose audio came from other jobs cost it nothing and are not
    counted), from the store, so it means the same while the job runs and once it is done.
    The ETA uses this run's speed, from the worker's latest event, when there is one.
    """
    running = job.state is JobState.RUNNING
    speed = Speed(progress.spoken_chars, progress.wall_s, progress.spoken_audio_s, Clock.WALL)
    elapsed = None
    if job.started_at is not None:
        end = now if running else (job.finished_at or job.updated_at)
        elapsed = max(0.0, end - job.started_at)
    eta: float | None = None
    if job.state is JobState.DONE:
        eta = 0.0
    elif running:
        live = event if event is not None and event.job_id == job.id else None
        eta = (
            live.eta_s
            if live is not None and live.eta_s is not None
            else speed.eta_s(progress.chars_total - progress.chars_done)
        )
    return Metrics(speed, elapsed, eta, job.stage_times.get(fmt.ENGINE_START))


def chapter_figures(
    chars_per_s: float | None, rtf: float | None, stage_times: dict[str, float]
) -> str:
    """A stitched chapter's speed on engine time, which says why it reads lower than the job's
    wall-clock speed where several engine processes spoke at once."""
    return (
        f"{fmt.rate(chars_per_s)} · real-time factor {fmt.factor(rtf)} "
        f"({Clock.ENGINE.value}: {fmt.PER_PROCESS}) · {fmt.stage_times(stage_times)}"
    )


def job_view(
    store: JobStore,
    activity: JobActivity,
    job: Job,
    now: float | None = None,
    cover: Path | None = None,
    held: bool = False,
) -> JobView:
    now = time.time() if now is None else now
    progress = store.ledger.progress(job.id)
    chapters: tuple[ChapterRow, ...] = ()
    size = None
    if job.state is JobState.DONE:
        chapters = tuple(store.ledger.chapters(job.id))
        try:
            size = job.output_path.stat().st_size
        except OSError:
            size = None
    event = activity.latest(job.id)
    total, lines = activity.log(job.id)
    listening = store.hearings.listening_summary(job.id) if job.settings.proof_listen else None
    flagged = (
        tuple(store.hearings.still_flagged(job.id)) if listening and listening.still_flagged else ()
    )
    return JobView(
        job,
        progress,
        metrics(job, progress, event, now),
        tuple(lines),
        total,
        chapters,
        size,
        cover,
        event.provider if event is not None else None,
        held,
        stage_text(job, event),
        listening,
        flagged,
        job_language_note(
            job.settings.engine, job.settings.voice or "", job.settings.language or ""
        ),
    )


@lru_cache(maxsize=256)
def job_language_note(engine: str, voice: str, language: str) -> str | None:
    """`submission.language_note` for a job's voice and book, as the CLI prints it. Kept per
    (engine, voice, language): views are built every second, the voice lists read once."""
    try:
        return language_note(language, voice_of(registry.get_preview_engine(engine), voice))
    except AudiopubError:  # an engine or voice gone since: the card says so elsewhere
        return None


def stage_text(job: Job, event: JobEvent | None) -> str:
    """What a running job is doing now, as its worker last said; empty for any other job (a
    paused job's last event may still say what it was doing)."""
    if job.state is not JobState.RUNNING or event is None or event.state is not JobState.RUNNING:
        return ""
    return event.stage


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
