"""Uploaded books read for the page: in worker processes, a few at a time, off the event loop.

Reading a book (unzipping, parsing, walking every page, counting names) is pure Python for
seconds. In a thread of the server it held the GIL against the event loop that answers every
tab: 20 uploads of Moby-Dick at once made `GET /` take 19.9 s instead of 1.4 s. `BookReader`
reads in a pool of `READERS` processes (spawn: the server has threads, which fork does not
copy safely), so at most that many books are read at once and the rest wait their turn while
the server goes on answering.

The worker also makes the cover's thumbnail (`cover_art.fit_cover`, an ffmpeg run): the page
shows the cover by URL (`/covers/<name>`, see `routes`) and never sends the picture itself
through the websocket, where a 100 MB cover as a `data:` URI hung the page and took the server
to 2 GB. Thumbnails live in the data dir's `cover-thumbnails/` until their tab lets go of them.
"""

from __future__ import annotations

import asyncio
import ctypes
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from audiopub.audio.cover_art import THUMBNAIL_SIDE, fit_cover
from audiopub.audio.ffmpeg import ffmpeg_exe
from audiopub.book.lexicons.lexicon import book_lexicon_path
from audiopub.book.lexicons.names import NameCandidate, likely_names
from audiopub.book.models import Book
from audiopub.book.reading import read_book
from audiopub.errors import AudiopubError, BadBook, BadEpub
from audiopub.ui.uploads import remove_older_than

__all__ = [
    "READERS",
    "BookReader",
    "ReadFailed",
    "UploadedBook",
    "read_upload",
    "remove_stale_thumbnails",
    "remove_thumbnail",
    "thumbnail_path",
]

# Books read at once. Two keep a second upload from waiting behind a long one and leave the
# other cores to the engines; more would only share the same cores.
READERS: Final = min(2, os.cpu_count() or 1)
NAMES_SHOWN: Final = 30  # the book's likeliest names and unusual words listed under it
THUMBNAILS: Final = "cover-thumbnails"
STALE_AFTER_S: Final = 24 * 3600  # thumbnails no tab showed since are removed at start-up
READER_NICENESS: Final = 10  # readers yield the CPU to the server (and to the engines)
PR_SET_PDEATHSIG: Final = 1  # prctl(2): the signal a process gets when its parent ends
PARENT_CHECK_S: Final = 1.0  # where there is no prctl: how often a reader looks for its server
_THUMBNAIL_NAME = re.compile(r"[0-9a-f]{32}\.(?:jpg|png)")


@dataclass(frozen=True)
class UploadedBook:
    """What the page shows of an upload."""

    book: Book
    names: list[NameCandidate]
    lexicon_path: Path  # the book's own lexicon (its key is a digest of the file)
    thumbnail: str | None  # the cover's file name in the thumbnails folder; None: no cover


class ReadFailed(Exception):
    """A reader bug in a worker, as plain text: its exception may not survive pickling."""

    def __init__(self, kind: str, message: str, details: str) -> None:
        super().__init__(kind, message, details)
        self.kind, self.message, self.details = kind, message, details

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def read_upload(path: Path, data_dir: Path, name: str | None = None) -> UploadedBook:
    """Read one upload (in a worker process): book, names to check, lexicon path, thumbnail.
    `name`: the person's name for the file, which messages and the server's log say (the
    upload itself is kept under a random one)."""
    try:
        book = read_book(path, name)
        names = likely_names(book, None, NAMES_SHOWN)
        # A job copies the upload byte for byte: its book key, so its lexicon, is the same.
        lexicon_path = book_lexicon_path(data_dir, path)
    except AudiopubError as exc:
        raise BadBook(str(exc)) from None  # one message: every subclass comes back whole
    except Exception as exc:  # noqa: BLE001 - a bug must still reach the page as a message
        raise ReadFailed(type(exc).__name__, str(exc), traceback.format_exc()) from None
    thumbnail = None
    if book.cover is not None:
        folder = data_dir / THUMBNAILS
        try:
            folder.mkdir(parents=True, exist_ok=True)
            made = fit_cover(
                ffmpeg_exe(),
                book.cover,
                THUMBNAIL_SIDE,
                folder / uuid.uuid4().hex,
                "the page shows no cover",
            )
        except OSError:  # a full disk: the book is shown all the same, without its cover
            made = None
        thumbnail = made.name if made is not None else None
    return UploadedBook(book, names, lexicon_path, thumbnail)


