"""The SQLite file behind the job store: connections, transactions and the schema.

Concurrency: the worker thread writes while the UI and the CLI read, possibly from other
processes. SQLite in WAL mode lets readers see the last committed state without blocking the
writer. Every write runs in one `BEGIN IMMEDIATE` transaction (takes the write lock up front,
waiting up to `busy_timeout`), so a reader never sees half a plan or half a state change.
Each thread gets its own connection; `close()` closes them all.

A full disk: a write raises DiskFull (the job pauses), and a store that can't even be opened
for want of room (SQLite must make its shared-memory file) opens read-only, as last saved,
so `audiopub jobs` still answers.

A damaged file: whatever read or write finds the damage raises StoreDamaged, which says what
was saved of it and what to do (`store_damage`); from then on the store refuses all work. A
file or folder that can't be opened (not writable) raises StoreUnopenable as it opens.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from audiopub.errors import JobStoreError, StoreClosed, StoreDamaged
from audiopub.jobs.disk_full import disk_full, is_disk_full
from audiopub.jobs.store_damage import damaged, is_damage, is_unopenable, unopenable

log = logging.getLogger(__name__)

SCHEMA_VERSION = 9
BUSY_TIMEOUT_MS = 10_000  # how long a writer waits for another writer before giving up

SCHEMA_V1: tuple[str, ...] = (
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
# The statements that take a store from version N to N + 1 are UPGRADES[N - 1].
UPGRADES: tuple[tuple[str, ...], ...] = (
    (  # 2: seconds per stage for each chunk (so a chapter's survive a pause) and for the job
        "ALTER TABLE chunks ADD COLUMN stage_times_json TEXT",
        "ALTER TABLE jobs ADD COLUMN stage_times_json TEXT",
    ),
    (  # 3: the book as read once at submission; each chunk's spoken form, sample rate, wall
        # time and finish time
        """
        CREATE TABLE job_books (
            job_id     TEXT PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
            book_json  TEXT NOT NULL,            -- Book.to_dict(): metadata and chapters
            cover      BLOB,
            cover_type TEXT
        )
        """,
        "ALTER TABLE chunks ADD COLUMN spoken TEXT",  # what the engine reads; NULL: the text
        "ALTER TABLE chunks ADD COLUMN sample_rate INTEGER",
        "ALTER TABLE chunks ADD COLUMN wall_s REAL",  # wall seconds of the run it cost
        "ALTER TABLE chunks ADD COLUMN done_at REAL",  # Unix seconds, when its audio was marked
    ),
    (  # 4: chunk audio shared between jobs: which job made a chunk's audio, found by its key
        "ALTER TABLE chunks ADD COLUMN reused_from TEXT",  # NULL: this job's engine made it
        "CREATE INDEX chunks_by_cache_key ON chunks (cache_key, state)",
    ),
    (  # 5: where each chunk's speech lies in its chapter's audio, and each chapter's length,
        # in frames, as the stitcher wrote them (what subtitles and read-along books are made of)
        "ALTER TABLE chunks ADD COLUMN clip_start INTEGER",
        "ALTER TABLE chunks ADD COLUMN clip_frames INTEGER",
        "ALTER TABLE chapters ADD COLUMN frames INTEGER",
        "ALTER TABLE chapters ADD COLUMN sample_rate INTEGER",
    ),
    (  # 6: the most GPU memory the job's engine held, per device: {"0": MiB}
        "ALTER TABLE jobs ADD COLUMN peak_vram_json TEXT",
    ),
    (  # 7: each chapter's levels before and after it was brought to the audiobook standard
        "ALTER TABLE chapters ADD COLUMN levels_json TEXT",
    ),
    (  # 8: where each of the engine's words starts in a chunk's audio (JSON list of frames;
        # NULL: not known, as for every chunk made before), and the frames the stitcher cut
        # before the chunk's clip, which puts those words in the chapter's audio
        "ALTER TABLE chunks ADD COLUMN word_starts_json TEXT",
        "ALTER TABLE chunks ADD COLUMN clip_lead INTEGER",
    ),
    (  # 9: what proof-listening heard in each chunk's audio, by key (the audio's name), and
        # the verdict on the take that was kept; deleted whenever that audio is made again
        """
        CREATE TABLE chunk_hearings (
            job_id        TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
            cache_key     TEXT NOT NULL,
            heard         TEXT NOT NULL,            -- the transcript of the kept take
            wer           REAL NOT NULL,
            missing_run   INTEGER NOT NULL,         -- longest run of expected words not heard
            flagged       INTEGER NOT NULL,         -- the kept take is still wrong
            reason        TEXT NOT NULL DEFAULT '',
            first_flagged INTEGER NOT NULL,         -- the first take was wrong
            takes         INTEGER NOT NULL DEFAULT 1,  -- takes heard; more than 1: spoken again
            model         TEXT NOT NULL DEFAULT '', -- the listening model, e.g. "base"
            heard_at      REAL NOT NULL,            -- Unix seconds
            PRIMARY KEY (job_id, cache_key)
        )
        """,
    ),
    (  # 10: the voice that reads each chunk, where a cast gives it to a character (NULL: the
        # job's voice)
        "ALTER TABLE chunks ADD COLUMN voice TEXT",
    ),
)


class _Cursor(sqlite3.Cursor):
    """Rows are read as they are fetched: a damaged page can surface at any of them. Each
    step holds the connection's `busy` lock, so `StoreDatabase.close()` never closes a
    connection under a statement another thread is running (SQLite would crash)."""

    connection: _Connection

    def _step(self, step: Callable[..., Any], *args: Any) -> Any:
        with self.connection.busy:
            try:
                return step(*args)
            except sqlite3.DatabaseError as error:
                self.connection.raise_if_damage(error)
                raise

    def execute(self, *args: Any) -> Any:
        return self._step(super().execute, *args)

    def executemany(self, *args: Any) -> Any:
        return self._step(super().executemany, *args)

    def __next__(self) -> Any:
        return self._step(super().__next__)

    def fetchone(self) -> Any:
        return self._step(super().fetchone)

    def fetchall(self) -> list[Any]:
        return self._step(super().fetchall)


class _Connection(sqlite3.Connection):
    """A connection of the store: SQLite's word for a damaged file becomes StoreDamaged."""

    raise_if_damage: Callable[[sqlite3.DatabaseError], None]
    busy: threading.RLock  # held while a statement runs or a row is read, and to close

    def execute(self, *args: Any) -> Any:
        return _Cursor(self).execute(*args)

    def executemany(self, *args: Any) -> Any:
        return _Cursor(self).executemany(*args)


