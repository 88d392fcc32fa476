"""A player for speech made on demand (a preview, "Hear it", a voice mix): the WAV is spoken
off the event loop, a failure is said in the page, and the sound plays in place.

The WAV goes to the browser inline, as a data URL: a few seconds of speech, heard once, that
never needs a route or a file of its own.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from nicegui import ui

from audiopub.ui.blocking import run_blocking


class AudioPlayer:
    """An audio element (marked `marker`), hidden until it has something to play."""

    def __init__(self, marker: str) -> None:
        self.element = ui.audio("").classes("w-full").mark(marker)
        self.element.set_visibility(False)

    async def speak(
        self,
        speak: Callable[..., bytes],
        *args: Any,
        show: Callable[[str], None],
        failing: str,
        busy: ui.element | None = None,
    ) -> None:
        """`speak(*args)` in a thread (see `run_blocking` for `show`, `failing` and `busy`),
        then its WAV bytes played; nothing is played where it failed."""
        wav = await run_blocking(speak, *args, show=show, failing=failing, busy=busy)
        if wav is None:  # said, or the app is shutting down
            return
        self.play(wav)

    def play(self, wav: bytes) -> None:
        self.element.set_source("data:audio/wav;base64," + base64.b64encode(wav).decode())
        self.element.set_visibility(True)
        self.element.play()
