"""Books wait their turn to be read, and each tab is told its place in line; a tab whose
connection dropped while its book was read gets the book when it comes back.

One real `audiopub serve` process on 127.0.0.1, reading held open on purpose (`held_reading`),
driven by socket clients (`socket_tab`) as many tabs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from epub_factory import build_epub
from server_helper import RunningServer, held_reading_server, wait_until
from socket_tab import SocketTab, close_all

from audiopub.ui.book_reading import READERS

# Away long enough for NiceGUI's defaults to give up on the tab (pings every 4 s, 2 s to answer,
# 3 s to come back) but within the server's own (8 + 4 + 10 s).
AWAY_S = 12.0

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("held")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, held: Path) -> Iterator[RunningServer]:
    """One server for the module (starting one is most of a short test's CPU): each test's
    tabs are new pages, its books titled apart from the others' (`books`)."""
    with held_reading_server(tmp_path_factory.mktemp("server"), held) as app:
        yield app


@pytest.fixture(autouse=True)
def reads_held(held: Path) -> Iterator[None]:
    """Each test starts with reads held again and none under way."""
    assert not list(held.glob("reading-*")), "a read of an earlier test is still held"
    yield
    (held / "release").touch()  # nothing a test leaves held outlives it
    wait_until(lambda: not list(held.glob("reading-*")), "the held reads to finish")
    (held / "release").unlink()


def books(tmp_path: Path, count: int, kind: str) -> list[tuple[Path, str]]:
    """Books titled after the test (`kind`), so that a tab waiting for one cannot be sent
    another test's."""
    titles = [f"{kind} Book Number {n}" for n in range(count)]
    return [
        (build_epub(tmp_path / f"b{n}.epub", [("One", [f"Book {n} begins."])], title=title), title)
        for n, title in enumerate(titles)
    ]


def test_each_waiting_tab_is_told_its_place(
    server: RunningServer, held: Path, tmp_path: Path
) -> None:
    shelf = books(tmp_path, READERS + 2, "Waiting")
    tabs = [SocketTab(server.url) for _ in shelf]
    try:
        for tab, (book, _) in zip(tabs, shelf):
            assert tab.upload(book) == 200
            if tab is tabs[READERS - 1]:  # the readers are busy before any book waits
                wait_until(
                    lambda: len(list(held.glob("reading-*"))) == READERS,
                    f"{READERS} reads in progress",
                )
        tabs[READERS].wait_for("next in line")
        tabs[READERS + 1].wait_for("1 book before it in line")
        assert "in line" not in tabs[0].texts()

        (held / "release").touch()
        for tab, (_, title) in zip(tabs, shelf):
            tab.wait_for(title)
    finally:
        close_all(tabs)


def test_a_tab_that_comes_back_gets_its_book(
    server: RunningServer, held: Path, tmp_path: Path
) -> None:
    ((book, title),) = books(tmp_path, 1, "Returning")
    with SocketTab(server.url) as tab:
        assert tab.upload(book) == 200
        wait_until(lambda: list(held.glob("reading-*")), "the read started")
        tab.drop()
        time.sleep(AWAY_S)
        (held / "release").touch()
        tab.reconnect()
        tab.wait_for(title)
