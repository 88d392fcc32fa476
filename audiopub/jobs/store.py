"""The durable job store: one SQLite file holding every job, its plan and its progress.

Concurrency: the worker thread writes while the UI and the CLI read, possibly from other
processes. SQLite in WAL mode lets readers see the last committed state without blocking the
writer. Every write runs in one `BEGIN IMMEDIATE` transaction (takes the write lock up front,
waiting up to `busy_timeout`), so a reader never sees half a plan or half a state change.
Each thread gets its own connection; `close()` closes them all.

Chunk done-ness: a chunk row carries its cache key (text + settings, see `chunk_cache_key`) and
a state. Audio is named by the key, so done marks are set and carried *by key*:
 * `write_plan` rewrites the plan rows; a new chunk whose key was done in the old plan stays
   done (same text, same settings → same audio), everything else starts pending.
 * `update_settings` recomputes every key; a chunk whose key changed goes back to pending.
 * `mark_chunk_done(job_id, cache_key, ...)` only matches rows that still have that key, so a
   chunk made under settings that were changed meanwhile is never marked done.
The store's mark is half of the trust rule; the other half (the file exists with the recorded
length) is checked by `chunk_cache.verify_done_chunks`.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from audiopub.book.models import Chunk
from audiopub.errors import AudiopubError
from audiopub.jobs.models import (
    ChapterProgress,
    ChapterRow,
    ChapterState,
    ChunkRow,
    ChunkState,
    Job,
    JobProgress,
    JobSettings,
    JobState,
    chunk_cache_key,
)
from audiopub.settings import data_dir


class JobStoreError(AudiopubError):
    """The job store refused an operation."""


class JobNotFound(JobStoreError):
    """No job has that id (it may have been deleted)."""


class InvalidTransition(JobStoreError):
    """The job cannot move from its current state to the one asked for."""


SCHEMA_VERSION = 2
BUSY_TIMEOUT_MS = 10_000  # how long a writer waits for another writer before giving up
EPUB_NAME = "book.epub"  # the job's own copy of the uploaded book

_SCHEMA_V1: tuple[str, ...] = (
    """
    CREATE TABLE jobs (
        id            TEXT PRIMARY KEY,          -- uuid4 hex
        created_at    REAL NOT NULL,             -- Unix seconds
        updated_at    REAL NOT NULL,
        started_at    REAL,
        finished_at   REAL,
        state         TEXT NOT NULL CHECK (state IN
                        ('queued', 'running', 'paused', 'done', 'failed', 'cancelled')),
        title         TEXT NOT NULL DEFAULT '',
        author        TEXT NOT NULL DEFAULT '',
        epub_path     TEXT NOT NULL,
        output_path   TEXT NOT NULL,
        settings_json TEXT NOT NULL,
        error         TEXT,
        device        TEXT
    )
    """,
    "CREATE INDEX jobs_by_state ON jobs (state, created_at)",
    """
    CREATE TABLE chapters (
        job_id           TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        idx              INTEGER NOT NULL,       -- 0-based position in the plan
        book_index       INTEGER,                -- Chapter.index in the book
        title            TEXT NOT NULL,
        chars            INTEGER NOT NULL,
        state            TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
        audio_path       TEXT,                   -- relative to the job's folder
        duration_s       REAL,
        synth_s          REAL,
        chars_per_s      REAL,
        rtf              REAL,
        stage_times_json TEXT,
        PRIMARY KEY (job_id, idx)
    )
    """,
    """
    CREATE TABLE chunks (
        job_id         TEXT NOT NULL,
        chapter_idx    INTEGER NOT NULL,
        idx            INTEGER NOT NULL,         -- 0-based position in the chapter
        text           TEXT NOT NULL,
        ends_paragraph INTEGER NOT NULL,
        cache_key      TEXT NOT NULL,
        state          TEXT NOT NULL DEFAULT 'pending'
                         CHECK (state IN ('pending', 'done', 'failed')),
        audio_path     TEXT,                     -- relative to the job's folder
        frames         INTEGER,
        duration_s     REAL,
        synth_s        REAL,
        provider       TEXT,
        attempts       INTEGER NOT NULL DEFAULT 0,
        error          TEXT,
        PRIMARY KEY (job_id, chapter_idx, idx),
        FOREIGN KEY (job_id, chapter_idx) REFERENCES chapters (job_id, idx) ON DELETE CASCADE
    )
    """,
    "CREATE INDEX chunks_by_key ON chunks (job_id, cache_key)",
)
# The statements that take a store from version N to N + 1 are _UPGRADES[N - 1].
_UPGRADES: tuple[tuple[str, ...], ...] = (
    (  # 2: seconds per stage for each chunk (so a chapter's survive a pause) and for the job
        "ALTER TABLE chunks ADD COLUMN stage_times_json TEXT",
        "ALTER TABLE jobs ADD COLUMN stage_times_json TEXT",
    ),
)

# --- jobs -----------------------------------------------------------------------------------

_JOB_COLUMNS = (
    "id, state, created_at, updated_at, started_at, finished_at, title, author, "
    "epub_path, output_path, settings_json, error, device, stage_times_json"
)
_INSERT_JOB = f"INSERT INTO jobs ({_JOB_COLUMNS}) VALUES ({', '.join('?' * 14)})"
_SELECT_JOB = f"SELECT {_JOB_COLUMNS} FROM jobs WHERE id = ?"
_SELECT_JOBS = f"SELECT {_JOB_COLUMNS} FROM jobs ORDER BY created_at, rowid"
_SELECT_OLDEST_QUEUED = (
    f"SELECT {_JOB_COLUMNS} FROM jobs WHERE state = 'queued' ORDER BY created_at, rowid LIMIT 1"
)
_SELECT_STATE = "SELECT state FROM jobs WHERE id = ?"
_UPDATE_STATE = """
    UPDATE jobs SET state = :state, updated_at = :now, error = :error,
        started_at = CASE WHEN :state = 'running' THEN coalesce(started_at, :now)
                          ELSE started_at END,
        finished_at = CASE WHEN :state IN ('done', 'failed', 'cancelled') THEN :now
                           WHEN :state IN ('queued', 'running') THEN NULL
                           ELSE finished_at END
    WHERE id = :id
