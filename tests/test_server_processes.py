"""The server leaves nothing running and nothing on disk when it ends, however it ends.

A real `audiopub serve` process on 127.0.0.1, reading held open on purpose (`held_reading`),
driven by socket clients (`socket_tab`). Killed outright (`kill -9`), the processes that read
books, a PDF's page reader among them, end within seconds instead of running on under PID 1; a
PDF's page reader also stops when the tab that uploaded the book closes; stopped with SIGTERM
while a book is in its scratch folder, it removes that folder as it goes.
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
from test_pdf_limits import busy_pdf

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
    # The tab stays open: a closed tab's upload goes with it, SIGTERM or not.
    tab = SocketTab(server.url)
    assert tab.upload(book) == 200
    wait_until(lambda: list(held.glob("reading-*")), lambda: "no read started", 30)
    assert list(data.glob(f"{SCRATCH_DIR}/*/uploads/*.epub"))

    server.process.send_signal(signal.SIGTERM)
    server.process.wait(STOP_WITHIN_S)
    tab.drop()
    left = sorted(str(p.relative_to(data)) for p in data.glob(f"{SCRATCH_DIR}/*"))
    assert left == [], (left, f"exit status {server.process.returncode}", server.log())


def _pdf_page_readers(server: RunningServer) -> list[int]:
    return [
        pid
        for pid in descendants(server.process.pid)
        if running(pid) and "pdf_pages.py" in Path(f"/proc/{pid}/cmdline").read_bytes().decode()
    ]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("ending", ["tab closed", "server killed"])
def test_a_pdf_page_reader_ends_with_its_tab_or_its_server(
    server: RunningServer, held: Path, tmp_path: Path, ending: str
) -> None:
    """A PDF that takes minutes to read: its page reader (a process of the reader process)
    stops when the tab that uploaded it closes, and when the server is killed outright."""
    (held / "release").touch()  # read at once
    book = tmp_path / "busy.pdf"
    book.write_bytes(busy_pdf())
    tab = SocketTab(server.url)
    try:
        assert tab.upload(book) == 200
        wait_until(lambda: _pdf_page_readers(server), lambda: "no PDF reader started", 60)
        readers = _pdf_page_readers(server)
        if ending == "tab closed":
            tab.close()  # the server lets the tab go once it does not come back in time
            within = 60.0
        else:
            server.process.send_signal(signal.SIGKILL)
            server.process.wait(STOP_WITHIN_S)
            within = GONE_WITHIN_S
        wait_until(
            lambda: not [p for p in readers if running(p)],
            lambda: f"still running: {[p for p in readers if running(p)]}",
            within,
        )
    finally:
        tab.close()
