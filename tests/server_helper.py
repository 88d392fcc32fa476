"""Running `audiopub serve` in a subprocess and driving Debian's Chromium against it.

Shared by the real-browser tests (test_e2e_browser.py, test_server_resilience.py). Everything
listens on and talks to 127.0.0.1 only. Chromium comes from the system
(scripts/install_browser.sh installs Debian's package); Playwright only brings its driver and
never downloads a browser.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("AUDIOPUB_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
START_TIMEOUT_S = 60.0


def require_chromium() -> Path:
    """Debian's Chromium, or a failed test that says how to get it."""
    if not CHROMIUM.is_file():
        pytest.fail(
            f"Chromium is needed for the browser tests but {CHROMIUM} does not exist. "
            "Install it with scripts/install_browser.sh (Debian's chromium package) or "
            "point AUDIOPUB_CHROMIUM at a Chromium executable."
        )
    return CHROMIUM


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class RunningServer:
    url: str  # http://127.0.0.1:<port>/
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def server(
    command: list[str], tmp_path: Path, port: int, extra_env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """Run the app in its own process on a private data dir (`tmp_path/data`); yield its URL."""
    with running_server(command, tmp_path, port, extra_env) as running:
        yield running.url


@contextmanager
def running_server(
    command: list[str],
    tmp_path: Path,
    port: int,
    extra_env: Mapping[str, str] | None = None,
    ready_headers: Mapping[str, str] | None = None,
) -> Iterator[RunningServer]:
    """`server`, yielding the process and its log (`tmp_path/server-<port>.log`) too.
    `ready_headers` go with the requests that wait for it (a token, say)."""
    # The child must not think it runs under pytest (NiceGUI changes its behaviour then).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "NICEGUI_"))}
    env["AUDIOPUB_DATA_DIR"] = str(tmp_path / "data")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra_env or {})
    workdir = tmp_path / "cwd"  # models/ is looked up here: the repo's own stay out of the test
    workdir.mkdir(exist_ok=True)
    log_path = tmp_path / f"server-{port}.log"
    url = f"http://127.0.0.1:{port}/"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            wait_until_up(url, process, log_path, ready_headers)
            yield RunningServer(url, port, process, log_path)
        finally:
            process.terminate()  # uvicorn shuts down cleanly: the worker stops, NVML closes
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_until_up(
    url: str,
    process: subprocess.Popen[bytes],
    log_path: Path,
    headers: Mapping[str, str] | None = None,
) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the app exited with {process.returncode}:\n{log_path.read_text()}")
        try:
            request = urllib.request.Request(url, headers=dict(headers or {}))
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    pytest.fail(f"the app did not answer on {url}:\n{log_path.read_text()}")


CONTEXT_OPTIONS: dict[str, Any] = {
    "viewport": {"width": 1400, "height": 1000},
    "color_scheme": "light",
    # Headless Chromium may not advance CSS transitions between frames, so a screenshot could
    # catch a progress bar mid-slide; the UI drops them for reduced motion.
    "reduced_motion": "reduce",
}


@contextmanager
def browser_context(chromium: Path, tmp_path: Path) -> Iterator[Any]:
    """One Chromium with a fresh user-data-dir, as a Playwright persistent context."""
    from playwright.sync_api import sync_playwright

    profile = tmp_path / f"chromium-profile-{time.monotonic_ns()}"  # a fresh user-data-dir
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(chromium),
            headless=True,
            args=CHROMIUM_FLAGS,
            accept_downloads=True,
            **CONTEXT_OPTIONS,
        )
        try:
            yield context
        finally:
            context.close()


@contextmanager
def fresh_context(launched: Any) -> Iterator[Any]:
    """A context of a running Chromium (`browser`) set up as `browser_context`'s: as fresh as
    a new profile (its own cookies, storage and cache), without starting another Chromium."""
    context = launched.new_context(accept_downloads=True, **CONTEXT_OPTIONS)
    try:
        yield context
    finally:
        context.close()


@contextmanager
def browser(chromium: Path) -> Iterator[Any]:
    """One Chromium that can hold several independent contexts.

    Playwright gives it a fresh, temporary user-data-dir of its own (and refuses one passed as
    a flag), deleted when the browser closes.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=CHROMIUM_FLAGS
        )
        try:
            yield launched
        finally:
            launched.close()


def voice_field(page: Any) -> Any:
    """The convert page's voice field: a select one can type into to filter its voices."""
    return page.get_by_label("Voice", exact=True)


def wait_for_voice(page: Any, voice: str, timeout_ms: int = 30_000) -> None:
    """Until the convert page shows `voice` as the chosen voice (the engines load first)."""
    from playwright.sync_api import expect

    expect(voice_field(page)).to_have_value(re.compile(re.escape(voice)), timeout=timeout_ms)


# The server tests never hear a preview: the voice the server loads for them as it starts cost
# each start ~5 s of CPU, and a stop waited for it (the warm-up is tested in test_previews.py).
NO_PREVIEW_WARMUP = """
import audiopub.ui.services
audiopub.ui.services.WARM_PREVIEWS = False
"""


def serve_command(port: int, *options: str, setup: str = "") -> list[str]:
    """`audiopub serve` on 127.0.0.1:`port` with `options`, in a fresh Python that first runs
    `setup` (a test's own changes to the app) and leaves out the previews' warm-up."""
    args = ["serve", "--host", "127.0.0.1", "--port", str(port), "--no-browser", *options]
    run = f"from audiopub.cli import main\nraise SystemExit(main({args!r}))\n"
    source = f"{setup}\n{NO_PREVIEW_WARMUP}\n{run}"
    return [sys.executable, "-c", source]


# A server whose reader processes read through tests/held_reading.py (slowed or held on purpose).
HELD_READING_SETUP = """
import sys
sys.path.insert(0, {tests!r})

import held_reading
from audiopub.ui import book_reading
book_reading.read_upload = held_reading.read_upload
"""


@contextmanager
def held_reading_server(tmp_path: Path, held: Path) -> Iterator[RunningServer]:
    """`audiopub serve` on a free port whose reads wait in `held` (AUDIOPUB_TEST_HOLD_READ)."""
    port = free_port()
    setup = HELD_READING_SETUP.format(tests=str(Path(__file__).parent))
    # Started as `main([...])` with the previews' warm-up, as a person's server is: the reads
    # and waits of the reading tests are timed against that.
    args = ["serve", "--host", "127.0.0.1", "--port", str(port), "--no-browser"]
    source = f"{setup}\nfrom audiopub.cli import main\nmain({args!r})\n"
    with running_server(
        [sys.executable, "-c", source], tmp_path, port, {"AUDIOPUB_TEST_HOLD_READ": str(held)}
    ) as app:
        yield app


def wait_until(
    condition: Callable[[], object], what: str | Callable[[], str], timeout_s: float = 30.0
) -> None:
    """Poll `condition` until it holds, else fail saying `what` (called when it is a function,
    so it can describe the state at the deadline)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            said = what() if callable(what) else what
            pytest.fail(f"not in {timeout_s:.0f} s: {said}")
        time.sleep(0.05)