"""
_SELECT_RUNNING_IDS = "SELECT id FROM jobs WHERE state = 'running' ORDER BY created_at, rowid"
_UPDATE_SETTINGS = "UPDATE jobs SET settings_json = ?, updated_at = ? WHERE id = ?"
_UPDATE_INFO = """
    UPDATE jobs SET title = coalesce(:title, title), author = coalesce(:author, author),
        device = coalesce(:device, device), updated_at = :now
    WHERE id = :id
"""
_SELECT_JOB_STAGE_TIMES = "SELECT stage_times_json FROM jobs WHERE id = ?"
_UPDATE_JOB_STAGE_TIMES = "UPDATE jobs SET stage_times_json = ?, updated_at = ? WHERE id = ?"
_TOUCH_JOB = "UPDATE jobs SET updated_at = ? WHERE id = ?"
_DELETE_JOB = "DELETE FROM jobs WHERE id = ?"

# --- plan -----------------------------------------------------------------------------------

_CHAPTER_COLUMNS = (
    "job_id, idx, book_index, title, chars, state, audio_path, duration_s, synth_s, "
    "chars_per_s, rtf, stage_times_json"
)
_CHUNK_COLUMNS = (
    "job_id, chapter_idx, idx, text, ends_paragraph, cache_key, state, audio_path, frames, "
    "duration_s, synth_s, provider, attempts, error, stage_times_json"
)
_INSERT_CHAPTER = f"INSERT INTO chapters ({_CHAPTER_COLUMNS}) VALUES ({', '.join('?' * 12)})"
_INSERT_CHUNK = f"INSERT INTO chunks ({_CHUNK_COLUMNS}) VALUES ({', '.join('?' * 15)})"
_DELETE_CHAPTERS = "DELETE FROM chapters WHERE job_id = ?"  # cascades to chunks
_SELECT_CHAPTERS = f"SELECT {_CHAPTER_COLUMNS} FROM chapters WHERE job_id = ? ORDER BY idx"
_SELECT_CHAPTER = f"SELECT {_CHAPTER_COLUMNS} FROM chapters WHERE job_id = ? AND idx = ?"
_SELECT_CHUNKS = (
    f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE job_id = ? ORDER BY chapter_idx, idx"
)
_SELECT_CHAPTER_CHUNKS = (
    f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE job_id = ? AND chapter_idx = ? ORDER BY idx"
)
_SELECT_DONE_CHUNKS = (
    f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE job_id = ? AND state = 'done' "
    "ORDER BY chapter_idx, idx"
)
_SELECT_NOT_DONE_CHUNKS = (
    f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE job_id = ? AND state != 'done' "
    "ORDER BY chapter_idx, idx"
)
_SELECT_CHAPTER_NOT_DONE_CHUNKS = (
    f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE job_id = ? AND chapter_idx = ? "
    "AND state != 'done' ORDER BY idx"
)

# --- chunk and chapter marks ----------------------------------------------------------------

_MARK_CHUNKS_DONE = """
    UPDATE chunks SET state = 'done', audio_path = ?, frames = ?, duration_s = ?, synth_s = ?,
        provider = ?, stage_times_json = ?, attempts = attempts + 1, error = NULL
    WHERE job_id = ? AND cache_key = ?
