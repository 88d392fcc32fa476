"""Reading a book slowed or held on purpose, in the server's reader processes.

Server tests put `read_upload` in place of `audiopub.ui.book_reading.read_upload`. It runs in
the reader's worker processes, which import it by name: the server puts this folder on
`sys.path` before its workers start (they inherit it).

- AUDIOPUB_TEST_SLOW_READ names a file: while it exists, each read first sleeps the seconds it
  holds.
- AUDIOPUB_TEST_HOLD_READ names a folder: while it exists, each read leaves a file there named
  after its process (`reading-<pid>-<n>`) and waits until a file `release` appears beside it.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

from audiopub.ui import book_reading

POLL_S = 0.05
_read_upload = book_reading.read_upload  # the real one, as this process imported it
_reads = itertools.count()


def read_upload(path: Path, data_dir: Path, name: str | None = None) -> book_reading.UploadedBook:
    slow = os.environ.get("AUDIOPUB_TEST_SLOW_READ")
    if slow:
        try:
            time.sleep(float(Path(slow).read_text()))
        except FileNotFoundError:
            pass
    hold = os.environ.get("AUDIOPUB_TEST_HOLD_READ")
    if hold and Path(hold).is_dir():
        marker = Path(hold) / f"reading-{os.getpid()}-{next(_reads)}"
        marker.touch()
        try:
            while not (Path(hold) / "release").exists():
                time.sleep(POLL_S)
        finally:
            marker.unlink()
    return _read_upload(path, data_dir, name)
