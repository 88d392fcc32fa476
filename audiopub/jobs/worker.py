"""The background worker: takes queued jobs in order and runs them, one at a time.

Only one process runs the jobs of a data directory (a lock file decides): the web UI's worker
or a CLI conversion. Whoever takes the lock first puts jobs left `running` by a crash back in
the queue; they then continue from their last finished chunk.

A damaged store stops the worker for good (it says so once): nothing can be run from it until
the person replaces it, which takes a restart.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout

from audiopub.errors import (
    AudiopubError,
    ClusterLost,
    DiskFull,
    InvalidTransition,
    JobStopped,
    StoreClosed,
    StoreDamaged,
)
from audiopub.jobs.chunk_executor import ExecutorFactory
from audiopub.jobs.disk_full import give_room, keep_room
from audiopub.jobs.events import EventBus, JobEvent
from audiopub.jobs.executor import close_warm_engines, warm_engines
from audiopub.jobs.listening import NO_LISTENING, Listening
from audiopub.jobs.models import JobState
from audiopub.jobs.pipeline import JOINING, JobRun, Publish
from audiopub.jobs.store import JobStore
from audiopub.jobs.synthesis_plan import prepare_engine
from audiopub.tts.engine import Engine

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.5  # how often an idle worker looks for queued jobs
DISK_FULL_RETRY_S = 30.0  # how long it waits while the store can't be written for want of room


def runner_lock(store: JobStore) -> FileLock:
    """The lock that makes one process at a time the runner of this store's jobs."""
    # Not thread-local: the worker thread takes it, and stop() may release it from another.
    return FileLock(str(Path(store.jobs_dir) / "runner.lock"), thread_local=False)


def runner_alive(store: JobStore) -> bool:
    """Whether a process runs this store's jobs now. A job marked `running` while none does
    was interrupted (its process was killed): the next runner puts it back in the queue.

    The lock is free when no process holds it, however the last one ended; it is taken for a
    moment to learn that (a runner starting just then tries again at its next look).
    """
    if not Path(store.jobs_dir).is_dir():
        return False  # no job has ever had a folder here, so none runs
    lock = runner_lock(store)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False


def become_runner(lock: FileLock, store: JobStore) -> bool:
    """Take the runner lock without waiting; the new runner requeues jobs a crash left running.

    False when another process (the web UI, a CLI conversion) runs jobs now.
    """
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return False
    try:
        requeued = store.queue.requeue_interrupted()
    except BaseException:  # a full disk: the next attempt requeues them
        lock.release()
        raise
    if requeued:
        log.info("resuming %d interrupted job(s)", len(requeued))
    return True


def execute_job(
    store: JobStore,
    job_id: str,
    publish: Publish | None = None,
    engine: Engine | None = None,
    stop_requested: Callable[[], bool] = lambda: False,
    keep_warm: bool = False,
    executors: ExecutorFactory | None = None,
    listening: Listening = NO_LISTENING,
) -> JobState:
    """Run a job that is already `running` and settle its state, whatever happens; with
    `keep_warm`, its engine processes stay for the next job (`ChunkExecutor.close`).
    `executors` makes the job's executor (None: this machine's, `executor.executor_for`);
    `listening` starts the proof-listening of a job that listens (none: such a job fails).

    Returns the state it ends in. Never raises for a problem of the job itself: a worker must
    outlive any book.
    """
    publish = publish or (lambda event: None)
    unrecorded: JobState | None = None  # how the run ended, where the store had no room to say
    keep_room(store.path.parent)
    try:
        JobRun(
            store, job_id, engine, publish, stop_requested, keep_warm, executors, listening
        ).run()
        return JobState.DONE
    except JobStopped as exc:  # cancel/pause were set by whoever asked; shutdown requeues
        message = str(exc)
        if store.queue.get_job(job_id).state is JobState.RUNNING:
            unrecorded = _settle(store, job_id, JobState.QUEUED)
    except DiskFull as exc:
        message = str(exc)
        give_room(store.path.parent)  # so that the store can say why the job paused
        unrecorded = _settle(store, job_id, JobState.PAUSED, message)
    except ClusterLost as exc:  # the same command resumes it, on a cluster or here
        message = str(exc)
        unrecorded = _settle(store, job_id, JobState.PAUSED, message)
    except AudiopubError as exc:
        message = str(exc)
        unrecorded = _settle(store, job_id, JobState.FAILED, message)
    except Exception as exc:  # a bug must fail this job, not kill the worker for every job
        log.exception("job %s failed unexpectedly", job_id)
        message = f"Internal error: {exc!r}"
        unrecorded = _settle(store, job_id, JobState.FAILED, message)
    state = unrecorded or store.queue.get_job(job_id).state
    publish(JobEvent(job_id=job_id, state=state, message=message))
    return state