"""
_MARK_CHUNKS_FAILED = """
    UPDATE chunks SET state = 'failed', attempts = attempts + 1, error = ?
    WHERE job_id = ? AND cache_key = ? AND state != 'done'
"""
_RESET_CHUNKS = """
    UPDATE chunks SET state = 'pending', audio_path = NULL, frames = NULL, duration_s = NULL,
        synth_s = NULL, provider = NULL, stage_times_json = NULL, error = NULL
    WHERE job_id = ? AND cache_key = ?
"""
_SET_CHUNK_KEY = """
    UPDATE chunks SET cache_key = ?, state = 'pending', audio_path = NULL, frames = NULL,
        duration_s = NULL, synth_s = NULL, provider = NULL, error = NULL, attempts = 0
    WHERE job_id = ? AND chapter_idx = ? AND idx = ?
"""
_CHAPTER_HAS_UNFINISHED_CHUNKS = (
    "SELECT 1 FROM chunks WHERE job_id = ? AND chapter_idx = ? AND state != 'done' LIMIT 1"
)
_MARK_CHAPTER_DONE = """
    UPDATE chapters SET state = 'done', audio_path = ?, duration_s = ?, synth_s = ?,
        chars_per_s = ?, rtf = ?, stage_times_json = ?
    WHERE job_id = ? AND idx = ?
"""
_RESET_CHAPTER = """
    UPDATE chapters SET state = 'pending', audio_path = NULL, duration_s = NULL, synth_s = NULL,
        chars_per_s = NULL, rtf = NULL, stage_times_json = NULL
    WHERE job_id = ? AND idx = ?
"""
_RESET_CHAPTERS_OF_KEY = """
    UPDATE chapters SET state = 'pending', audio_path = NULL, duration_s = NULL, synth_s = NULL,
        chars_per_s = NULL, rtf = NULL, stage_times_json = NULL
    WHERE job_id = ? AND idx IN (SELECT chapter_idx FROM chunks WHERE job_id = ? AND cache_key = ?)
"""

# One statement, so the totals and the per-chapter rows come from the same snapshot.
_PROGRESS = """
    SELECT c.idx, c.title, c.state,
           count(k.idx),
           coalesce(sum(k.state = 'done'), 0),
           coalesce(sum(length(k.text)), 0),
           coalesce(sum(CASE WHEN k.state = 'done' THEN length(k.text) END), 0),
           coalesce(sum(CASE WHEN k.state = 'done' THEN k.duration_s END), 0.0),
           coalesce(sum(CASE WHEN k.state = 'done' THEN k.synth_s END), 0.0),
           c.chars_per_s, c.rtf, c.stage_times_json
    FROM chapters c LEFT JOIN chunks k ON k.job_id = c.job_id AND k.chapter_idx = c.idx
    WHERE c.job_id = ?
    GROUP BY c.idx ORDER BY c.idx
