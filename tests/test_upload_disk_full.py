"""An upload that meets a full disk: the page says so in its own words, nothing half-saved
stays, the settings still change, and once space is freed the same tab takes the book.

A real `audiopub serve` on 127.0.0.1, its data dir on a small tmpfs that the test fills
(mounting needs root, which CI has). Where nothing can be mounted, the server is started with
its upload saving cut off by ENOSPC after the first 100 kB instead, as the kernel would.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from epub_factory import build_epub
from server_helper import RunningServer, free_port, running_server, serve_command
from socket_tab import SocketTab

from audiopub.atomic import SCRATCH_DIR
from audiopub.ui.preferences import Preferences

DISK_MB = 48  # the server's start-up writes (job store, settings) fit; a book won't after
LEFT_FREE = 300_000  # bytes the filled disk keeps free
BOOK_BYTES = 3_000_000

pytestmark = pytest.mark.timeout(180)

SETUP = """
import errno, os, sys
if os.environ.get("AUDIOPUB_TEST_ENOSPC_AFTER"):
    # No disk small enough could be mounted: a save that stops as a full disk stops it.
    from pathlib import Path
    from nicegui.elements import upload_files

    async def save(self, path):
        data = await self.read()
        Path(path).write_bytes(data[:int(os.environ["AUDIOPUB_TEST_ENOSPC_AFTER"])])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    upload_files.SmallFileUpload.save = save
    upload_files.LargeFileUpload.save = save
"""


@contextmanager
def small_disk(folder: Path, megabytes: int) -> Iterator[bool]:
    """A tmpfs of `megabytes` at `folder` for as long as the block runs; False if none could be
    mounted (not root, or no mount in this container)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(folder)],
            check=True,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        yield False
        return
    try:
        yield True
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False, capture_output=True, timeout=30)


def fill(folder: Path, leave: int) -> Path:
    """A file in `folder` that takes all its filesystem's room but `leave` bytes."""
    filler = folder / "filler"
    with filler.open("wb") as file:
        try:
            while True:
                file.write(b"\0" * (1 << 20))
                file.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    with filler.open("r+b") as file:
        file.truncate(max(filler.stat().st_size - leave, 0))
    return filler


@pytest.fixture
def full_disk_server(tmp_path: Path) -> Iterator[tuple[RunningServer, Path | None]]:
    """The server, and the filler that fills its disk (None: ENOSPC is injected instead)."""
    port = free_port()
    command = serve_command(port, setup=SETUP)
    with small_disk(tmp_path / "data", DISK_MB) as mounted:
        env = {} if mounted else {"AUDIOPUB_TEST_ENOSPC_AFTER": "100000"}
        with running_server(command, tmp_path, port, env) as server:
            filler = fill(tmp_path / "data", LEFT_FREE) if mounted else None
            yield server, filler


def test_an_upload_that_fills_the_disk_says_so_in_the_page(
    full_disk_server: tuple[RunningServer, Path | None], tmp_path: Path
) -> None:
    server, filler = full_disk_server
    data = tmp_path / "data"
    book = tmp_path / "big.epub"
    book.write_bytes(os.urandom(BOOK_BYTES))
    with SocketTab(server.url) as tab:
        assert tab.upload(book) == 200
        tab.wait_for("The disk is full (")
        said = tab.texts()
        assert "upload the book again" in said
        assert "run the same command" not in said
        assert list(data.glob(f"{SCRATCH_DIR}/*/uploads/*")) == []  # no half-saved book
        assert "Traceback" not in server.log(), server.log()

        if filler is not None:  # space freed: the same tab takes a book
            filler.unlink()
            good = build_epub(
                tmp_path / "fits.epub", [("One", ["It fits now."])], title="It Fits Now"
            )
            assert tab.upload(good) == 200
            tab.wait_for("It Fits Now")


def test_settings_still_change_on_a_full_disk(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Choosing another engine or voice with no room for the settings file: the choice holds,
    and the log says once, without a traceback, that it is not saved."""
    with small_disk(tmp_path / "small", 1) as mounted:
        if mounted:
            preferences = Preferences(tmp_path / "small" / "ui-settings.json")
            fill(tmp_path / "small", 0)
        else:
            preferences = Preferences(tmp_path / "ui-settings.json")
            preferences._write = _no_room  # type: ignore[method-assign]
        with caplog.at_level("WARNING"):
            assert preferences.update(engine="kokoro", voice="af_heart").voice == "af_heart"
            assert preferences.update(voice="am_adam").voice == "am_adam"
        assert preferences.get().engine == "kokoro" and preferences.get().voice == "am_adam"
        warnings = [r for r in caplog.records if r.name == "audiopub.ui.preferences"]
        assert len(warnings) == 1 and warnings[0].exc_info is None, caplog.text
        assert "ui-settings.json" in warnings[0].getMessage()


def _no_room(*args: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
