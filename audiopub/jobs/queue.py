"""The job queue: jobs, their states and settings, the book each one reads, and claiming.

A job is created `queued` with its settings and the book as `submit_job` read it (metadata,
chapters, cover), so no later step parses the EPUB again. The worker claims the oldest queued
job atomically; pause, cancel and resume are state changes that the worker honours between
chunks (see `JobState` for the transitions).
"""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from audiopub.book.models import Book, Cover
from audiopub.errors import InvalidTransition, JobNotFound
from audiopub.jobs.db import StoreDatabase
from audiopub.jobs.job_rows import (
    EDITABLE_STATES,
    JOB_COLUMNS,
    SELECT_JOB,
    current_state,
    job_from_row,
    require_state,
)
from audiopub.jobs.models import Job, JobSettings, JobState
from audiopub.jobs.store_json import times_json, times_of, vram_json, vram_of

EPUB_NAME = "book.epub"  # the job's own copy of the uploaded book

_SELECT_OLDEST_QUEUED = (
    f"SELECT {JOB_COLUMNS} FROM jobs WHERE state = 'queued' ORDER BY created_at, rowid LIMIT 1"
)


class JobQueue:
    """Jobs and their states: the queue part of `JobStore` (`store.queue`)."""

    def __init__(self, db: StoreDatabase, job_dir: Callable[[str], Path]) -> None:
        self._db = db
        self._job_dir = job_dir  # the job's folder (`JobStore.job_dir`)

    def create_job(
        self,
        epub: Path,
        output_path: Path,
        settings: JobSettings,
        *,
        book: Book | None = None,
        copy_epub: bool = True,
    ) -> Job:
        """A queued job for `book`, read from `epub`; the EPUB is copied into the job's folder
        so the upload may go away."""
        job_id = uuid.uuid4().hex
        epub_path = self._job_dir(job_id) / EPUB_NAME if copy_epub else Path(epub)
        now = time.time()
        row = (
            job_id,
            JobState.QUEUED.value,
            now,
            now,
            None,
            None,
            book.title if book else "",
            book.author if book else "",
            str(epub_path),
            str(output_path),
            json.dumps(settings.to_dict()),
            None,
            None,
            None,
            None,
        )
        try:
            if copy_epub:
                epub_path.parent.mkdir(parents=True)
                shutil.copyfile(epub, epub_path)
            with self._db.write() as conn:
                conn.execute(
                    f"INSERT INTO jobs ({JOB_COLUMNS}) VALUES ({', '.join('?' * 15)})", row
                )
                if book is not None:
                    _insert_book(conn, job_id, book)
        except BaseException:
            if copy_epub:  # no row without its folder, no folder without its row
                shutil.rmtree(self._job_dir(job_id), ignore_errors=True)
            raise
        return self.get_job(job_id)

    def book(self, job_id: str) -> Book | None:
        """The book as it was read when the job was submitted (None for a job from before
        books were kept: read its EPUB copy once and `keep_book` it)."""
        row = (
            self._db.connection()
            .execute(
                "SELECT book_json, cover, cover_type FROM job_books WHERE job_id = ?", (job_id,)
            )
            .fetchone()
        )
        if row is None:
            return None
        book_json, cover, cover_type = row
        return Book.from_dict(
            json.loads(book_json), Cover(bytes(cover), cover_type) if cover is not None else None
        )

    def keep_book(self, job_id: str, book: Book) -> None:
        with self._db.write() as conn:
            current_state(conn, job_id)  # raises JobNotFound
            conn.execute("DELETE FROM job_books WHERE job_id = ?", (job_id,))
            _insert_book(conn, job_id, book)

    def get_job(self, job_id: str) -> Job:
        row = self._db.connection().execute(SELECT_JOB, (job_id,)).fetchone()
        if row is None:
            raise JobNotFound(f"No job with id {job_id}")
        return job_from_row(row)

    def find_job(self, prefix: str) -> Job:
        """The one job whose id starts with `prefix` (what people type); JobNotFound if none
        or several do."""
        matches = [job for job in self.list_jobs() if job.id.startswith(prefix)]
        if len(matches) != 1:
            raise JobNotFound(f"{'No' if not matches else 'More than one'} job matches {prefix!r}")
        return matches[0]

    def list_jobs(self, states: Iterable[JobState] | None = None) -> list[Job]:
        """Jobs oldest first (queue order), optionally only those in `states`."""
        rows = self._db.connection().execute(
            f"SELECT {JOB_COLUMNS} FROM jobs ORDER BY created_at, rowid"
        )
        jobs = [job_from_row(r) for r in rows]
        if states is None:
            return jobs
        wanted = set(states)
        return [j for j in jobs if j.state in wanted]

    def set_state(self, job_id: str, state: JobState, error: str | None = None) -> Job:
        """Move a job to `state` if that transition is allowed (read and write are atomic)."""
        with self._db.write() as conn:
            _transition(conn, job_id, JobState(state), error)
        return self.get_job(job_id)

    def set_job_info(self, job_id: str, *, device: str | None = None) -> None:
        """Record what is learnt once the job runs: the device really used."""
        with self._db.write() as conn:
            current_state(conn, job_id)  # raises JobNotFound
            conn.execute(
                "UPDATE jobs SET device = coalesce(?, device), updated_at = ? WHERE id = ?",
                (device, time.time(), job_id),
            )

    def set_job_stage_times(
        self, job_id: str, stage_times: Mapping[str, float], *, add: bool = False
    ) -> None:
        """Record seconds spent in job-wide stages (reading, planning, speaking, encoding).

        A stage measured again replaces the earlier figure (encoding after a resume), or with
        `add` is added to it (speaking, which every run of the job does a part of).
        """
        with self._db.write() as conn:
            current_state(conn, job_id)  # raises JobNotFound
            (stored,) = conn.execute(
                "SELECT stage_times_json FROM jobs WHERE id = ?", (job_id,)
            ).fetchone()
            times = times_of(stored)
            for name, seconds in stage_times.items():
                times[name] = times.get(name, 0.0) + seconds if add else seconds
            conn.execute(
                "UPDATE jobs SET stage_times_json = ?, updated_at = ? WHERE id = ?",
                (times_json(times), time.time(), job_id),
            )

    def record_peak_vram(self, job_id: str, peak_mb: Mapping[int, float]) -> None:
        """Keep, per device index, the larger of the stored peak VRAM (MiB) and `peak_mb`'s,
        so a resumed job keeps the peak of its earlier runs."""
        for index, mb in peak_mb.items():
            if not math.isfinite(mb) or mb < 0:
                raise ValueError(f"Peak VRAM of GPU {index} must be finite and >= 0, got {mb}")
        with self._db.write() as conn:
            current_state(conn, job_id)  # raises JobNotFound
            (stored,) = conn.execute(
                "SELECT peak_vram_json FROM jobs WHERE id = ?", (job_id,)
            ).fetchone()
            peaks = vram_of(stored)
            merged = peaks | {i: max(peaks.get(i, 0.0), float(mb)) for i, mb in peak_mb.items()}
            if merged == peaks:
                return  # no new peak: called after every batch, most calls change nothing
            conn.execute(
                "UPDATE jobs SET peak_vram_json = ?, updated_at = ? WHERE id = ?",
                (vram_json(merged), time.time(), job_id),
            )

    def claim_next_job(self) -> Job | None:
        """Atomically take the oldest queued job (queued → running); None if the queue is empty.

        Select and update share one write transaction, so two workers never get the same job.
        """
        with self._db.write() as conn:
            row = conn.execute(_SELECT_OLDEST_QUEUED).fetchone()
            if row is None:
                return None
            job_id = row[0]
            _transition(conn, job_id, JobState.RUNNING, None)
        return self.get_job(job_id)

    def requeue_interrupted(self) -> list[str]:
        """At start-up: jobs left `running` by a crash or restart go back in the queue.

        Call it before the worker starts, and only from the one process that runs jobs.
        """
        with self._db.write() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM jobs WHERE state = 'running' ORDER BY created_at, rowid"
                )
            ]
            for job_id in ids:
                _transition(conn, job_id, JobState.QUEUED, None)
        return ids

    def update_settings(self, job_id: str, settings: JobSettings) -> None:
        """Change how a (not running, not done) job is narrated, e.g. before resuming it.

        Nothing else changes here: the worker plans the job again when it claims it, and only
        chunks whose sound the change alters are made again.
        """
        with self._db.write() as conn:
            require_state(conn, job_id, EDITABLE_STATES, "change the settings of")
            conn.execute(
                "UPDATE jobs SET settings_json = ?, updated_at = ? WHERE id = ?",
                (json.dumps(settings.to_dict()), time.time(), job_id),
            )

    def requeue_with(self, job_id: str, settings: JobSettings) -> Job:
        """Put an unfinished job back in the queue to be made with `settings`, from whatever
        state it is in: what a command that takes over a job asks for wins.

        A runner still making the job (running, or paused but not yet at its next chunk) sees
        it queued after its current chunk and lets it go; whoever claims it next plans it from
        these settings. Settings and state change in one transaction, so no claim comes
        between them.
        """
        with self._db.write() as conn:
            state = current_state(conn, job_id)
            if state is JobState.DONE:
                raise InvalidTransition(
                    "The job finished meanwhile; run the command again to "
                    "make the book with these settings"
                )
            conn.execute(
                "UPDATE jobs SET settings_json = ?, updated_at = ? WHERE id = ?",
                (json.dumps(settings.to_dict()), time.time(), job_id),
            )
            if state is not JobState.QUEUED:
                _transition(conn, job_id, JobState.QUEUED, None)
        return self.get_job(job_id)

    def remake(self, job_id: str) -> Job:
        """Put a finished job whose audiobook was deleted back in the queue: its next run
        makes the book again from the chapter and chunk audio left in its folder, speaking
        only what is missing there. The one way out of `done`, and only while its output is
        gone (InvalidTransition otherwise): a finished book is final."""
        with self._db.write() as conn:
            state = current_state(conn, job_id)
            (output,) = conn.execute(
                "SELECT output_path FROM jobs WHERE id = ?", (job_id,)
            ).fetchone()
            if state is not JobState.DONE or Path(output).exists():
                raise InvalidTransition(
                    f"Only a finished job whose audiobook is gone is made again (this one is "
                    f"{state.value}{', its audiobook is there' if Path(output).exists() else ''})"
                )
            conn.execute(
                "UPDATE jobs SET state = 'queued', error = NULL, finished_at = NULL, "
                "updated_at = ? WHERE id = ?",
                (time.time(), job_id),
            )
        return self.get_job(job_id)

    def delete_job(self, job_id: str, *, remove_files: bool = True) -> None:
        """Forget a job (and by default delete its folder). A running job must be stopped first."""
        with self._db.write() as conn:
            if current_state(conn, job_id) is JobState.RUNNING:
                raise InvalidTransition("Cancel or pause the job before deleting it")
            conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
        if remove_files:
            shutil.rmtree(self._job_dir(job_id), ignore_errors=True)


# --- rows -----------------------------------------------------------------------------------


def _insert_book(conn: sqlite3.Connection, job_id: str, book: Book) -> None:
    cover = book.cover
    conn.execute(
        "INSERT INTO job_books (job_id, book_json, cover, cover_type) VALUES (?, ?, ?, ?)",
        (
            job_id,
            json.dumps(book.to_dict(), ensure_ascii=False),
            cover.data if cover else None,
            cover.media_type if cover else None,
        ),
    )


def _transition(conn: sqlite3.Connection, job_id: str, state: JobState, error: str | None) -> None:
    current = current_state(conn, job_id)
    if not current.can_become(state):
        raise InvalidTransition(f"A {current.value} job cannot become {state.value}")
    conn.execute(
        """
        UPDATE jobs SET state = :state, updated_at = :now, error = :error,
            started_at = CASE WHEN :state = 'running' THEN coalesce(started_at, :now)
                              ELSE started_at END,
            finished_at = CASE WHEN :state IN ('done', 'failed', 'cancelled') THEN :now
                               WHEN :state IN ('queued', 'running') THEN NULL
                               ELSE finished_at END
        WHERE id = :id
    """,
        {"id": job_id, "state": state.value, "now": time.time(), "error": error},
    )
