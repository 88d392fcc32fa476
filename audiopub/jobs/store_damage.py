"""A damaged job store: told apart from other failures, what can be saved from it, and what
the person is told to do.

SQLite says a file is damaged in two ways: "file is not a database" (SQLITE_NOTADB: its header
is gone) and "database disk image is malformed" (SQLITE_CORRUPT: a page inside it is not what
it should be). The first fails as the store opens; the second only when a read or a write
reaches the damaged page, which may be long after. The store's connections turn both into
StoreDamaged wherever they surface (`db.StoreDatabase`), and from then on the store refuses
all work: a damaged file is never written to, and never deleted.

What can still be read is copied, table by table and row by row, into a new store beside it
(`<name>.recovered.sqlite3`): a table is read from its first row up to the damage and from its
last row back down to it, so only the rows on damaged pages are lost. The person decides
whether to keep that copy or start with an empty job list; the message says how, and that the
finished books are files of their own.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Final

from audiopub.atomic import atomic_write
from audiopub.errors import StoreDamaged, StoreUnopenable
from audiopub.jobs.sqlite_codes import (
    SQLITE_CANTOPEN,
    SQLITE_CORRUPT,
    SQLITE_NOTADB,
    SQLITE_PERM,
    SQLITE_READONLY,
)

log = logging.getLogger(__name__)

_DAMAGE_CODES: Final = frozenset({SQLITE_CORRUPT, SQLITE_NOTADB})
_UNOPENABLE_CODES: Final = frozenset({SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM})
RECOVERED_SUFFIX: Final = ".recovered"  # jobs.sqlite3 → jobs.recovered.sqlite3


def is_damage(error: BaseException) -> bool:
    """Whether SQLite raised `error` because the file is damaged."""
    if not isinstance(error, sqlite3.DatabaseError):
        return False
    code = getattr(error, "sqlite_errorcode", None)  # Python 3.11 and later
    if code is not None:
        return code & 0xFF in _DAMAGE_CODES
    return any(text in str(error) for text in ("malformed", "not a database"))


def is_unopenable(error: BaseException) -> bool:
    """Whether `error` says the store's file or folder can't be opened or written."""
    if isinstance(error, PermissionError):
        return True
    if not isinstance(error, sqlite3.OperationalError):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _UNOPENABLE_CODES
    return any(text in str(error) for text in ("unable to open", "readonly database"))


def unopenable(path: Path, error: BaseException) -> StoreUnopenable:
    """What to say when the store can't be opened: which file, why, and what to do."""
    reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return StoreUnopenable(
        f"Audiopub can't open its job store {path} ({reason}): the folder {path.parent} or "
        "the file can't be written by you (a read-only folder or disk?). Make them writable "
        "for you, or set AUDIOPUB_DATA_DIR to a folder you can write to."
    )


def recovered_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}{RECOVERED_SUFFIX}{path.suffix}")


def damaged(path: Path, error: BaseException, library: Path | None = None) -> StoreDamaged:
    """What to raise for a damaged store: saves what can be read first (see `salvage`), then
    names the file, what SQLite said, where the copy is, and what to do. `library`: where the
    web app keeps its finished books."""
    saved = salvage(path)
    recovered, jobs = saved if saved is not None else (None, 0)
    if recovered is not None:
        kept = (
            f"What could still be read ({jobs} job{'s' if jobs != 1 else ''}) was saved "
            f"in {recovered}."
        )
        keep = (
            f", then put {recovered.name} in its place to keep the jobs saved, or leave "
            "it out to start with an empty job list"
        )
    else:
        kept, keep = "Nothing could be read from it.", " to start with an empty job list"
    books = f" (the web app's are in {library})" if library is not None else ""
    return StoreDamaged(
        f"The job store {path} is damaged ({error}), so Audiopub can't use it. {kept} To go "
        f"on: move {path.name} (and its -wal and -shm files, if any) out of {path.parent}"
        f"{keep}; or set AUDIOPUB_DATA_DIR to another folder. Finished books are files of "
        f"their own and are not touched{books}.",
        path,
        recovered,
    )


