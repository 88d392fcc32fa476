"""A job's row in the store: its columns, reading it into a `Job`, and the checks on a job's
state that the queue and the ledger make inside their write transactions."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from audiopub.errors import InvalidTransition, JobNotFound
from audiopub.jobs.models import Job, JobSettings, JobState
from audiopub.jobs.store_json import times_of, vram_of

JOB_COLUMNS = (
    "id, state, created_at, updated_at, started_at, finished_at, title, author, "
    "epub_path, output_path, settings_json, error, device, stage_times_json, peak_vram_json"
)
SELECT_JOB = f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?"

# Settings change only while no worker runs the job; the worker plans the job it claimed from
# the settings it has then. A done job is final.
EDITABLE_STATES = frozenset({JobState.QUEUED, JobState.PAUSED, JobState.FAILED, JobState.CANCELLED})


def current_state(conn: sqlite3.Connection, job_id: str) -> JobState:
    row = conn.execute("SELECT state FROM jobs WHERE id = ?", (job_id,)).fetchone()
    if row is None:
        raise JobNotFound(f"No job with id {job_id}")
    return JobState(row[0])


def require_state(
    conn: sqlite3.Connection, job_id: str, allowed: frozenset[JobState], action: str
) -> None:
    state = current_state(conn, job_id)
    if state not in allowed:
        hint = ": pause it first" if state is JobState.RUNNING else ""
        raise InvalidTransition(f"Cannot {action} a {state.value} job{hint}")


def settings_of(conn: sqlite3.Connection, job_id: str) -> JobSettings:
    return job_from_row(conn.execute(SELECT_JOB, (job_id,)).fetchone()).settings


def touch(conn: sqlite3.Connection, job_id: str) -> None:
    conn.execute("UPDATE jobs SET updated_at = ? WHERE id = ?", (time.time(), job_id))


def job_from_row(row: Sequence[Any]) -> Job:
    (
        job_id,
        state,
        created_at,
        updated_at,
        started_at,
        finished_at,
        title,
        author,
        epub_path,
        output_path,
        settings_json,
        error,
        device,
        stage_times_json,
        peak_vram_json,
    ) = row
    return Job(
        id=job_id,
        state=JobState(state),
        created_at=created_at,
        updated_at=updated_at,
        started_at=started_at,
        finished_at=finished_at,
        title=title,
        author=author,
        epub_path=Path(epub_path),
        output_path=Path(output_path),
        settings=JobSettings.from_dict(json.loads(settings_json)),
        error=error,
        device=device,
        stage_times=times_of(stage_times_json),
        peak_vram_mb=vram_of(peak_vram_json),
    )
