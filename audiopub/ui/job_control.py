"""What the pages do to jobs: queue a book, pause, resume, cancel, delete; and what to say of a
job just queued.

The worker runs the jobs; this wakes it when there is something new for it. Blocking (the job
store, an engine to load): call these through `run.io_bound`.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from audiopub.book.models import Book
from audiopub.jobs.listening import NO_LISTENING, Listening
from audiopub.jobs.models import Job, JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import audiobook_deleted, deleted_as_asked, remake, submit_job
from audiopub.jobs.worker import Worker
from audiopub.tts import registry
from audiopub.ui.activity import JobActivity
from audiopub.ui.chosen_forms import made_beside, remove_made
from audiopub.ui.library import Library


class JobControl:
    def __init__(
        self,
        store: JobStore,
        worker: Worker,
        activity: JobActivity,
        library: Library,
        listening: Listening = NO_LISTENING,
    ) -> None:
        self.store = store
        self.worker = worker
        self.activity = activity
        self.library = library
        self.listening = listening  # asked whether a job submitted here can proof-listen

    def submit(self, epub: Path, book: Book, settings: JobSettings) -> Job:
        """Queue a job for an uploaded book and wake the worker. A book made before with the
        same settings, whose audiobook was deleted since, is made again by its job from the
        chapters it saved."""
        engine = registry.get_engine(settings.engine, use_gpu=settings.use_gpu)
        self.library.folder.mkdir(parents=True, exist_ok=True)
        deleted = deleted_as_asked(
            self.store,
            epub,
            book,
            settings,
            engine,
            folder=self.library.folder,
            listening=self.listening,
        )
        if deleted is not None:
            job = remake(self.store, deleted)
        else:
            output = self.library.folder / f"{uuid.uuid4().hex}.m4b"
            job = submit_job(self.store, epub, book, output, settings, engine, self.listening)
        if book.cover is not None:
            self.library.save_cover(book.cover, job.output_path)
        self.worker.wake()
        return job

    def submitted_text(self, job: Job) -> str:
        """What is true of a job just submitted: it starts now, or waits for the jobs before it
        (the worker runs one at a time, oldest first)."""
        jobs = self.store.queue.list_jobs((JobState.RUNNING, JobState.QUEUED))
        ids = [other.id for other in jobs]
        queued_before = ids[: ids.index(job.id)] if job.id in ids else ids
        ahead = sum(
            1
            for other in jobs
            if other.id != job.id and (other.state is JobState.RUNNING or other.id in queued_before)
        )
        if audiobook_deleted(job):
            when = f", after {_jobs(ahead)} before it" if ahead else "…"
            return (
                f"“{job.title}” was made before and its audiobook deleted: making it again "
                f"from the saved audio{when}"
            )
        if not ahead:  # the worker was woken for it, and may have taken it already
            return f"Starting “{job.title}”…"
        return f"“{job.title}” is in the queue: it starts after {_jobs(ahead)} before it"

    def pause(self, job_id: str) -> Job:
        return self.store.queue.set_state(job_id, JobState.PAUSED)

    def cancel(self, job_id: str) -> Job:
        return self.store.queue.set_state(job_id, JobState.CANCELLED)

    def resume(self, job_id: str) -> Job:
        job = self.store.queue.set_state(job_id, JobState.QUEUED)
        self.worker.wake()
        return job

    def delete(self, job_id: str) -> str:
        """Forget a stopped job. Its book is deleted only if Audiopub's library holds it."""
        job = self.store.queue.get_job(job_id)
        in_library = self.library.holds(job.output_path)
        made = made_beside(self.store, job) if in_library else []
        # The store refuses a running job: nothing of it may be deleted before that answer.
        self.store.queue.delete_job(job_id)
        self.activity.forget(job_id)
        if in_library:
            remove_made(made)
            self.library.remove_files(job)
            return f"Deleted “{job.title}”"
        return f"Removed “{job.title}” from the list; {job.output_path} was kept"


def _jobs(count: int) -> str:
    return "the job" if count == 1 else f"the {count} jobs"
