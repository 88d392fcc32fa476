"""A job made in this terminal, or followed while another process makes it: the progress bar,
Ctrl-C as a pause, and the summary or the reason it stopped.

`convert` calls `run_or_follow` once its job is queued. Only one process at a time runs the
jobs of a data directory (`worker.runner_lock`): when the web app holds it, this command shows
that process's progress on the job, and takes the job over if that runner lets it go.
"""

from __future__ import annotations

import sys
import time

from filelock import FileLock
from tqdm import tqdm

from audiopub.errors import InvalidTransition
from audiopub.jobs import report
from audiopub.jobs.chunk_executor import ExecutorFactory
from audiopub.jobs.events import JobEvent
from audiopub.jobs.listening import NO_LISTENING, Listening
from audiopub.jobs.models import JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.terminal import BAR_FORMAT, CountingBar
from audiopub.jobs.worker import become_runner, execute_job, runner_lock

FOLLOW_INTERVAL_S = 1.0  # how often a command waiting on another runner reads the store


def run_or_follow(
    store: JobStore,
    job_id: str,
    executors: ExecutorFactory | None = None,
    listening: Listening = NO_LISTENING,
) -> int:
    """Make the job here, or follow it in the process that runs jobs now; the exit status.
    `executors` makes the executor of a job made here (None: this machine's), `listening`
    hears it where it proof-listens."""
    lock = runner_lock(store)
    if not become_runner(lock, store):  # a crashed run's job would now be queued for us
        print(
            "Another Audiopub process (the web UI?) runs jobs now; following this job there.",
            file=sys.stderr,
        )
        status = _follow(store, job_id, lock)
        if status is not None:
            return status
    try:  # the runner lock is ours: run the job here
        store.queue.set_state(job_id, JobState.RUNNING)
        return _run_in_foreground(store, job_id, executors, listening)
    finally:
        lock.release()


def _run_in_foreground(
    store: JobStore, job_id: str, executors: ExecutorFactory | None, listening: Listening
) -> int:
    began, since = time.perf_counter(), time.time()
    with ProgressBar() as bar:
        try:
            state = execute_job(store, job_id, bar.show, executors=executors, listening=listening)
        except KeyboardInterrupt:
            return _pause_interrupted(store, job_id)
    return _report(store, job_id, state, time.perf_counter() - began, since, bar.message)


def _follow(store: JobStore, job_id: str, lock: FileLock) -> int | None:
    """Show the other runner's progress on the job until it ends; None (holding `lock`) when
    that runner let the job go unfinished and stopped running jobs (a CLI conversion whose job
    another command took over), so this command makes it instead."""
    began, since = time.perf_counter(), time.time()
    with ProgressBar() as bar:
        try:
            while True:
                job = store.queue.get_job(job_id)
                progress = store.ledger.progress(job_id)
                bar.show(JobEvent(job_id, job.state, progress.chars_done, progress.chars_total))
                if job.state not in (JobState.QUEUED, JobState.RUNNING):
                    break
                # Free when the runner has stopped: it requeues a job the runner left running.
                if become_runner(lock, store):
                    if store.queue.get_job(job_id).state is JobState.QUEUED:
                        return None
                    lock.release()
                time.sleep(FOLLOW_INTERVAL_S)
        except KeyboardInterrupt:
            # The other process's worker sees the pause in the store after its current chunk.
            return _pause_interrupted(store, job_id)
    return _report(store, job_id, job.state, time.perf_counter() - began, since)


def _pause_interrupted(store: JobStore, job_id: str) -> int:
    """Ctrl-C pauses the job, which keeps its finished chunks for the next run."""
    try:
        store.queue.set_state(job_id, JobState.PAUSED, error="Interrupted")
    except InvalidTransition:  # it ended (or was cancelled elsewhere) meanwhile
        print(f"\nThe job is {store.queue.get_job(job_id).state.value}.", file=sys.stderr)
        return 130
    print("\nPaused. Run the same command again to continue.", file=sys.stderr)
    return 130


class ProgressBar:
    """Characters done, chars/sec and ETA on stderr, and what the job is doing.

    The bar starts once the job is planned, before its first chunk, at what the job had already
    made (0, or more when it is resumed). Its speed and time left are the run's own, from its
    events: speaking only (the engine's start-up is a stage of its own), the estimate starting
    from the machine's recorded speed.
    """

    def __enter__(self) -> ProgressBar:
        self._bar: tqdm | None = None
        self.message = ""
        return self

    def show(self, event: JobEvent) -> None:
        self.message = event.message  # the last one says how the run ended
        if not event.chars_total:
            return
        if self._bar is None:
            self._bar = CountingBar(
                total=event.chars_total,
                initial=event.chars_done,
                unit=" chars",
                unit_scale=True,
                dynamic_ncols=True,
                bar_format=BAR_FORMAT,
                file=sys.stderr,
            )
        doing = event.chapter_title or event.stage  # the chapter, or "Starting the engine…"
        if doing:  # before the update, which draws the bar
            self._bar.set_postfix_str(doing[:30], refresh=False)
        self._bar.total = event.chars_total
        self._bar.eta_s = event.eta_s
        if event.run is not None:
            self._bar.speaking = event.run
        if event.chars_done == self._bar.n:  # no progress, but a new stage or estimate to show
            self._bar.refresh()
        self._bar.update(event.chars_done - self._bar.n)

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.close()


def _report(
    store: JobStore, job_id: str, state: JobState, elapsed_s: float, since: float, message: str = ""
) -> int:
    job = store.queue.get_job(job_id)
    if state is JobState.QUEUED:  # another command asked for it with other settings
        print(
            f"audiopub: job {job_id[:8]} was taken over by another command, which makes it now",
            file=sys.stderr,
        )
        return 1
    if state is not JobState.DONE:
        # The run's own message where a full disk kept the store from recording its end.
        error = job.error if job.state is state else message
        print(
            f"audiopub: job {job_id[:8]} is {state.value}: {error or ''}".rstrip(": "),
            file=sys.stderr,
        )
        return 1
    print("\n".join(report.run_summary(store, job, elapsed_s, since)))
    return 0
