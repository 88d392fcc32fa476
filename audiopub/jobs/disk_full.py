"""A full disk, told apart from other failures, and how much the person is asked to free.

A job writes in four places, and each says "full" its own way: a chunk's audio (the file
write raises OSError ENOSPC), a chapter WAV and ffmpeg's levelled chapter or book (`audio`
raises DiskFull), and the job store (SQLite: "database or disk is full", or a disk I/O error
where its shared-memory file can't grow on a full disk). Any of them pauses the job rather
than failing it; the message names the folder and how many MB to free.

Recording the pause is a write too. So a runner keeps a few MB taken in the data directory
(`keep_room`) and gives them back when the disk fills (`give_room`): the store then has the
room to say the job is paused, and why.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Final

from audiopub.errors import DiskFull
from audiopub.jobs.sqlite_codes import SQLITE_FULL, SQLITE_IOERR

# What a full disk is asked to free at least: room for the store, a chapter and some chunks.
MIN_FREE_BYTES: Final = 100_000_000
# Less free than this on the store's filesystem makes a disk I/O error a full disk.
NO_ROOM_BYTES: Final = 1 << 20
_FULL_ERRNOS: Final = (errno.ENOSPC, errno.EDQUOT)
ROOM_FILE: Final = ".room-for-the-store"  # in the data directory, beside the store
ROOM_BYTES: Final = 4 << 20  # a state change needs a few pages of the store's log
# What the command line says to do once space is freed.
RUN_AGAIN: Final = "run the same command again (or resume the job); finished chunks are kept"


def is_disk_full(error: BaseException, folder: Path | None = None) -> bool:
    """Whether `error`, or one it was raised from, is a write that found no room.

    SQLite's disk I/O errors count only when `folder` (the store's) has almost nothing free.
    """
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, DiskFull):
            return True
        if isinstance(seen, OSError) and seen.errno in _FULL_ERRNOS:
            return True
        if isinstance(seen, sqlite3.OperationalError) and _sqlite_full(seen, folder):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def free_bytes(folder: Path) -> int:
    """Bytes free on `folder`'s filesystem (of its nearest existing parent); 0 if unknown."""
    for candidate in (Path(folder), *Path(folder).parents):
        try:
            return shutil.disk_usage(candidate).free
        except OSError:
            continue
    return 0


def disk_full(folder: Path, needed_bytes: int = 0, then: str = RUN_AGAIN) -> DiskFull:
    """The error that pauses a job: which folder is full, how much to free there, and `then`
    what to do (the command line's words unless a front end gives its own)."""
    short = max(needed_bytes - free_bytes(folder), MIN_FREE_BYTES)
    return DiskFull(
        f"The disk is full ({folder}): free {-(-short // 1_000_000):,} MB and {then}.", folder
    )


def in_words_of(error: DiskFull, then: str) -> str:
    """`error`'s message with `then` for what to do once space is freed, where it gives the
    command line's words: a page says what to press."""
    return str(error).replace(RUN_AGAIN, then)


def keep_room(folder: Path) -> None:
    """Take ROOM_BYTES in `folder` for the store to record a pause in (as much of it as is
    free, on a disk already nearly full). Random bytes, which no filesystem compresses away."""
    room = Path(folder) / ROOM_FILE
    try:
        with open(room, "ab") as file:
            while file.tell() < ROOM_BYTES:
                file.write(os.urandom(min(1 << 20, ROOM_BYTES - file.tell())))
                file.flush()
            os.fsync(file.fileno())
    except OSError:  # no room for all of it: what was written is kept
        pass


def give_room(folder: Path) -> None:
    """Free what `keep_room` took, for the store's next writes."""
    (Path(folder) / ROOM_FILE).unlink(missing_ok=True)


def _sqlite_full(error: sqlite3.OperationalError, folder: Path | None) -> bool:
    code = getattr(error, "sqlite_errorcode", None)  # Python 3.11 and later
    if code is not None and code & 0xFF == SQLITE_FULL:
        return True
    if "database or disk is full" in str(error):
        return True
    io_error = code & 0xFF == SQLITE_IOERR if code is not None else "disk I/O error" in str(error)
    return io_error and folder is not None and free_bytes(folder) < NO_ROOM_BYTES
