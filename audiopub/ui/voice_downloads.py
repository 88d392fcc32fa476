"""Voice downloads started from the web UI: one at a time, on a thread of their own.

Why a thread owned by the process rather than by the page: a download of a few hundred MB
takes minutes, and a person may close the tab meanwhile. The download goes on (and every
Voices tab shows it); if the server stops, it is cancelled, and `voices.install`'s staging
folder guarantees that nothing half-downloaded ever appears as installed.

Pages poll `state()` with a `ui.timer`; nothing here touches NiceGUI.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from audiopub.errors import AudiopubError, DownloadCancelled
from audiopub.tts.downloads import Installed

if TYPE_CHECKING:  # for the hint only: it brings in huggingface_hub (see `_run`)
    from audiopub.tts.hub import Progress

log = logging.getLogger(__name__)

STOP_WAIT_S = 5.0  # at shutdown, for a cancelled download to let go of its files


@dataclass(frozen=True)
class DownloadState:
    """Where the current (or last) download stands."""

    voice_id: str
    started_at: float
    progress: Progress | None = None
    finished_at: float | None = None  # None while it runs
    installed: Installed | None = None  # on success
    error: str | None = None  # what went wrong, as a person should read it
    cancelled: bool = False
    version: int = 0  # bumped at every change, so a poller updates only what changed

    @property
    def running(self) -> bool:
        return self.finished_at is None


class VoiceDownloads:
    """The process's voice downloads: start one, follow it, cancel it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: DownloadState | None = None
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    def state(self) -> DownloadState | None:
        with self._lock:
            return self._state

    def start(self, voice_id: str) -> DownloadState:
        """Begin downloading `voice_id` in the background; AudiopubError if one is running."""
        with self._lock:
            if self._state is not None and self._state.running:
                raise AudiopubError(
                    f"{self._state.voice_id} is being downloaded; wait for it "
                    "to finish (or cancel it) before starting another."
                )
            self._cancel = threading.Event()
            self._state = DownloadState(voice_id, time.time())
            self._thread = threading.Thread(
                target=self._run,
                args=(voice_id, self._cancel),
                name=f"audiopub-download-{voice_id}",
                daemon=True,
            )
            self._thread.start()
            return self._state

    def cancel(self) -> None:
        """Ask the running download to stop (it stops at its next piece of data)."""
        self._cancel.set()

    def stop(self) -> None:
        """At shutdown: cancel, and give the download a moment to clean up."""
        self.cancel()
        thread = self._thread
        if thread is not None and thread.is_alive():
            thread.join(STOP_WAIT_S)

    def _run(self, voice_id: str, cancel: threading.Event) -> None:
        # Here, not at the top: it brings in huggingface_hub, needed by a download only.
        from audiopub.voices.install import install

        try:
            # No variant: a model that has several takes the device's, as the CLI chooses it.
            installed = install(voice_id, on_progress=self._progress, cancel=cancel)
        except DownloadCancelled:
            self._finish(
                cancelled=True,
                error="Cancelled: nothing was installed. The files "
                "already complete are kept, so Download continues from them; "
                "Discard removes them.",
            )
        except AudiopubError as exc:
            self._finish(error=str(exc))
        except Exception as exc:  # a bug must still end the download with a message
            log.exception("downloading %s failed", voice_id)
            self._finish(error=f"Downloading {voice_id} failed ({type(exc).__name__}: {exc}).")
        else:
            self._finish(installed=installed)

    def _progress(self, progress: Progress) -> None:
        self._update(progress=progress)

    def _finish(self, **outcome: object) -> None:
        self._update(finished_at=time.time(), **outcome)

    def _update(self, **changes: object) -> None:
        with self._lock:
            if self._state is not None:
                self._state = replace(self._state, version=self._state.version + 1, **changes)  # type: ignore[arg-type]
