"""The server leaves nothing running and nothing on disk when it ends, however it ends.

A real `audiopub serve` process on 127.0.0.1, reading held open on purpose (`held_reading`),
driven by socket clients (`socket_tab`). Killed outright (`kill -9`), the processes that read
books end within seconds instead of running on under PID 1; stopped with SIGTERM while a book
is in its scratch folder, it removes that folder as it goes.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from epub_factory import build_epub
from server_helper import RunningServer, held_reading_server, wait_until
from socket_tab import SocketTab

from audiopub.atomic import SCRATCH_DIR

GONE_WITHIN_S = 10.0  # a reader notices its server's end at once; slow machines take longer
STOP_WITHIN_S = 90.0  # the preview voice, loading after a start, is waited for

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def held(tmp_path: Path) -> Path:
    folder = tmp_path / "held"
    folder.mkdir()
    return folder


@pytest.fixture
def server(tmp_path: Path, held: Path) -> Iterator[RunningServer]:
    with held_reading_server(tmp_path, held) as app:
        yield app


def descendants(pid: int) -> list[int]:
    """Every process `pid` started, and theirs (Linux /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue
    return found + [g for child in found for g in descendants(child)]


def running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting for PID 1 to reap it is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_readers_end_when_the_server_is_killed(
    server: RunningServer, held: Path, tmp_path: Path
) -> None:
    book = build_epub(tmp_path / "held.epub", [("One", ["Held open."])], title="Held Open")
    with SocketTab(server.url) as tab:
        assert tab.upload(book) == 200
        wait_until(lambda: list(held.glob("reading-*")), lambda: "no read started", 30)
        children = descendants(server.process.pid)
        readers = {int(p.name.split("-")[1]) for p in held.glob("reading-*")}
        assert readers <= set(children), (readers, children)

        server.process.send_signal(signal.SIGKILL)
        server.process.wait(STOP_WITHIN_S)
        wait_until(
            lambda: not [p for p in children if running(p)],
            lambda: f"still running: {[p for p in children if running(p)]}",
            GONE_WITHIN_S,
        )


def test_sigterm_removes_the_scratch_folder_with_an_upload_in_it(
    server: RunningServer, held: Path, tmp_path: Path
) -> None:
    """An upload saved and being read when SIGTERM comes: the server ends without waiting
    for the read, and its scratch folder, the upload in it, goes with it."""
    book = build_epub(tmp_path / "held.epub", [("One", ["Held open."])], title="Held Open")
    data = tmp_path / "data"
    with SocketTab(server.url) as tab:
        assert tab.upload(book) == 200
        wait_until(lambda: list(held.glob("reading-*")), lambda: "no read started", 30)
    assert list(data.glob(f"{SCRATCH_DIR}/*/uploads/*.epub"))

    server.process.send_signal(signal.SIGTERM)
    server.process.wait(STOP_WITHIN_S)
    left = sorted(str(p.relative_to(data)) for p in data.glob(f"{SCRATCH_DIR}/*"))
    assert left == [], (left, f"exit status {server.process.returncode}", server.log())