"""

# Settings change only while no worker runs the job; the worker (re)plans the job it claimed.
# A done job is final.
_EDITABLE_STATES = frozenset(
    {JobState.QUEUED, JobState.PAUSED, JobState.FAILED, JobState.CANCELLED}
)
_PLANNABLE_STATES = _EDITABLE_STATES | {JobState.RUNNING}

ChapterPlanInput = tuple[str, Sequence[Chunk]]  # (title, chunks) as the chunker makes them


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
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._migrate()
        except BaseException:
            self.close()  # don't leak the connection of a store that never opened
            raise

    @classmethod
    def open_default(cls) -> JobStore:
        return cls(default_store_path())

    # --- connections ---------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise JobStoreError("The job store is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions; we BEGIN/COMMIT explicitly.
        # check_same_thread=False only so close() may close other threads' connections;
        # each connection is otherwise used by the thread that opened it.
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
            check_same_thread=False,
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        # NORMAL in WAL mode: a power cut may lose the last marks (those chunks are redone),
        # never corrupt the file; chunk files themselves are fsynced before they are marked.
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def close(self) -> None:
        """Close every connection this store opened. Call once no thread is using it."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()

    def __enter__(self) -> JobStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; the lock is taken up front so it never fails half-way."""
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        finally:
            if conn.in_transaction:  # the body or the commit raised: undo all of it
                conn.execute("ROLLBACK")

    def _migrate(self) -> None:
        conn = self._connection()
        # WAL is a property of the file; it must be set outside a transaction.
        conn.execute("PRAGMA journal_mode = WAL")
        with self._write() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise JobStoreError(
                    f"{self.path} was written by a newer Audiopub (schema {version}); "
                    "upgrade Audiopub to open it"
                )
            if version == 0:
                for statement in _SCHEMA_V1:
                    conn.execute(statement)
                version = 1
            for upgrade in _UPGRADES[version - 1:]:
                for statement in upgrade:
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # --- jobs ----------------------------------------------------------------------------

    def job_dir(self, job_id: str) -> Path:
        """The job's folder: its EPUB copy, chunk audio, chapter audio."""
        return self.jobs_dir / job_id

    def create_job(self, epub: Path, output_path: Path, settings: JobSettings, *,
                   title: str = "", author: str = "", copy_epub: bool = True) -> Job:
        """A queued job; the EPUB is copied into the job's folder so the upload may go away."""
        job_id = uuid.uuid4().hex
        epub_path = self.job_dir(job_id) / EPUB_NAME if copy_epub else Path(epub)
        now = time.time()
        row = (job_id, JobState.QUEUED.value, now, now, None, None, title, author,
               str(epub_path), str(output_path), json.dumps(settings.to_dict()), None, None, None)
        try:
            if copy_epub:
                epub_path.parent.mkdir(parents=True)
                shutil.copyfile(epub, epub_path)
            with self._write() as conn:
                conn.execute(_INSERT_JOB, row)
        except BaseException:
            if copy_epub:  # no row without its folder, no folder without its row
                shutil.rmtree(self.job_dir(job_id), ignore_errors=True)
            raise
        return self.get_job(job_id)

    def get_job(self, job_id: str) -> Job:
        row = self._connection().execute(_SELECT_JOB, (job_id,)).fetchone()
        if row is None:
            raise JobNotFound(f"No job with id {job_id}")
        return _job_from_row(row)

    def list_jobs(self, states: Iterable[JobState] | None = None) -> list[Job]:
        """Jobs oldest first (queue order), optionally only those in `states`."""
        jobs = [_job_from_row(r) for r in self._connection().execute(_SELECT_JOBS)]
        if states is None:
            return jobs
        wanted = set(states)
        return [j for j in jobs if j.state in wanted]

    def set_state(self, job_id: str, state: JobState, error: str | None = None) -> Job:
        """Move a job to `state` if that transition is allowed (read and write are atomic)."""
        with self._write() as conn:
            _transition(conn, job_id, JobState(state), error)
        return self.get_job(job_id)

    def set_job_info(self, job_id: str, *, title: str | None = None, author: str | None = None,
                     device: str | None = None) -> None:
        """Fill in what is learnt after creation (book metadata, the device really used)."""
        with self._write() as conn:
            _current_state(conn, job_id)  # raises JobNotFound
            conn.execute(_UPDATE_INFO, {"id": job_id, "title": title, "author": author,
                                        "device": device, "now": time.time()})

    def set_job_stage_times(self, job_id: str, stage_times: Mapping[str, float]) -> None:
        """Record seconds spent in job-wide stages (reading, planning, encoding); a stage
        measured again (e.g. encoding after a resume) replaces the earlier figure."""
        with self._write() as conn:
            _current_state(conn, job_id)  # raises JobNotFound
            (stored,) = conn.execute(_SELECT_JOB_STAGE_TIMES, (job_id,)).fetchone()
            times = {**_times_of(stored), **stage_times}
            conn.execute(_UPDATE_JOB_STAGE_TIMES, (_times_json(times), time.time(), job_id))

    def next_queued_job(self) -> Job | None:
        """The job the worker would take next (oldest first), without taking it."""
        row = self._connection().execute(_SELECT_OLDEST_QUEUED).fetchone()
        return _job_from_row(row) if row else None

    def claim_next_job(self) -> Job | None:
        """Atomically take the oldest queued job (queued → running); None if the queue is empty.

        Select and update share one write transaction, so two workers never get the same job.
        """
        with self._write() as conn:
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
        with self._write() as conn:
            ids = [r[0] for r in conn.execute(_SELECT_RUNNING_IDS)]
            for job_id in ids:
                _transition(conn, job_id, JobState.QUEUED, None)
        return ids

    def update_settings(self, job_id: str, settings: JobSettings) -> list[ChunkRow]:
        """Change how a (not running, not done) job is narrated, e.g. before resuming it.

        Every chunk's cache key is recomputed; chunks whose key changed lose their done mark
        (and their chapters too). Returns the chunks that were reset.
        """
        with self._write() as conn:
            _require_state(conn, job_id, _EDITABLE_STATES, "change the settings of")
            conn.execute(_UPDATE_SETTINGS,
                         (json.dumps(settings.to_dict()), time.time(), job_id))
            changed = [
                row for row in map(_chunk_from_row, conn.execute(_SELECT_CHUNKS, (job_id,)))
                if chunk_cache_key(row.text, settings) != row.cache_key
            ]
            for row in changed:
                new_key = chunk_cache_key(row.text, settings)
                conn.execute(_SET_CHUNK_KEY, (new_key, job_id, row.chapter_idx, row.idx))
            for chapter_idx in sorted({row.chapter_idx for row in changed}):
                conn.execute(_RESET_CHAPTER, (job_id, chapter_idx))
        return changed

    def delete_job(self, job_id: str, *, remove_files: bool = True) -> None:
        """Forget a job (and by default delete its folder). A running job must be stopped first."""
        with self._write() as conn:
            if _current_state(conn, job_id) is JobState.RUNNING:
                raise InvalidTransition("Cancel or pause the job before deleting it")
            conn.execute(_DELETE_JOB, (job_id,))
        if remove_files:
            shutil.rmtree(self.job_dir(job_id), ignore_errors=True)

    # --- plan ----------------------------------------------------------------------------

    def write_plan(self, job_id: str, chapters: Sequence[ChapterPlanInput]) -> None:
        """Replace the job's chapters and chunks in one transaction, before any audio is made.

        Cache keys come from the job's stored settings. A chunk whose key was done in the old
        plan keeps its audio; a chapter whose title and chunks are unchanged keeps its done mark.
        Allowed while queued, paused, failed, cancelled or running (the worker plans the job
        it has claimed), not once done.
        """
        with self._write() as conn:
            _require_state(conn, job_id, _PLANNABLE_STATES, "plan")
            settings = _settings_of(conn, job_id)
            done_audio = {row.cache_key: row for row in map(
                _chunk_from_row, conn.execute(_SELECT_DONE_CHUNKS, (job_id,)))}
            done_chapters = _done_chapter_signatures(conn, job_id)
            conn.execute(_DELETE_CHAPTERS, (job_id,))
            for idx, (title, chunks) in enumerate(chapters):
                keys = [chunk_cache_key(chunk.text, settings) for chunk in chunks]
                old = done_chapters.get(idx)
                kept = old[1] if old and old[0] == _signature(title, keys, chunks) else None
                conn.execute(_INSERT_CHAPTER, _new_chapter_row(job_id, idx, title, chunks, kept))
                conn.executemany(_INSERT_CHUNK, [
                    _new_chunk_row(job_id, idx, position, chunk, key, done_audio.get(key))
                    for position, (chunk, key) in enumerate(zip(chunks, keys))
                ])
            conn.execute(_TOUCH_JOB, (time.time(), job_id))

    def has_plan(self, job_id: str) -> bool:
        return bool(self.chapters(job_id))

    def chapters(self, job_id: str) -> list[ChapterRow]:
        rows = self._connection().execute(_SELECT_CHAPTERS, (job_id,))
        return [_chapter_from_row(r) for r in rows]

    def chapter(self, job_id: str, idx: int) -> ChapterRow:
        row = self._connection().execute(_SELECT_CHAPTER, (job_id, idx)).fetchone()
        if row is None:
            raise JobStoreError(f"Job {job_id} has no chapter {idx}")
        return _chapter_from_row(row)

    def chapter_chunks(self, job_id: str, chapter_idx: int) -> list[ChunkRow]:
        """Every chunk of a chapter in order (what the stitcher reads)."""
        rows = self._connection().execute(_SELECT_CHAPTER_CHUNKS, (job_id, chapter_idx))
        return [_chunk_from_row(r) for r in rows]

    def all_chunks(self, job_id: str) -> list[ChunkRow]:
        return [_chunk_from_row(r) for r in self._connection().execute(_SELECT_CHUNKS, (job_id,))]

    def done_chunks(self, job_id: str) -> list[ChunkRow]:
        rows = self._connection().execute(_SELECT_DONE_CHUNKS, (job_id,))
        return [_chunk_from_row(r) for r in rows]

    def pending_chunks(self, job_id: str, chapter_idx: int | None = None) -> list[ChunkRow]:
        """Chunks still to synthesise (pending or failed), in order, one per cache key.

        Chunks with the same key share one audio file, and marking the key done marks them
        all, so only the first of each is listed.
        """
        conn = self._connection()
        if chapter_idx is None:
            rows = conn.execute(_SELECT_NOT_DONE_CHUNKS, (job_id,))
        else:
            rows = conn.execute(_SELECT_CHAPTER_NOT_DONE_CHUNKS, (job_id, chapter_idx))
        seen: set[str] = set()
        pending = []
        for row in map(_chunk_from_row, rows):
            if row.cache_key not in seen:
                seen.add(row.cache_key)
                pending.append(row)
        return pending

    # --- marks ---------------------------------------------------------------------------

    def mark_chunk_done(self, job_id: str, cache_key: str, *, audio_path: str, frames: int,
                        duration_s: float, synth_s: float, provider: str | None,
                        stage_times: Mapping[str, float] | None = None) -> int:
        """Record a chunk's finished audio (call after the file is safely written).

        `stage_times` are the engine's seconds per stage for this chunk (e.g. phonemes, model).

        Marks every chunk of the job with this key; returns how many. 0 means the plan or the
        settings changed meanwhile and the audio must not be used.
        """
        with self._write() as conn:
            times = _times_json(stage_times)
            cursor = conn.execute(_MARK_CHUNKS_DONE, (audio_path, frames, duration_s, synth_s,
                                                      provider, times, job_id, cache_key))
            conn.execute(_TOUCH_JOB, (time.time(), job_id))
        return cursor.rowcount

    def mark_chunk_failed(self, job_id: str, cache_key: str, error: str) -> int:
        """Record a failed attempt; the chunk is retried when the job next runs."""
        with self._write() as conn:
            cursor = conn.execute(_MARK_CHUNKS_FAILED, (error, job_id, cache_key))
            conn.execute(_TOUCH_JOB, (time.time(), job_id))
        return cursor.rowcount

    def reset_chunks(self, job_id: str, cache_keys: Iterable[str]) -> None:
        """Forget the audio of these keys (e.g. its file is gone); their chapters too."""
        with self._write() as conn:
            for key in set(cache_keys):
                conn.execute(_RESET_CHAPTERS_OF_KEY, (job_id, job_id, key))
                conn.execute(_RESET_CHUNKS, (job_id, key))

    def mark_chapter_done(self, job_id: str, idx: int, *, audio_path: str, duration_s: float,
                          synth_s: float, chars_per_s: float | None = None,
                          rtf: float | None = None,
                          stage_times: Mapping[str, float] | None = None) -> bool:
        """Record a chapter's stitched audio and telemetry.

        Refused (False) unless every chunk of the chapter is done: if a chunk was reset while
        the chapter was being stitched, the chapter audio is stale.
        """
        with self._write() as conn:
            if conn.execute(_CHAPTER_HAS_UNFINISHED_CHUNKS, (job_id, idx)).fetchone():
                return False
            times = _times_json(stage_times)
            cursor = conn.execute(_MARK_CHAPTER_DONE, (audio_path, duration_s, synth_s,
                                                       chars_per_s, rtf, times, job_id, idx))
            conn.execute(_TOUCH_JOB, (time.time(), job_id))
        return cursor.rowcount == 1

    def reset_chapter(self, job_id: str, idx: int) -> None:
        """Forget a chapter's audio (e.g. its file is gone); its chunks are kept."""
        with self._write() as conn:
            conn.execute(_RESET_CHAPTER, (job_id, idx))

    def progress(self, job_id: str) -> JobProgress:
        rows = self._connection().execute(_PROGRESS, (job_id,)).fetchall()
        chapters = tuple(
            ChapterProgress(idx=r[0], title=r[1], state=ChapterState(r[2]), chunks_total=r[3],
                            chunks_done=r[4], chars_total=r[5], chars_done=r[6],
                            chars_per_s=r[9], rtf=r[10],
                            stage_times=_times_of(r[11]))
            for r in rows
        )
        return JobProgress(
            chunks_done=sum(c.chunks_done for c in chapters),
            chunks_total=sum(c.chunks_total for c in chapters),
            chars_done=sum(c.chars_done for c in chapters),
            chars_total=sum(c.chars_total for c in chapters),
            audio_s=sum(r[7] for r in rows),
            synth_s=sum(r[8] for r in rows),
            chapters=chapters,
        )


