"""Blocking work started from a page (speaking a preview, saving a file): run in a thread with
NiceGUI's `run.io_bound`, so the page stays live, and its error said in the page, never as a
traceback.

An AudiopubError is said as it is: the person can act on it. Any other exception is a bug: it
is said with its type, and kept whole in the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from nicegui import run, ui

from audiopub.errors import AudiopubError

log = logging.getLogger(__name__)

T = TypeVar("T")


async def run_blocking(
    function: Callable[..., T],
    *args: Any,
    show: Callable[[str], None],
    failing: str,
    busy: ui.element | None = None,
) -> T | None:
    """`function(*args)` in a thread. None where it failed (said through `show`) and where the
    app is shutting down (`run.io_bound` runs nothing then). `failing` opens the message of an
    unexpected error ("The preview failed"); `busy`, a button, spins meanwhile."""
    if busy is not None:
        busy.props("loading")
    try:
        return await run.io_bound(function, *args)
    except AudiopubError as exc:
        show(str(exc))
    except Exception as exc:  # an engine bug: say so in the page, keep the details in the log
        log.exception("%s", failing)
        show(f"{failing} ({type(exc).__name__}: {exc})")
    finally:
        if busy is not None:
            busy.props(remove="loading")
    return None
