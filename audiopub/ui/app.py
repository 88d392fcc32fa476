"""Start-up and shutdown of the web UI: services, routes, pages, `ui.run`.

`main()` is what `audiopub` / `audiopub serve` call. It binds 127.0.0.1 unless told otherwise;
the UI has no accounts, so `guard` decides who may use it (host names, origins, a token
beyond loopback).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Sequence
from functools import partial
from importlib import resources
from pathlib import Path
from types import FrameType
from typing import Final

from nicegui import Client, app, background_tasks, core, helpers, run, ui

from audiopub import settings
from audiopub.tts.registry import check_settings
from audiopub.ui import guard, routes
from audiopub.ui.memory import release_soon
from audiopub.ui.pages import convert, lexicon, library, voices
from audiopub.ui.services import Services
from audiopub.ui.uploads import max_request_bytes

log = logging.getLogger(__name__)

# CSS and the icon: the repository's top-level `static/`, installed as this package (a wheel
# copies it, an editable install maps it). NiceGUI serves its own JS and fonts, so nothing is
# fetched from the internet.
STATIC_PACKAGE: Final = "audiopub.static"
DRAIN_INTERVAL_S: Final = 0.5  # the job log is gathered even while no tab is open
# How long a tab whose connection dropped keeps its page on the server, and gets what it missed
# when it comes back (NiceGUI's default is 3 s). NiceGUI pings every 0.8 of it and gives up
# after 0.4 more: a server busy for 6 s dropped every tab's socket, and a tab that came back
# after 3 s found its page gone, and its book with it.
RECONNECT_TIMEOUT_S: Final = 10.0


def static_dir() -> Path | None:
    """The folder the UI serves at /static, or None when the install lacks it."""
    try:
        folder = resources.files(STATIC_PACKAGE)
    except ModuleNotFoundError:
        return None
    # NiceGUI serves a folder on disk; a package imported from a zip file has none.
    return folder if isinstance(folder, Path) and folder.is_dir() else None


def setup(services: Services) -> None:
    """Register routes, pages and lifecycle hooks on `services` (before ui.run)."""
    # FastAPI counts every request body as it arrives (a too-big Content-Length is refused
    # before a byte is read): an upload past the limit is cut off at 413, not spooled whole.
    app.max_body_size = max_request_bytes(services.upload_limit_bytes)
    # NiceGUI's socket.io answers any Origin with CORS headers; only the UI's own pages now.
    core.sio.eio.cors_allowed_origins = guard.socket_origin_check
    static = static_dir()
    if static is not None:
        app.add_static_files("/static", static)
    else:
        log.warning("static files (package %s) not found; the UI will look plain", STATIC_PACKAGE)
    routes.register(services)
    _register_pages(services)
    app.on_startup(partial(_startup, services))
    app.on_shutdown(services.stop)  # waits for the chunk in progress; the job resumes next start
    app.on_shutdown(_stop_outboxes)
    app.on_delete(release_soon)  # a closed tab's page is freed now, not at the next full collection


def _stop_outboxes() -> None:
    """Each tab's outbox loop told to end, before NiceGUI cancels its tasks at shutdown. On
    Python 3.11, `asyncio.wait_for` loses a cancel that lands as the loop wakes for an update:
    the loop goes on, and NiceGUI waits its 2 s limit for it and logs an error."""
    for client in list(Client.instances.values()):
        client.outbox.stop()


def _register_pages(services: Services) -> None:
    """Each page is built for each visit, on the process's one `services`, handed over by the
    closures here. As in NiceGUI's own modular examples (`@ui.page` inside a function called at
    start): what a page uses is in its signature, where a module global, or an attribute on
    NiceGUI's `app` object, would be looked up by every page and set by every test."""

    @ui.page("/")
    def convert_page() -> None:
        convert.page(services)

    @ui.page("/library")
    def library_page() -> None:
        library.page(services)

    @ui.page("/lexicon")
    def lexicon_page() -> None:
        lexicon.page(services)

    @ui.page("/voices")  # `/voices?language=de&quality=medium` opens it filtered
    def voices_page(language: str = "", quality: str = "") -> None:
        voices.page(services, language, quality)


async def _startup(services: Services) -> None:
    await run.io_bound(services.start)
    background_tasks.create(_drain_events(services), name="audiopub-events")
    # Load the engines now (the registry keeps them), so the first page shows them at once.
    background_tasks.create(run.io_bound(services.catalog.engines), name="audiopub-engines")


async def _drain_events(services: Services) -> None:
    while True:
        services.activity.drain()
        await asyncio.sleep(DRAIN_INTERVAL_S)


def main(
    host: str = "127.0.0.1",
    port: int = 8080,
    show: bool = True,
    allowed_hosts: Sequence[str] = (),
    services: Services | None = None,
) -> None:
    """Run the web UI until interrupted.

    `allowed_hosts`: names besides this computer's own that browsers may use to reach it.
    `services`: the process's services, made here from the environment unless given (a test
    gives its own, on a temporary data dir with a fake NVML).
    """
    # The web app's top: what `audiopub serve` installed, or the environment's for
    # `python -m audiopub.ui`; what runs below is handed these.
    options = settings.current()
    check_settings(options)  # the engines' own, now rather than when one loads
    policy = guard.policy_for(host, port, allowed_hosts, options)
    # NiceGUI's simulated browser (the UI tests) calls the app in-process: no network to guard.
    if not helpers.is_user_simulation():
        app.add_middleware(guard.Guard, policy=policy)
    if policy.token is not None:
        _announce_token(policy, host, port, chosen=policy.token == options.token)
    setup(services or Services.from_environment())
    _exit_on_sigterm()
    static = static_dir()
    icon = static / "icon.svg" if static is not None else None
    opened = guard.start_address(policy, "/") if show else False
    ui.run(
        host=host,
        port=port,
        show=opened,
        title="Audiopub",
        reload=False,
        dark=None,
        reconnect_timeout=RECONNECT_TIMEOUT_S,
        favicon=icon if icon is not None and icon.is_file() else None,
        uvicorn_logging_level="warning",
    )


def _exit_on_sigterm() -> None:
    """Once it has shut down, uvicorn raises a SIGTERM again for the handler it found. Python's
    own ends the process on the spot, before the `atexit` functions that remove its scratch
    folder (and the uploads in it): this one exits as `sys.exit` does."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)


def _terminated(number: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + number)


def _announce_token(policy: guard.Policy, host: str, port: int, chosen: bool) -> None:
    """Print where to open the UI with its token; a token the person chose is not printed."""
    shown = "localhost" if host in guard.WILDCARDS else (f"[{host}]" if ":" in host else host)
    address = guard.start_address(policy, f"http://{shown}:{port}/")
    if chosen:
        address = address.replace(str(policy.token), f"<{guard.TOKEN_ENV}>")  # theirs: unsaid
    elsewhere = (
        " (from another computer, with this one's address)" if host in guard.WILDCARDS else ""
    )
    # Printed, not logged: the address must be seen whatever the log level.
    print(f"Audiopub asks every browser for its token: open {address} once{elsewhere}", flush=True)