class BookReader:
    """Reads uploads in `workers` processes; the pool starts with the first upload."""

    def __init__(self, data_dir: Path, workers: int = READERS) -> None:
        self.data_dir = Path(data_dir)
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()  # read() runs on the loop, close() may not
        self._closed = False
        self._queue = _Turns(workers)

    async def read(
        self,
        path: Path,
        name: str | None = None,
        waiting: Callable[[int | None], None] = lambda ahead: None,
    ) -> UploadedBook:
        """The upload at `path` (`name`: the person's name for it), read in a worker; BadEpub
        if it can't be read, ReadFailed on a reader bug. Books are read in the order they
        came: while all workers are busy, `waiting` is told how many books wait before this
        one each time that changes, and None when its turn comes."""
        await self._queue.take_turn(waiting)
        try:
            pool = self._current_pool()
            loop = asyncio.get_running_loop()
            try:
                # `read_upload` is looked up now, not bound at import: tests hold reading there.
                return await loop.run_in_executor(pool, read_upload, path, self.data_dir, name)
            except BrokenProcessPool:
                self._drop_pool(pool)
                if self._closed:
                    raise BadEpub("The server is shutting down; the book was not read") from None
                raise BadEpub(
                    f"{name or path.name}: reading it stopped unexpectedly (out of "
                    "memory?); try again, or with a smaller book"
                ) from None
        finally:
            self._queue.hand_on()

    def _current_pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._closed:
                raise BadEpub("The server is shutting down; the book was not read")
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    self.workers,
                    initializer=_start_reader,
                    initargs=(os.getpid(),),
                    mp_context=multiprocessing.get_context("spawn"),
                )
            return self._pool

    def _drop_pool(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the workers now: a book being read is abandoned (its page is going away too),
        and a long read must not hold up the server's exit, nor its scratch folder's removal."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            _stop_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """End the pool's processes, busy or not (`terminate_workers` from Python 3.14 on)."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


class _Turns:
    """First come, first read: `slots` books at a time, the others wait in line knowing their
    place (on the event loop only)."""

    def __init__(self, slots: int) -> None:
        self.free = slots
        self.line: list[tuple[asyncio.Future[None], Callable[[int | None], None]]] = []

    async def take_turn(self, waiting: Callable[[int | None], None]) -> None:
        if self.free > 0 and not self.line:
            self.free -= 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.line.append((turn, waiting))
        waiting(len(self.line) - 1)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.hand_on()  # its turn had come: the next one's now
            else:
                self.line = [(t, w) for t, w in self.line if t is not turn]
                self._tell_places()
            raise

    def hand_on(self) -> None:
        """A read ended: the first in line takes its place."""
        while self.line:
            turn, waiting = self.line.pop(0)
            if not turn.done():  # one cancelled meanwhile (its tab went) has left the line
                turn.set_result(None)
                waiting(None)
                self._tell_places()
                return
        self.free += 1

    def _tell_places(self) -> None:
        for ahead, (_, waiting) in enumerate(self.line):
            waiting(ahead)


def _start_reader(server_pid: int) -> None:
    """Ctrl-C in the terminal reaches the workers too: only the server should act on it. And
    a server killed outright (`kill -9`, out of memory) must not leave its readers running:
    each ends with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Reading competes for the CPU with the server's event loop, which answers every tab: 20
    # books read at once on a busy machine held it up for 13 s and tabs lost their sockets.
    os.nice(READER_NICENESS)
    if sys.platform == "linux":
        # The kernel kills this process when the thread that started it ends: the server's
        # event loop, which runs as long as the server does.
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    else:
        threading.Thread(
            target=_end_with, args=(server_pid,), daemon=True, name="audiopub-reader-watch"
        ).start()
    if os.getppid() != server_pid:  # the server died before this reader got here
        os._exit(1)


def _end_with(server_pid: int) -> None:
    """End this process once `server_pid` is no longer its parent."""
    while os.getppid() == server_pid:
        time.sleep(PARENT_CHECK_S)
    os._exit(1)


def thumbnail_path(data_dir: Path, name: str) -> Path | None:
    """The thumbnail called `name` (as `UploadedBook.thumbnail` gives it), if it exists; None
    for any other name, so no path can come from a request."""
    if not _THUMBNAIL_NAME.fullmatch(name):
        return None
    path = Path(data_dir) / THUMBNAILS / name
    return path if path.is_file() else None


def remove_thumbnail(data_dir: Path, name: str | None) -> None:
    if name is not None and (path := thumbnail_path(data_dir, name)) is not None:
        path.unlink(missing_ok=True)


def remove_stale_thumbnails(data_dir: Path, max_age_s: float = STALE_AFTER_S) -> int:
    """Delete thumbnails older than `max_age_s` (a server stopped while tabs showed them)."""
    return remove_older_than(Path(data_dir) / THUMBNAILS, "*", max_age_s)
