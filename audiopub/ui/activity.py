"""The worker's events, gathered once for every page: the latest figures and a log per job.

The worker publishes `JobEvent`s on the process's one `EventBus`. This keeps one subscription
and is drained from the event loop (a background task and the pages' timers), so every tab
shows the same log, and a tab opened later still sees what happened before it existed.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from typing import Final

from audiopub.jobs.events import EventBus, JobEvent

LOG_LINES: Final = 200  # per job; older lines are dropped


class JobActivity:
    def __init__(self, bus: EventBus) -> None:
        self._bus = bus
        self._inbox = bus.subscribe()
        self._lock = threading.Lock()
        self._latest: dict[str, JobEvent] = {}
        self._logs: dict[str, deque[str]] = {}
        self._chapter: dict[str, str] = {}
        self._appended: dict[str, int] = {}  # lines ever logged per job (the deque drops old ones)
        self._version = 0

    @property
    def version(self) -> int:
        """Grows with every event: a page that saw this number has nothing new to show."""
        return self._version

    def drain(self) -> int:
        """Take every waiting event; returns the new version. Never blocks."""
        with self._lock:
            while True:
                try:
                    event = self._inbox.get_nowait()
                except queue.Empty:
                    break
                self._record(event)
                self._version += 1
            return self._version

    def latest(self, job_id: str) -> JobEvent | None:
        with self._lock:
            return self._latest.get(job_id)

    def log(self, job_id: str) -> tuple[int, list[str]]:
        """(lines ever logged for the job, the last `LOG_LINES` of them)."""
        with self._lock:
            return self._appended.get(job_id, 0), list(self._logs.get(job_id, ()))

    def forget(self, job_id: str) -> None:
        with self._lock:
            self._latest.pop(job_id, None)
            self._logs.pop(job_id, None)
            self._chapter.pop(job_id, None)
            self._appended.pop(job_id, None)

    def close(self) -> None:
        self._bus.unsubscribe(self._inbox)

    def _record(self, event: JobEvent) -> None:
        self._latest[event.job_id] = event
        stamp = time.strftime("%H:%M:%S")
        if event.chapter_title and event.chapter_title != self._chapter.get(event.job_id):
            self._chapter[event.job_id] = event.chapter_title
            self._append(event.job_id, f"{stamp}  Reading “{event.chapter_title}”")
        if event.message:
            self._append(event.job_id, f"{stamp}  {event.message}")

    def _append(self, job_id: str, line: str) -> None:
        self._logs.setdefault(job_id, deque(maxlen=LOG_LINES)).append(line)
        self._appended[job_id] = self._appended.get(job_id, 0) + 1
