"""The durable job store: one SQLite file holding every job, its plan and its progress.

A `JobStore` holds four parts, each a plain class in a file of its own, and callers go
through the part they need (`store.queue.claim_next_job()`, `store.ledger.mark_chunk_done(...)`,
`store.hearings.record_hearing(...)`):

`store.db` (`StoreDatabase`, db.py): the file itself. Each thread's connection, the write
transaction every change runs in (`BEGIN IMMEDIATE`, so a reader never sees half of one), the
schema and its upgrades, and what a full disk or a damaged file turns into.

`store.queue` (`JobQueue`, queue.py): the jobs. Creating one with the book it reads, its state
and the allowed moves between states (claim, pause, cancel, requeue), its settings, and the
job-wide figures (stage times, peak GPU memory).

`store.ledger` (`JobLedger`, ledger.py, its rows in ledger_rows.py): a job's work. The plan
(chapters and chunks, rewritten whenever the job is claimed, keeping what is already made),
the marks on chunks and chapters as their audio is made or lost, and progress.

`store.hearings` (`JobHearings`, hearings.py): what proof-listening heard in each chunk's
audio, the takes it kept, and the chunks still flagged.

The helpers more than one part uses are modules of their own: a job row and the checks on its
state (job_rows.py) and the figures kept as JSON (store_json.py). The store itself knows only
where things are: its file, the job folders beside it, and the library of finished books.
"""

from __future__ import annotations

from pathlib import Path

from audiopub.jobs.db import StoreDatabase
from audiopub.jobs.hearings import JobHearings
from audiopub.jobs.ledger import JobLedger
from audiopub.jobs.queue import JobQueue
from audiopub.settings import data_dir


def default_store_path() -> Path:
    return data_dir() / "jobs.sqlite3"


class JobStore:
    """All job state, safe to share between threads; open one per process (or per thread).

    `JobStore(path)` creates the file and schema if needed. Job folders live next to it in
    `jobs/<job id>/` unless `jobs_dir` says otherwise. Use as a context manager, or `close()`.
    """

    def __init__(self, path: Path, jobs_dir: Path | None = None) -> None:
        self.path = Path(path)
        self.jobs_dir = Path(jobs_dir) if jobs_dir is not None else self.path.parent / "jobs"
        # Where the web UI keeps the books it makes: beside the store, in `library/`.
        self.library_dir = self.path.parent / "library"
        self.db = StoreDatabase(self.path, self.library_dir)
        self.queue = JobQueue(self.db, self.job_dir)
        self.ledger = JobLedger(self.db)
        self.hearings = JobHearings(self.db, self.ledger)

    @classmethod
    def open_default(cls) -> JobStore:
        return cls(default_store_path())

    def job_dir(self, job_id: str) -> Path:
        """The job's folder: its EPUB copy, chunk audio, chapter audio."""
        return self.jobs_dir / job_id

    def close(self) -> None:
        """Close every connection this store opened. Call once no thread is using it."""
        self.db.close()

    def __enter__(self) -> JobStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
