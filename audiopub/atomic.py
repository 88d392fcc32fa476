"""Files that appear complete or not at all: written beside their destination, then renamed.

    with atomic_write(path) as temp:
        temp.write_bytes(data)

A crash leaves either the old file or the complete new one, plus at worst a temp file named
`<name>.tmp-<pid>-<random>`, which `remove_stale_temp_files` clears away.

Working files that are no one's result (an upload not yet a job, ffmpeg's lists for one run)
go in `scratch_dir()`: one folder per process under the data directory, removed when the
process exits, and by the next process to start if it was killed. A lock file beside the
folder, held while its process lives, says whether it is still in use; the OS lets go of it
however the process ends, and a pid used again by another process can't fool it.
`claim_folder` and `remove_orphaned_folders` do the same for folders elsewhere.
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from filelock import FileLock, Timeout

from audiopub import settings

TEMP_MARK: Final = ".tmp-"
# What follows the destination's name in a temp file's name: unique per write, so writers in
# different processes never share a temp file.
_TEMP_TAIL: Final = re.compile(re.escape(TEMP_MARK) + r"\d+-[0-9a-f]+\Z")
SCRATCH_DIR: Final = "work"  # in the data directory: `<pid>-<random>/` and its `.lock`
_LOCK_SUFFIX: Final = ".lock"
# This process's scratch folder and the lock that marks it in use, per data directory.
_scratch: dict[Path, tuple[Path, FileLock]] = {}
_scratch_guard = threading.Lock()


@contextmanager
def atomic_write(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside `path` (its folder is created) to write the file at.

    When the block ends, the file is fsynced, renamed to `path`, and the folder fsynced so the
    rename survives a power cut. If the block raises, the temp file is removed, `path` is left
    as it was, and the exception propagates.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f"{path.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")
    try:
        yield temp
        _fsync_file(temp)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def link_or_copy(source: Path, path: Path) -> None:
    """Make `path` a hard link to `source` (one copy on disk, and the file survives the
    deletion of either name), or a copy where links are impossible (another filesystem, a
    filesystem without them); atomically either way."""
    with atomic_write(path) as temp:
        try:
            os.link(source, temp)
        except OSError:
            if not Path(source).is_file():
                raise  # gone: nothing to copy either
            shutil.copyfile(source, temp)


def remove_stale_temp_files(folder: Path, name: str | None = None) -> list[Path]:
    """Delete the temp files interrupted writes left in `folder` (only those meant to become
    `name`, if given); returns them.

    Only while nobody is writing there: a temp file being written looks just the same.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    stale = [p for p in folder.iterdir() if _is_temp_file_of(p.name, name) and p.is_file()]
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


def _is_temp_file_of(file_name: str, name: str | None) -> bool:
    tail = _TEMP_TAIL.search(file_name)
    return tail is not None and (name is None or file_name[: tail.start()] == name)


def _fsync_file(path: Path) -> None:
    # "rb+" because Windows only commits handles opened for writing.
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def _fsync_dir(folder: Path) -> None:
    """Make a rename durable where the OS allows it (POSIX: Windows can't open folders so)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the data itself is safe
    finally:
        os.close(fd)


def scratch_dir(data_dir: Path | None = None) -> Path:
    """This process's folder for working files in `data_dir` (default: the data directory),
    made on first use, when the folders of processes that are gone are removed too."""
    root = Path(data_dir if data_dir is not None else settings.data_dir()) / SCRATCH_DIR
    with _scratch_guard:
        own = _scratch.get(root)
        if own is not None and own[0].is_dir():
            return own[0]
        root.mkdir(parents=True, exist_ok=True)
        remove_orphaned_scratch(root.parent)
        folder, lock = claim_folder(root)
        _scratch[root] = (folder, lock)
        atexit.register(_remove_scratch, folder, lock)
        return folder


def remove_orphaned_scratch(data_dir: Path | None = None) -> list[Path]:
    """Delete the scratch folders of processes that are gone (a crash, a kill); returns them.
    Those of running processes, this one's included, are kept."""
    root = Path(data_dir if data_dir is not None else settings.data_dir()) / SCRATCH_DIR
    return remove_orphaned_folders(root)


def claim_folder(root: Path, prefix: str = "") -> tuple[Path, FileLock]:
    """A new folder `<root>/<prefix><pid>-<random>/` of this process's, with its lock file
    beside it held: `remove_orphaned_folders` leaves it alone while the process lives."""
    name = f"{prefix}{os.getpid()}-{secrets.token_hex(4)}"
    lock = FileLock(str(root / f"{name}{_LOCK_SUFFIX}"), thread_local=False)
    lock.acquire()  # before the folder exists: no one sees it unclaimed
    folder = root / name
    folder.mkdir()
    return folder, lock


def remove_orphaned_folders(root: Path, prefix: str = "") -> list[Path]:
    """Delete the folders in `root` that `claim_folder(root, prefix)` made for processes that
    are gone, and their lock files; returns the folders. Other names in `root` are kept."""
    if not root.is_dir():
        return []
    claimed = re.compile(re.escape(prefix) + r"\d+-[0-9a-f]+")
    names = {p.name.removesuffix(_LOCK_SUFFIX) for p in root.iterdir()}
    removed = []
    for name in sorted(n for n in names if claimed.fullmatch(n)):
        lock = FileLock(str(root / f"{name}{_LOCK_SUFFIX}"), thread_local=False)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            continue  # its process is alive
        except OSError:
            continue  # another user's, in a folder shared with them (the system temp folder)
        try:
            if (root / name).is_dir():
                shutil.rmtree(root / name, ignore_errors=True)
                removed.append(root / name)
            Path(lock.lock_file).unlink(missing_ok=True)
        finally:
            lock.release()
    return removed


def _remove_scratch(folder: Path, lock: FileLock) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    Path(lock.lock_file).unlink(missing_ok=True)
    lock.release()
