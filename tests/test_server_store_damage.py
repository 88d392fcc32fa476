"""`audiopub serve` on a job store damaged in the middle: a real server process on 127.0.0.1
and Debian's Chromium. The page says the store is damaged and what to do, the Library lists
the finished book from its file, and the log says it once, however long the pages poll."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from damaged_store import TITLE, copy_data_dir, damage_header, damage_middle, made_data_dir
from server_helper import (
    browser_context,
    free_port,
    require_chromium,
    running_server,
    serve_command,
)

pytestmark = [pytest.mark.usefixtures("embedded_voice_loaded_once"), pytest.mark.timeout(240)]

WATCH_S = 8.0  # pages open this long: the lists poll the store every 0.5 s


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, shared_models_dir: Path) -> Path:
    return made_data_dir(tmp_path_factory.mktemp("finished"), shared_models_dir)


def serve(port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "audiopub",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-browser",
    ]


def test_the_server_says_the_store_is_damaged_once_and_still_lists_the_book(
    made: Path, tmp_path: Path
) -> None:
    chromium = require_chromium()
    store = copy_data_dir(made, tmp_path / "data")
    damage_middle(store)
    port = free_port()
    with (
        running_server(serve_command(port), tmp_path, port) as server,
        browser_context(chromium, tmp_path) as context,
    ):
        page = context.new_page()
        page.goto(f"{server.url}library")
        page.get_by_text(TITLE).wait_for(timeout=30_000)
        banner = page.locator(".ap-banner.ap-error").first.inner_text(timeout=30_000)
        page.goto(server.url)
        page.get_by_text("is damaged").first.wait_for(timeout=30_000)
        time.sleep(WATCH_S)
        log = server.log()

    assert f"The job store {store} is damaged (database disk image is malformed)" in banner
    assert f"was saved in {store.with_name('jobs.recovered.sqlite3')}" in banner
    assert "AUDIOPUB_DATA_DIR" in banner
    assert "Traceback" not in log, log
    assert log.count("is damaged") == 1, log


def test_the_server_with_a_damaged_header_exits_saying_what_to_do(
    made: Path, tmp_path: Path
) -> None:
    import subprocess

    store = copy_data_dir(made, tmp_path / "data")
    damage_header(store)
    env = {
        "AUDIOPUB_DATA_DIR": str(tmp_path / "data"),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    done = subprocess.run(
        serve(free_port()), env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )

    assert done.returncode == 1
    assert done.stderr.startswith(f"audiopub: error: The job store {store} is damaged ("), (
        done.stderr
    )
    assert "Traceback" not in done.stderr
