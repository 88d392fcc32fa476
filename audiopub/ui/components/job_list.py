"""Lists of jobs kept current from the store and the worker's events.

A 0.5 s timer drains the shared event stream; when something happened (or every few seconds,
for changes made by another process such as the CLI) the views are rebuilt off the event loop
and the cards updated in place. Every tab runs its own timer over the same store, so all tabs
show the same jobs, and a reopened page starts from the store's current state.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Final, Protocol

from nicegui import run, ui

from audiopub.errors import StoreDamaged
from audiopub.jobs.models import Job, JobState
from audiopub.ui.components.job_card import JobCard
from audiopub.ui.jobview import JobView, job_view
from audiopub.ui.services import Services

TICK_S: Final = 0.5  # how often the event stream is drained
RUNNING_REFRESH_S: Final = 1.0  # elapsed time and ETA move even between events
IDLE_REFRESH_S: Final = 5.0  # picks up changes made by other processes


class Card(Protocol):
    def update(self, view: JobView) -> None: ...

    def delete(self) -> None: ...


CardFactory = Callable[[Services, JobView, Callable[[], Awaitable[None]]], Card]


class LiveList:
    def __init__(
        self,
        services: Services,
        views: Callable[[], list[JobView]],
        card: CardFactory,
        empty_text: str,
        marker: str,
    ) -> None:
        self.services = services
        self.views = views
        self.card = card
        self.cards: dict[str, Card] = {}
        self._version = -1
        self._refreshed_at = 0.0
        self._any_running = False
        self._busy = False
        self._dirty = True  # something changed here (a button); refresh at the next chance
        with ui.column().classes("w-full gap-3").mark(marker) as self.container:
            self.empty = ui.label(empty_text).classes("ap-muted").mark(f"{marker}-empty")
        ui.timer(TICK_S, self._tick)

    async def refresh_now(self) -> None:
        self._dirty = True
        await self._tick()

    async def _tick(self) -> None:
        if self._busy:
            return
        version = self.services.activity.drain()
        wait = RUNNING_REFRESH_S if self._any_running else IDLE_REFRESH_S
        if (
            not self._dirty
            and version == self._version
            and time.monotonic() - self._refreshed_at < wait
        ):
            return
        self._busy, self._dirty = True, False
        try:
            views = await run.io_bound(self.views)
        except StoreDamaged:  # the page's banner says what to do; nothing can be listed
            views = []
        finally:
            self._busy = False
        if views is None:  # the app is shutting down: run.io_bound no longer runs anything
            return
        self._version, self._refreshed_at = version, time.monotonic()
        if not self.container.is_deleted:  # the tab may have closed meanwhile
            self._render(views)

    def _render(self, views: list[JobView]) -> None:
        wanted = [view.job.id for view in views]
        for job_id in [i for i in self.cards if i not in wanted]:
            self.cards.pop(job_id).delete()
        for view in views:
            card = self.cards.get(view.job.id)
            if card is None:
                with self.container:
                    self.cards[view.job.id] = self.card(self.services, view, self.refresh_now)
            else:
                card.update(view)
        self.empty.set_visibility(not views)
        self._any_running = any(v.job.state is JobState.RUNNING for v in views)


def job_list(
    services: Services, include: Callable[[Job, float], bool], empty_text: str
) -> LiveList:
    """Job cards (progress and controls) for the jobs `include` picks, in queue order."""

    def views() -> list[JobView]:
        now = time.time()
        store, activity = services.store, services.activity
        held = services.worker.current_job
        return [
            job_view(store, activity, job, now, held=job.id == held)
            for job in store.queue.list_jobs()
            if include(job, now)
        ]

    return LiveList(services, views, JobCard, empty_text, "job-list")
