"""Progress events from the worker to any number of listeners (UI tabs, the CLI).

Publishing never blocks the worker: each subscriber has its own bounded queue, and when a slow
listener's queue is full its oldest event is dropped (the next event carries the totals anyway).
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass

from audiopub.figures import Speed
from audiopub.jobs.models import JobState

# Events kept per subscriber; progress events carry totals, so losing old ones is harmless.
QUEUE_SIZE = 1000


@dataclass(frozen=True)
class JobEvent:
    job_id: str
    state: JobState
    chars_done: int = 0
    chars_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    run: Speed | None = None  # what this run has made so far, on the wall clock
    eta_s: float | None = None  # the rest of the job at this run's speed
    chapter_title: str = ""
    provider: str = ""  # where the engine really runs, in words ("CPU", "GPU (CUDA)", …)
    message: str = ""  # a line for the job's log
    stage: str = ""  # what the worker is doing now, in words ("Loading the voice…")


class EventBus:
    def __init__(self) -> None:
        self._subscribers: list[queue.Queue[JobEvent]] = []
        self._lock = threading.Lock()

    def subscribe(self) -> queue.Queue[JobEvent]:
        inbox: queue.Queue[JobEvent] = queue.Queue(maxsize=QUEUE_SIZE)
        with self._lock:
            self._subscribers.append(inbox)
        return inbox

    def unsubscribe(self, inbox: queue.Queue[JobEvent]) -> None:
        with self._lock:
            if inbox in self._subscribers:
                self._subscribers.remove(inbox)

    def publish(self, event: JobEvent) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for inbox in subscribers:
            while True:
                try:
                    inbox.put_nowait(event)
                    break
                except queue.Full:
                    try:
                        inbox.get_nowait()
                    except queue.Empty:
                        pass