class StoreDatabase:
    """The store's file and its connections: the queue, the ledger and the hearings of
    `JobStore` each read through `connection()` and write in `write()` transactions.

    `StoreDatabase(path, library_dir)` creates the file and schema if needed (upgrading older
    stores in place); `library_dir` is where the web UI keeps its books, which a damaged store
    names. `close()` when done.
    """

    def __init__(self, path: Path, library_dir: Path) -> None:
        self.path = Path(path)
        self.library_dir = library_dir
        self._local = threading.local()
        self._connections: list[_Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self.read_only = False  # True while a full disk keeps the store from being opened
        self.damage: StoreDamaged | None = None  # set once a read or write finds it damaged
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._migrate()
        except (sqlite3.OperationalError, PermissionError) as error:
            if is_disk_full(error, self.path.parent):
                self._open_read_only()
            else:
                self.close()
                if is_unopenable(error):
                    raise unopenable(self.path, error) from error
                raise
        except BaseException:
            self.close()  # don't leak the connection of a store that never opened
            raise

    def connection(self) -> sqlite3.Connection:
        """This thread's connection, for reads (each sees the last committed state)."""
        if self._closed:
            raise StoreClosed("The job store is closed")
        if self.damage is not None:  # nothing more is read from or written to it
            raise self._copy_of(self.damage)
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def _connect(self) -> _Connection:
        # isolation_level=None: no implicit transactions; we BEGIN/COMMIT explicitly.
        # check_same_thread=False only so close() may close other threads' connections;
        # each connection is otherwise used by the thread that opened it.
        # Read-only: `immutable` reads the file alone, with no lock and no shared memory to
        # make; a store closed cleanly holds everything there.
        target = f"{self.path.resolve().as_uri()}?immutable=1" if self.read_only else self.path
        conn = sqlite3.connect(
            target,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
            uri=self.read_only,
            factory=_Connection,
        )
        conn.raise_if_damage = self._raise_if_damage
        conn.busy = threading.RLock()
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if self.read_only:
            return conn
        conn.execute("PRAGMA foreign_keys = ON")
        # NORMAL in WAL mode: a power cut may lose the last marks (those chunks are redone),
        # never corrupt the file; chunk files themselves are fsynced before they are marked.
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def _raise_if_damage(self, error: sqlite3.DatabaseError) -> None:
        """StoreDamaged if `error` says the file is damaged: the first saves what can be read."""
        if not is_damage(error):
            return
        with self._lock:
            if self.damage is None:
                self.damage = damaged(self.path, error, self.library_dir)
        raise self._copy_of(self.damage) from error

    @staticmethod
    def _copy_of(damage: StoreDamaged) -> StoreDamaged:
        # One exception object per raise: threads raising the same one would share a traceback.
        return StoreDamaged(str(damage), damage.path, damage.recovered)

    def close(self) -> None:
        """Close every connection this store opened. A statement another thread is running
        ends first; that thread's next read finds the store closed."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for conn in connections:
            with conn.busy:
                conn.close()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; the lock is taken up front so it never fails half-way.

        DiskFull when the disk has no room for it: nothing of it is kept.
        """
        if self.read_only:
            raise disk_full(self.path.parent)
        conn = self.connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            finally:
                if conn.in_transaction:  # the body or the commit raised: undo all of it
                    conn.execute("ROLLBACK")
        except sqlite3.OperationalError as error:
            if is_disk_full(error, self.path.parent):
                raise disk_full(self.path.parent) from error
            raise

    def _open_read_only(self) -> None:
        """Open the store as last saved, for reading: the disk is too full to open it."""
        self.close()
        with self._lock:
            self._closed = False
        self.read_only = True
        self._local = threading.local()
        try:
            version = self.connection().execute("PRAGMA user_version").fetchone()[0]
        except BaseException:
            self.close()
            raise
        if version != SCHEMA_VERSION:
            self.close()
            raise disk_full(self.path.parent)  # it must be upgraded, which writes
        log.warning(
            "The disk is full (%s): the job store is read-only until space is freed.",
            self.path.parent,
        )

    def _migrate(self) -> None:
        conn = self.connection()
        # WAL is a property of the file; it must be set outside a transaction.
        conn.execute("PRAGMA journal_mode = WAL")
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return  # nothing to write, so a store on a full disk still opens
        with self.write() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise JobStoreError(
                    f"{self.path} was written by a newer Audiopub (schema {version}); "
                    "upgrade Audiopub to open it"
                )
            if version == 0:
                for statement in SCHEMA_V1:
                    conn.execute(statement)
                version = 1
            for upgrade in UPGRADES[version - 1 :]:
                for statement in upgrade:
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