def _settle(
    store: JobStore, job_id: str, state: JobState, error: str | None = None
) -> JobState | None:
    """Record how a run ended, unless someone (a pause, a cancel) moved the job meanwhile.

    Returns `state` if the disk is too full to record it: the job stays `running` in the
    store, and the next runner puts it back in the queue (`become_runner`).
    """
    try:
        store.queue.set_state(job_id, state, error=error)
    except InvalidTransition as exc:
        log.info("job %s: not marked %s (%s)", job_id, state.value, exc)
    except DiskFull:
        log.warning("job %s: not marked %s: the disk is full", job_id, state.value)
        return state
    return None


class Worker:
    """A daemon thread that runs queued jobs in order while this process holds the lock."""

    def __init__(
        self,
        store: JobStore,
        bus: EventBus | None = None,
        engine: Engine | None = None,
        executors: ExecutorFactory | None = None,
        listening: Listening = NO_LISTENING,
    ) -> None:
        self.store = store
        self.bus = bus or EventBus()
        self._engine = engine  # tests inject one; normally each job loads its own
        self._executors = executors  # what speaks the jobs (None: this machine's executors)
        self._listening = listening  # what hears the jobs that proof-listen
        self._lock = runner_lock(store)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="audiopub-worker", daemon=True)
        self._preparing: threading.Thread | None = None  # the next job's engine, loading
        self.current_job: str | None = None
        self.stopped_by: StoreDamaged | None = None  # why it runs no more jobs

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """Look at the queue now (after a submit) instead of at the next poll."""
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the current chunk; a running job goes back to the queue for next time."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)
        if self._preparing is not None:
            self._preparing.join(timeout)
        close_warm_engines()  # no next job here: their memory goes back now
        if self._lock.is_locked:
            self._lock.release()

    def _loop(self) -> None:
        while not self._stop.is_set():
            wait_s = POLL_INTERVAL_S
            try:
                if self._run_next():
                    continue
            except DiskFull as exc:  # the store can't be written: try again in a while
                log.warning("%s", exc)
                wait_s = DISK_FULL_RETRY_S
            except StoreDamaged as exc:  # it won't mend by waiting: say so once and stop
                log.error("The worker stopped: %s", exc)
                self.stopped_by = exc
                self.current_job = None
                return
            except StoreClosed:
                # The process is stopping and did not wait for this job (`stop`'s timeout):
                # the job stays `running` in the store, and the next runner queues it again.
                log.info(
                    "The worker stopped: the job store was closed under job %s", self.current_job
                )
                self.current_job = None
                return
            self._wake.wait(wait_s)
            self._wake.clear()

    def _run_next(self) -> bool:
        """Run the next queued job, if this process runs jobs; False when there is none."""
        if not self._take_lock():
            return False
        job = self.store.queue.claim_next_job()
        if job is None:
            return False
        self.current_job = job.id
        self.bus.publish(JobEvent(job_id=job.id, state=JobState.RUNNING, message="Started"))
        execute_job(
            self.store,
            job.id,
            self._publish_and_look_ahead,
            self._engine,
            self._stop.is_set,
            keep_warm=True,
            executors=self._executors,
            listening=self._listening,
        )
        self.current_job = None
        return True

    def _publish_and_look_ahead(self, event: JobEvent) -> None:
        """Pass the event on; once a job has spoken its last chunk (stitching and encoding
        remain), load the next queued job's engine meanwhile."""
        self.bus.publish(event)
        if (
            event.state is JobState.RUNNING
            and event.stage == JOINING
            and 0 < event.chunks_total == event.chunks_done
        ):
            self._prepare_next()

    def _prepare_next(self) -> None:
        if self._engine is not None or (self._preparing and self._preparing.is_alive()):
            return  # an injected engine is all there is; one preparation at a time
        queued = self.store.queue.list_jobs([JobState.QUEUED])
        if queued and self._executors is None and not warm_engines().room_to_prepare():
            # Two engines at once would crowd out the encoding (or kill an engine process):
            # the next job loads its own once this one is done.
            log.info("the next job's engine is not loaded ahead: memory is short")
            return
        if queued:
            self._preparing = threading.Thread(
                target=prepare_engine,
                args=(queued[0].settings, self._executors),
                daemon=True,
                name="audiopub-next-engine",
            )
            self._preparing.start()

    def _take_lock(self) -> bool:
        # While a CLI conversion holds it, try again at the next poll.
        return self._lock.is_locked or become_runner(self._lock, self.store)
