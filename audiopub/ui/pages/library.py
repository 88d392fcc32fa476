"""Finished audiobooks (play with chapters, download, delete) and jobs that did not finish."""

from __future__ import annotations

import time

from nicegui import run, ui

from audiopub import figures as fmt
from audiopub.jobs.models import Job, JobState
from audiopub.ui import library_files
from audiopub.ui.components.job_list import LiveList, job_list
from audiopub.ui.components.library_card import LibraryCard
from audiopub.ui.jobview import JobView, job_view
from audiopub.ui.services import Services
from audiopub.ui.theme import STORE_CHECK_S, frame, section_title


def page(services: Services) -> None:
    with frame(services, "Library", "/library"):
        section_title("Audiobooks", "library_music")
        books = LiveList(
            services,
            lambda: finished_views(services),
            LibraryCard,
            "No finished audiobooks yet.",
            "library",
        )
        on_disk = ui.column().classes("w-full gap-3").mark("library-files")
        ui.element("div").classes("h-2")
        section_title("Stopped jobs", "history")
        job_list(services, _stopped, "Nothing stopped half-way.")

    async def once_damaged() -> None:
        if services.store.db.damage is None:
            return
        timer.deactivate()
        books.container.set_visibility(False)
        await _books_on_disk(services, on_disk)

    timer = ui.timer(STORE_CHECK_S, once_damaged, immediate=True)


def finished_views(services: Services) -> list[JobView]:
    """Finished books, newest first, with their chapters and cover (blocking: io_bound)."""
    now = time.time()
    done = [j for j in services.store.queue.list_jobs([JobState.DONE])]
    done.sort(key=lambda j: j.finished_at or j.updated_at, reverse=True)
    return [
        job_view(services.store, services.activity, job, now, cover=services.library.cover_of(job))
        for job in done
    ]


async def _books_on_disk(services: Services, column: ui.column) -> None:
    """The books of the library folder, read from the files themselves, for while the job
    store that describes them is damaged (the page's banner says what to do)."""
    books = await run.io_bound(library_files.books_in, services.library.folder)
    if books is None or column.is_deleted:  # shutting down, or the tab closed
        return
    with column:
        if not books:
            ui.label(f"No finished audiobooks in {services.library.folder}.").classes("ap-muted")
        for book in books:
            with ui.card().classes("ap-card w-full gap-1").mark("book-file"):
                ui.label(book.title).classes("text-base font-semibold truncate").mark("book-title")
                ui.label(
                    f"{book.author or 'Unknown author'} · {fmt.size(book.size)} · {book.path}"
                ).classes("ap-muted text-sm")
                ui.link("Download .m4b", f"/library/files/{book.path.name}").mark("book-download")


def _stopped(job: Job, now: float) -> bool:
    return job.state in (JobState.FAILED, JobState.CANCELLED)