# --- row conversion -----------------------------------------------------------------------


def _current_state(conn: sqlite3.Connection, job_id: str) -> JobState:
    row = conn.execute(_SELECT_STATE, (job_id,)).fetchone()
    if row is None:
        raise JobNotFound(f"No job with id {job_id}")
    return JobState(row[0])


def _transition(conn: sqlite3.Connection, job_id: str, state: JobState,
                error: str | None) -> None:
    current = _current_state(conn, job_id)
    if not current.can_become(state):
        raise InvalidTransition(f"A {current.value} job cannot become {state.value}")
    conn.execute(_UPDATE_STATE,
                 {"id": job_id, "state": state.value, "now": time.time(), "error": error})


def _require_state(conn: sqlite3.Connection, job_id: str, allowed: frozenset[JobState],
                   action: str) -> None:
    state = _current_state(conn, job_id)
    if state not in allowed:
        hint = ": pause it first" if state is JobState.RUNNING else ""
        raise InvalidTransition(f"Cannot {action} a {state.value} job{hint}")


def _settings_of(conn: sqlite3.Connection, job_id: str) -> JobSettings:
    return _job_from_row(conn.execute(_SELECT_JOB, (job_id,)).fetchone()).settings


def _times_json(stage_times: Mapping[str, float] | None) -> str | None:
    """Seconds per stage as stored: JSON, or NULL when there are none."""
    return json.dumps(dict(stage_times)) if stage_times else None


