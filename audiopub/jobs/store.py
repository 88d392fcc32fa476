"""The durable job store: one SQLite file holding every job, its plan and its progress.

    JobStore
     ├── JobQueue    (queue.py)   jobs, states, settings, the book each reads, claiming
     ├── JobHearings (hearings.py) what proof-listening heard in each chunk's audio
     ├── JobLedger   (ledger.py)  the plan: chapters and chunks, their marks, progress
     └── StoreDatabase (db.py)    the file, connections, transactions, schema upgrades

One object, so a caller holds one store; each half keeps its SQL beside its methods.
"""

from __future__ import annotations

from pathlib import Path

from audiopub.jobs.hearings import JobHearings
from audiopub.jobs.queue import JobQueue
from audiopub.settings import data_dir


def default_store_path() -> Path:
    return data_dir() / "jobs.sqlite3"


class JobStore(JobQueue, JobHearings):
    """All job state, safe to share between threads; open one per process (or per thread).

    `JobStore(path)` creates the file and schema if needed. Job folders live next to it in
    `jobs/<job id>/` unless `jobs_dir` says otherwise. Use as a context manager, or `close()`.
    """

    @classmethod
    def open_default(cls) -> JobStore:
        return cls(default_store_path())

    def __enter__(self) -> JobStore:
        return self
