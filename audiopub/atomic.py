"""Files that appear complete or not at all: written beside their destination, then renamed.

    with atomic_write(path) as temp:
        temp.write_bytes(data)

A crash leaves either the old file or the complete new one, plus at worst a temp file named
`<name>.tmp-<pid>-<random>`, which `remove_stale_temp_files` clears away.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

TEMP_MARK: Final = ".tmp-"
# What follows the destination's name in a temp file's name: unique per write, so writers in
# different processes never share a temp file.
_TEMP_TAIL: Final = re.compile(re.escape(TEMP_MARK) + r"\d+-[0-9a-f]+\Z")


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
