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


@pytest.fixture
def held(tmp_path: Path) -> Path:
    folder = tmp_path / "held"
    folder.mkdir()
    return folder


@pytest.fixture
def server(tmp_path: Path, held: Path) -> Iterator[RunningServer]:
    with held_reading_server(tmp_path, held) as app:
        yield app


def books(tmp_path: Path, count: int) -> list[tuple[Path, str]]:
    return [
        (
            build_epub(
                tmp_path / f"b{n}.epub", [("One", [f"Book {n} begins."])], title=f"Book Number {n}"
            ),
            f"Book Number {n}",
        )
        for n in range(count)
    ]


def test_each_waiting_tab_is_told_its_place(
    server: RunningServer, held: Path, tmp_path: Path
) -> None:
    shelf = books(tmp_path, READERS + 2)
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
    ((book, title),) = books(tmp_path, 1)
    with SocketTab(server.url) as tab:
        assert tab.upload(book) == 200
        wait_until(lambda: list(held.glob("reading-*")), "the read started")
        tab.drop()
        time.sleep(AWAY_S)
        (held / "release").touch()
        tab.reconnect()
        tab.wait_for(title)