def salvage(path: Path) -> tuple[Path, int] | None:
    """Copy what can be read of the damaged store at `path` into `recovered_path(path)`:
    (that copy, the jobs it holds), or None when nothing could be read or written.

    A copy made since the file last changed is used as it is, so a command run again does not
    read the damaged file again.
    """
    target = recovered_path(path)
    try:
        if target.is_file() and target.stat().st_mtime >= path.stat().st_mtime:
            return target, _count_jobs(target)
    except (OSError, sqlite3.Error):
        pass  # made again below
    try:
        source = _open_damaged(path)
    except sqlite3.Error:
        return None
    try:
        schema = source.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
            "AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index', rowid"
        ).fetchall()
        version = source.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error:
        source.close()
        return None  # the header or the list of tables is gone: nothing to read by
    try:
        with atomic_write(target) as temp:
            copy = sqlite3.connect(temp, isolation_level=None)
            try:
                _copy(source, copy, schema, version)
            finally:
                copy.close()
        return target, _count_jobs(target)
    except (OSError, sqlite3.Error) as exc:  # a read-only folder, a full disk
        log.warning("what could be read from %s was not saved: %s", path, exc)
        return None
    finally:
        source.close()


def _open_damaged(path: Path) -> sqlite3.Connection:
    """The damaged file, opened for reading only (with its log where it has one)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1)
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return conn
    except sqlite3.OperationalError:  # its folder is read-only: no shared memory to make
        conn.close()
        return sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)


def _copy(
    source: sqlite3.Connection,
    copy: sqlite3.Connection,
    schema: list[tuple[str, str, str]],
    version: int,
) -> None:
    copy.execute("BEGIN")
    for kind, name, sql in schema:
        if kind == "table":
            copy.execute(sql)
            _copy_rows(source, copy, name)
    for kind, name, sql in schema:
        if kind != "table":
            try:
                copy.execute(sql)
            except sqlite3.Error as exc:  # rows the damage mixed up; the table stays usable
                log.warning("index %s of the recovered store was left out: %s", name, exc)
    _drop_orphans(copy)
    copy.execute(f"PRAGMA user_version = {int(version)}")
    copy.execute("COMMIT")


def _copy_rows(source: sqlite3.Connection, copy: sqlite3.Connection, table: str) -> None:
    """The rows of `table` before the damage (read forwards) and after it (backwards)."""
    names = [_quoted(row[1]) for row in copy.execute(f"PRAGMA table_info({_quoted(table)})")]
    columns = ", ".join(names)
    insert = (
        f"INSERT OR IGNORE INTO {_quoted(table)} (rowid, {columns}) "
        f"VALUES ({', '.join('?' * (len(names) + 1))})"
    )
    seen: set[int] = set()
    for order in ("ASC", "DESC"):
        try:  # the first row is read as the query starts: the damage may be right there
            for row in source.execute(
                f"SELECT rowid, {columns} FROM {_quoted(table)} ORDER BY rowid {order}"
            ):
                if row[0] in seen:
                    break  # the two directions met: the table had no damaged page after all
                seen.add(row[0])
                copy.execute(insert, row)
        except sqlite3.DatabaseError as error:
            if not is_damage(error):
                raise
            continue  # the damaged page: read the other way, from the other end


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _drop_orphans(copy: sqlite3.Connection) -> None:
    """Rows whose parent row was lost (a chunk without its chapter) go, as a delete of the
    parent would have taken them."""
    while True:
        orphans = copy.execute("PRAGMA foreign_key_check").fetchall()
        if not orphans:
            return
        for table, rowid, _parent, _key in orphans:
            copy.execute(f"DELETE FROM {_quoted(table)} WHERE rowid = ?", (rowid,))


def _count_jobs(path: Path) -> int:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM jobs").fetchone()[0])
    except sqlite3.OperationalError:  # a store with no jobs table
        return 0
    finally:
        conn.close()
