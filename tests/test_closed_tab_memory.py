"""A closed tab leaves nothing behind on the server: once NiceGUI has forgotten it, its page
(client, book panel) and its book are gone from memory, without waiting for Python's next
full collection of cycles, which a server gone quiet may not make for hours.

One real `audiopub serve` process on 127.0.0.1 driven by socket clients (`socket_tab`) as
tabs. The server runs with Python's automatic cyclic collection off (as between two of its
full collections) and answers a test's question through a file: which objects are alive.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from epub_factory import build_epub, tiny_png
from server_helper import RunningServer, free_port, running_server, serve_command, wait_until
from socket_tab import SocketTab

TABS = 3
# NiceGUI forgets a tab this long after its connection went (the app's own is 10 s: the test
# need not wait that long for what it checks).
RECONNECT_TIMEOUT_S = 1.0
POLL_S = 0.05

pytestmark = pytest.mark.timeout(120)

# The app, with the test's eyes inside: when a file `ask` appears in AUDIOPUB_TEST_ASK, what
# is alive is written to `answer` beside it.
COUNTING_SETUP = """
import gc, json, os, threading, time
from pathlib import Path

gc.disable()  # cycles are collected only where the app asks for it

def counts():
    from nicegui import Client
    from audiopub.book.models import Book
    from audiopub.ui.components.book_card import BookPanel
    live = gc.get_objects()
    try:
        return {{
            "open": sorted(Client.instances),
            # `type(o) is`, not isinstance: isinstance asks each object its class.
            "deleted_clients": sorted(o.id for o in live if type(o) is Client and o.is_deleted),
            # The convert pages of tabs that are gone.
            "gone_pages": sum(1 for o in live if type(o) is BookPanel and o.upload.is_deleted),
            "pages": sum(1 for o in live if type(o) is BookPanel),
            "books": sum(1 for o in live if type(o) is Book),
        }}
    finally:
        del live

def write_answer(folder):
    (folder / "answer.tmp").write_text(json.dumps(counts()))
    (folder / "answer.tmp").replace(folder / "answer")

def answer(folder):
    from nicegui import core
    while True:
        ask = folder / "ask"
        if ask.exists():
            ask.unlink()
            # Counted on the event loop: a count under way holds every object, and must not
            # overlap the app's own collection (on the loop too) or it would keep them.
            core.loop.call_soon_threadsafe(write_answer, folder)
        time.sleep({poll})

threading.Thread(
    target=answer, args=(Path(os.environ["AUDIOPUB_TEST_ASK"]),), daemon=True
).start()

from audiopub.ui import app
app.RECONNECT_TIMEOUT_S = {reconnect}
"""


class CountingServer:
    def __init__(self, running: RunningServer, folder: Path) -> None:
        self.url = running.url
        self.running = running
        self.folder = folder

    def alive(self, timeout_s: float = 30.0) -> dict[str, Any]:
        """What the server holds now."""
        answer = self.folder / "answer"
        answer.unlink(missing_ok=True)
        (self.folder / "ask").touch()
        deadline = time.monotonic() + timeout_s
        while not answer.exists():
            if time.monotonic() > deadline:
                pytest.fail(f"the server did not say what is alive:\n{self.running.log()}")
            time.sleep(POLL_S)
        return dict(json.loads(answer.read_text()))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[CountingServer]:
    folder = tmp_path / "ask"
    folder.mkdir()
    port = free_port()
    setup = COUNTING_SETUP.format(poll=POLL_S, reconnect=RECONNECT_TIMEOUT_S)
    with running_server(
        serve_command(port, setup=setup), tmp_path, port, {"AUDIOPUB_TEST_ASK": str(folder)}
    ) as running:
        yield CountingServer(running, folder)


def test_closed_tabs_leave_no_page_and_no_book(server: CountingServer, tmp_path: Path) -> None:
    shelf = [
        build_epub(
            tmp_path / f"b{n}.epub",
            [("One", [f"Book {n} begins."]), ("Two", ["And it ends."])],
            title=f"Book Number {n}",
            cover=tiny_png(64, 64),
        )
        for n in range(TABS)
    ]
    tabs = [SocketTab(server.url) for _ in shelf]
    ours = {tab.client_id for tab in tabs}
    try:
        for tab, book in zip(tabs, shelf):
            assert tab.upload(book) == 200
        for n, tab in enumerate(tabs):
            tab.wait_for(f"Book Number {n}")
        shown = server.alive()
        assert shown["books"] >= TABS and shown["pages"] >= TABS  # what the tabs hold
    finally:
        for tab in tabs:
            tab.close()

    wait_until(
        lambda: not ours & set(server.alive()["open"]),
        lambda: f"NiceGUI still has the closed tabs: {server.alive()}",
    )
    # Gone soon after, though nothing else happens on the server meanwhile.
    wait_until(
        lambda: (
            (now := server.alive())["books"] == 0
            and now["gone_pages"] == 0
            and not ours & set(now["deleted_clients"])
        ),
        lambda: f"the closed tabs' pages or books are still in memory: {server.alive()}",
        timeout_s=20.0,
    )
