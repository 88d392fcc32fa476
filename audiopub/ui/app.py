"""Start-up and shutdown of the web UI: services, routes, pages, `ui.run`.

`main()` is what `audiopub` / `audiopub serve` call. It binds 127.0.0.1 unless told otherwise:
the UI has no accounts, so anyone who can reach the port can use it.
"""

from __future__ import annotations

import asyncio
import logging
from importlib import resources
from pathlib import Path
from typing import Final

from nicegui import app, background_tasks, run, ui

from audiopub.ui import routes
from audiopub.ui.pages import convert, lexicon, library, voices
from audiopub.ui.services import Services, current, current_or_none, set_current
from audiopub.ui.uploads import max_request_bytes

log = logging.getLogger(__name__)

# CSS and the icon: the repository's top-level `static/`, installed as this package (a wheel
# copies it, an editable install maps it). NiceGUI serves its own JS and fonts, so nothing is
# fetched from the internet.
STATIC_PACKAGE: Final = "audiopub.static"
DRAIN_INTERVAL_S: Final = 0.5  # the job log is gathered even while no tab is open
LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")


def static_dir() -> Path | None:
    """The folder the UI serves at /static, or None when the install lacks it."""
    try:
        folder = resources.files(STATIC_PACKAGE)
    except ModuleNotFoundError:
        return None
    # NiceGUI serves a folder on disk; a package imported from a zip file has none.
    return folder if isinstance(folder, Path) and folder.is_dir() else None


def setup(services: Services) -> None:
    """Install the services and register routes, pages and lifecycle hooks (before ui.run)."""
    set_current(services)
    # FastAPI counts every request body as it arrives (a too-big Content-Length is refused
    # before a byte is read): an upload past the limit is cut off at 413, not spooled whole.
    app.max_body_size = max_request_bytes(services.upload_limit_bytes)
    static = static_dir()
    if static is not None:
        app.add_static_files("/static", static)
    else:
        log.warning("static files (package %s) not found; the UI will look plain",
                    STATIC_PACKAGE)
    routes.register()
    ui.page("/")(convert.page)
    ui.page("/library")(library.page)
    ui.page("/lexicon")(lexicon.page)
    ui.page("/voices")(voices.page)
    app.on_startup(_startup)
    app.on_shutdown(_shutdown)


async def _startup() -> None:
    services = current()
    await run.io_bound(services.start)
    background_tasks.create(_drain_events(services), name="audiopub-events")
    # Load the engines now (the registry keeps them), so the first page shows them at once.
    background_tasks.create(run.io_bound(services.engine_catalog), name="audiopub-engines")


async def _shutdown() -> None:
    services = current_or_none()
    if services is not None:
        services.stop()  # waits for the chunk in progress; the job resumes at the next start
        set_current(None)


async def _drain_events(services: Services) -> None:
    while True:
        services.activity.drain()
        await asyncio.sleep(DRAIN_INTERVAL_S)


def main(host: str = "127.0.0.1", port: int = 8080, show: bool = True) -> None:
    """Run the web UI until interrupted. Uses the services a test installed, if any."""
    if host not in LOOPBACK:
        log.warning("Listening on %s: anyone who can reach port %d can use Audiopub "
                    "(there are no accounts)", host, port)
    setup(current_or_none() or Services.from_environment())
    static = static_dir()
    icon = static / "icon.svg" if static is not None else None
    ui.run(host=host, port=port, show=show, title="Audiopub", reload=False, dark=None,
           favicon=icon if icon is not None and icon.is_file() else None,
           uvicorn_logging_level="warning")