def _times_of(stored: str | None) -> dict[str, float]:
    return json.loads(stored) if stored else {}


def _job_from_row(row: Sequence[Any]) -> Job:
    (job_id, state, created_at, updated_at, started_at, finished_at, title, author,
     epub_path, output_path, settings_json, error, device, stage_times_json) = row
    return Job(
        id=job_id, state=JobState(state), created_at=created_at, updated_at=updated_at,
        started_at=started_at, finished_at=finished_at, title=title, author=author,
        epub_path=Path(epub_path), output_path=Path(output_path),
        settings=JobSettings.from_dict(json.loads(settings_json)), error=error, device=device,
        stage_times=_times_of(stage_times_json),
    )


def _chapter_from_row(row: Sequence[Any]) -> ChapterRow:
    (job_id, idx, book_index, title, chars, state, audio_path, duration_s, synth_s,
     chars_per_s, rtf, stage_times_json) = row
    return ChapterRow(
        job_id=job_id, idx=idx, book_index=book_index, title=title, chars=chars,
        state=ChapterState(state), audio_path=audio_path, duration_s=duration_s,
        synth_s=synth_s, chars_per_s=chars_per_s, rtf=rtf,
        stage_times=_times_of(stage_times_json),
    )


def _chunk_from_row(row: Sequence[Any]) -> ChunkRow:
    (job_id, chapter_idx, idx, text, ends_paragraph, cache_key, state, audio_path, frames,
     duration_s, synth_s, provider, attempts, error, stage_times_json) = row
    return ChunkRow(
        job_id=job_id, chapter_idx=chapter_idx, idx=idx, text=text,
        ends_paragraph=bool(ends_paragraph), cache_key=cache_key, state=ChunkState(state),
        audio_path=audio_path, frames=frames, duration_s=duration_s, synth_s=synth_s,
        provider=provider, attempts=attempts, error=error,
        stage_times=_times_of(stage_times_json),
    )


