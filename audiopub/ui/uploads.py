"""Uploaded books: saved under a random name (with the book's extension, which tells a text
file's format) in the server's scratch folder in the data dir
(`atomic.scratch_dir`, so a killed server's uploads go at the next start), within the size limit.

The client's file name is only ever shown, never used as a path: a name like
`../../.bashrc` must not be able to choose where bytes land.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Final, Protocol

from audiopub import settings
from audiopub.book.reading import BOOK_SUFFIXES, book_suffix
from audiopub.errors import UploadRejected
from audiopub.figures import size
from audiopub.jobs.disk_full import disk_full, is_disk_full

# Uploads nobody turned into a job in the data dir's uploads/, where they were kept before
# the scratch folder, are removed at start-up after this long.
STALE_AFTER_S: Final = 24 * 3600
SUFFIX: Final = ".epub"  # for a name without a book extension (the content tells the format)
# What a browser's multipart request adds around the file: boundaries, headers, its name.
MULTIPART_FRAMING_BYTES: Final = 64 * 1024
# The longest file name the page sends. The server's multipart parser (python-multipart)
# refuses a part header over 4,224 bytes, where the name goes; at up to 4 bytes a character
# (UTF-8, or %22 for a quote) 255 fits with room to spare, and no file system allows more.
MAX_NAME_CHARS: Final = 255
# What the page asks for once space is freed, where the command line says to run it again.
UPLOAD_AGAIN: Final = "upload the book again"
GENERATE_AGAIN: Final = "press Generate again"


class FileUploadLike(Protocol):
    """What we need from NiceGUI's `FileUpload` (kept abstract so tests can pass their own)."""

    name: str

    def size(self) -> int: ...

    async def save(self, path: str | Path) -> None: ...


def max_upload_bytes() -> int:
    return settings.MAX_UPLOAD_MB * 1_000_000


def max_request_bytes(upload_limit: int) -> int:
    """The most an HTTP request may send: the largest upload, in its multipart framing. The
    server refuses more (413) while receiving, so a client that ignores the page's limit
    never gets more than this onto the disk."""
    return upload_limit + MULTIPART_FRAMING_BYTES


async def save_upload(file: FileUploadLike, folder: Path, max_bytes: int) -> Path:
    """Save `file` as `<folder>/<uuid><its book extension>`; raise UploadRejected if it is
    empty or too big, DiskFull (in the page's words) if the disk has no room for it. A file
    that could not be saved whole is not kept."""
    length = file.size()
    if length == 0:
        raise UploadRejected(f"{display_name(file.name)} is empty.")
    if length > max_bytes:
        raise UploadRejected(
            f"{display_name(file.name)} is {size(length)}; the limit is {size(max_bytes)}."
        )
    target = folder / f"{uuid.uuid4().hex}{book_suffix(file.name or '') or SUFFIX}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        await file.save(target)
    except OSError as exc:
        target.unlink(missing_ok=True)
        if is_disk_full(exc):
            raise disk_full(folder, length, UPLOAD_AGAIN) from None
        raise UploadRejected(
            f"{display_name(file.name)} could not be saved: {exc.strerror or exc}."
        ) from None
    except BaseException:  # the tab went, or the server stops: half a book is no use
        target.unlink(missing_ok=True)
        raise
    return target


def display_name(name: str | None) -> str:
    """The client's name for the file, for messages only (at most 120 characters)."""
    shown = (name or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    return (shown[:117] + "…") if len(shown) > 120 else (shown or "The file")


def remove_stale_uploads(folder: Path, max_age_s: float = STALE_AFTER_S) -> int:
    """Delete uploads older than `max_age_s`; returns how many."""
    return sum(remove_older_than(folder, f"*{suffix}", max_age_s) for suffix in BOOK_SUFFIXES)


def remove_older_than(folder: Path, pattern: str, max_age_s: float) -> int:
    """Delete the files in `folder` matching `pattern` last changed over `max_age_s` ago;
    returns how many (a file removed meanwhile by someone else is not counted)."""
    if not folder.is_dir():
        return 0
    cutoff = time.time() - max_age_s
    removed = 0
    for path in folder.glob(pattern):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed
