"""Finished audiobooks (play with chapters, download, delete) and jobs that did not finish."""

from __future__ import annotations

import time

from nicegui import ui

from audiopub.jobs.models import Job, JobState
from audiopub.ui.components.job_list import LiveList, job_list
from audiopub.ui.components.library_card import LibraryCard
from audiopub.ui.jobview import JobView, job_view
from audiopub.ui.services import Services, current
from audiopub.ui.theme import frame, section_title


def page() -> None:
    services = current()
    with frame("Library", "/library"):
        section_title("Audiobooks", "library_music")
        LiveList(services, lambda: finished_views(services), LibraryCard,
                 "No finished audiobooks yet.", "library")
        ui.element("div").classes("h-2")
        section_title("Stopped jobs", "history")
        job_list(services, _stopped, "Nothing stopped half-way.")


def finished_views(services: Services) -> list[JobView]:
    """Finished books, newest first, with their chapters and cover (blocking: io_bound)."""
    now = time.time()
    done = [j for j in services.store.list_jobs([JobState.DONE])]
    done.sort(key=lambda j: j.finished_at or j.updated_at, reverse=True)
    return [job_view(services.store, services.activity, job, now, cover=services.cover_of(job))
            for job in done]


def _stopped(job: Job, now: float) -> bool:
    return job.state in (JobState.FAILED, JobState.CANCELLED)