_Signature = tuple[str, tuple[tuple[str, bool], ...]]


def _signature(title: str, keys: Sequence[str], chunks: Sequence[Chunk | ChunkRow]) -> _Signature:
    """What a chapter's audio depends on: its title, chunk audio and pauses, in order."""
    return title, tuple(zip(keys, (bool(c.ends_paragraph) for c in chunks)))


def _done_chapter_signatures(conn: sqlite3.Connection, job_id: str
                             ) -> dict[int, tuple[_Signature, ChapterRow]]:
    """idx → (signature, row) for the job's done chapters (every chunk of which is done)."""
    chunks: dict[int, list[ChunkRow]] = {}
    for row in map(_chunk_from_row, conn.execute(_SELECT_CHUNKS, (job_id,))):
        chunks.setdefault(row.chapter_idx, []).append(row)
    done = {}
    for chapter in map(_chapter_from_row, conn.execute(_SELECT_CHAPTERS, (job_id,)).fetchall()):
        if chapter.state is ChapterState.DONE:
            rows = chunks.get(chapter.idx, [])
            signature = _signature(chapter.title, [r.cache_key for r in rows], rows)
            done[chapter.idx] = (signature, chapter)
    return done


def _new_chapter_row(job_id: str, idx: int, title: str, chunks: Sequence[Chunk],
                     done: ChapterRow | None) -> tuple[Any, ...]:
    """A plan row; `done` is the old plan's finished chapter with the same signature, if any."""
    book_index = chunks[0].chapter_index if chunks else None
    chars = sum(len(c.text) for c in chunks)
    if done is None:
        return (job_id, idx, book_index, title, chars, ChapterState.PENDING.value,
                None, None, None, None, None, None)
    return (job_id, idx, book_index, title, chars, ChapterState.DONE.value, done.audio_path,
            done.duration_s, done.synth_s, done.chars_per_s, done.rtf,
            _times_json(done.stage_times))


def _new_chunk_row(job_id: str, chapter_idx: int, idx: int, chunk: Chunk, key: str,
                   done: ChunkRow | None) -> tuple[Any, ...]:
    """A plan row; `done` is a finished chunk of the old plan with the same key, if any."""
    if done is None:
        return (job_id, chapter_idx, idx, chunk.text, chunk.ends_paragraph, key,
                ChunkState.PENDING.value, None, None, None, None, None, 0, None, None)
    return (job_id, chapter_idx, idx, chunk.text, chunk.ends_paragraph, key,
            ChunkState.DONE.value, done.audio_path, done.frames, done.duration_s, done.synth_s,
            done.provider, done.attempts, None,
            _times_json(done.stage_times))
