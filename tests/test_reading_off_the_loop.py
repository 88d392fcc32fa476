"""Books are read off the server's event loop, at most `READERS` at a time.

One real `audiopub serve` process, on 127.0.0.1 only, with reading held open on purpose
(`held_reading`): each read in progress leaves a file named after its process and waits for a
`release` file. `READERS` + 1 tabs upload a book each while every read is held. Then: exactly
`READERS` reads are in progress, in processes other than the server's; the last book waits
its turn; the server answers `GET /` and opens a new tab meanwhile;
once released, every tab shows its own book and nothing is left held.
"""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from epub_factory import build_epub
from server_helper import RunningServer, browser, held_reading_server, require_chromium, wait_until

from audiopub.ui.book_reading import READERS

TAB_TIMEOUT_MS = 30_000
SETTLE_S = 1.5  # one more read, were it allowed, would have started by then

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


def reading_now(held: Path) -> list[Path]:
    return sorted(held.glob("reading-*"))


def open_tab(chrome: Any, url: str) -> Any:
    page = chrome.new_context().new_page()
    page.goto(url)
    page.wait_for_function("() => window.did_handshake === true", timeout=TAB_TIMEOUT_MS)
    page.locator("input[type=file]").wait_for(state="attached", timeout=TAB_TIMEOUT_MS)
    return page


def test_reads_are_bounded_and_the_page_answers_meanwhile(
    server: RunningServer, held: Path, tmp_path: Path
) -> None:
    titles = [f"Book Number {n}" for n in range(1, READERS + 2)]
    books = [
        build_epub(tmp_path / f"b{n}.epub", [("One", [f"Book {n} begins."])], title=title)
        for n, title in enumerate(titles)
    ]
    with browser(require_chromium()) as chrome:
        tabs = [open_tab(chrome, server.url) for _ in books]
        for tab, book in zip(tabs, books):
            tab.locator("input[type=file]").set_input_files(book)
        for tab in tabs:
            tab.get_by_text("Reading the book…").wait_for(timeout=TAB_TIMEOUT_MS)

        wait_until(lambda: len(reading_now(held)) >= READERS, f"{READERS} reads in progress")
        time.sleep(SETTLE_S)
        held_now = reading_now(held)
        assert len(held_now) == READERS, [p.name for p in held_now]  # the last one waits
        pids = {int(p.name.split("-")[1]) for p in held_now}
        assert server.process.pid not in pids and len(pids) == READERS  # worker processes

        # While both readers are busy, the server still answers and opens a fresh tab.
        with urllib.request.urlopen(server.url, timeout=15) as response:
            assert response.status == 200
        late = open_tab(chrome, server.url)
        assert late.get_by_text("Reading the book…").is_hidden()

        (held / "release").touch()
        for tab, title in zip(tabs, titles):
            tab.get_by_text(title, exact=True).wait_for(timeout=TAB_TIMEOUT_MS)
            assert tab.locator(".ap-error:visible").count() == 0
        assert reading_now(held) == []
        # Each tab shows its own book only.
        for tab, title in zip(tabs, titles):
            others = [t for t in titles if t != title]
            assert all(tab.get_by_text(t, exact=True).count() == 0 for t in others)
