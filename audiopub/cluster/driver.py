"""The process that talks to the Ray cluster for one job, beside the job's own process.

Ray ends a driver process whose cluster (its local raylet) goes away. The job's process must
outlive that to pause the job and say why, so the Ray driver is a child process: the job
sends it batches over a pipe and reads their audio back in the same order; a cluster that
goes away ends the child, or makes it say `lost`, and the job pauses (`ClusterLost`).

    job process ── ("speak", texts, voice, options) ─▶ driver ─▶ actor.speak on the cluster
                ◀─ ("spoken", SpokenBatch) in order ──
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from audiopub import settings
from audiopub.cluster import connection, models
from audiopub.cluster.actor import SpeechWorker
from audiopub.errors import AudiopubError, ClusterLost
from audiopub.jobs.process_pool import exit_with_parent

log = logging.getLogger(__name__)

ACTOR_RESTARTS: Final = 4  # Ray starts an actor again this often after its worker died
TASK_RETRIES: Final = 2  # … and runs the batch it was speaking again on it
HEAD_RETRIES: Final = 3  # then the driver sends the batch again, to any actor
RETRY_WAIT_S: Final = 2.0  # between the driver's tries, for restarted actors to load

Connection = multiprocessing.connection.Connection
Send = Callable[..., None]  # a message to the job: its kind, then its parts


def main(
    pipe: Connection,
    address: str,
    engine_name: str,
    model_id: str,
    voice: str,
    batch_size: int | None,
    cpu_batch_size: int,
) -> None:
    """Connect, start the job's actors, say `ready`, then speak batches until `stop`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the job process's to handle
    # Ray's own C++ log lines (a lost worker's retries) would cut through the progress bar;
    # what matters reaches the job's log and its pause message.
    # (Ray's own variable, read by Ray in this driver process: no Audiopub option.)
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    exit_with_parent()  # its actors go with it
    send_lock = threading.Lock()

    def send(*message: Any) -> None:
        with send_lock:
            pipe.send(message)

    try:
        pool = _Pool(address, engine_name, model_id, voice, batch_size, cpu_batch_size)
    except AudiopubError as exc:
        _say_error(send, exc)
        return
    send("ready", pool.device, pool.max_items, len(pool.actors))
    submitted: queue.SimpleQueue[tuple[list[str], str, Any, Any] | None] = queue.SimpleQueue()
    answering = threading.Thread(target=_answer, args=(pool, submitted, send), daemon=True)
    answering.start()
    while True:
        try:
            message = pipe.recv()
        except (EOFError, OSError):  # the job's process is gone
            break
        if message[0] != "speak":
            break
        _, texts, voice_id, options = message
        submitted.put((texts, voice_id, options, pool.submit(texts, voice_id, options)))
    submitted.put(None)
    pool.stop()


def _answer(
    pool: _Pool, submitted: queue.SimpleQueue[tuple[list[str], str, Any, Any] | None], send: Send
) -> None:
    """Each batch's audio back to the job, in the order it was sent."""
    while (item := submitted.get()) is not None:
        texts, voice, options, ref = item
        try:
            send("spoken", pool.wait(texts, voice, options, ref))
        except AudiopubError as exc:
            _say_error(send, exc)
            return


def _say_error(send: Send, error: AudiopubError) -> None:
    """The job pauses on `lost` (the cluster went away) and fails on `failed` (any other)."""
    send("lost" if isinstance(error, ClusterLost) else "failed", str(error))


class _Pool:
    """The job's actors: one per GPU where the cluster has free GPUs, else one per CPU."""

    def __init__(
        self,
        address: str,
        engine_name: str,
        model_id: str,
        voice: str,
        batch_size: int | None,
        cpu_batch_size: int,
    ) -> None:
        self.address = address
        self.ray = ray = connection.connect(address)
        try:
            free = ray.available_resources()
            on_gpu = free.get("GPU", 0) >= 1
            count = int(free.get("GPU", 0)) if on_gpu else max(1, int(free.get("CPU", 0)))
            files = models.shipped(ray, engine_name, model_id, voice)
            actor = ray.remote(SpeechWorker).options(
                num_gpus=1 if on_gpu else 0,
                num_cpus=0 if on_gpu else 1,
                max_restarts=ACTOR_RESTARTS,
                max_task_retries=TASK_RETRIES,
            )
            # The reference in a list: each actor fetches the files itself, again on restart.
            self.actors = [actor.remote(engine_name, [files], on_gpu) for _ in range(count)]
        except Exception as exc:  # connected, then gone
            raise connection.lost(address, first_line(exc)) from exc
        self.max_items = batch_size or (settings.GPU_MAX_BATCH if on_gpu else cpu_batch_size)
        self.device = (
            f"Ray cluster at {address}: {count} "
            f"{'GPU' if on_gpu else 'CPU'} actor{'s' if count > 1 else ''}"
        )
        self._next = 0

    def submit(self, texts: list[str], voice: str, options: Any) -> Any:
        actor = self.actors[self._next % len(self.actors)]
        self._next += 1
        try:
            return actor.speak.remote(texts, voice, options)
        except Exception as exc:  # the cluster went away between two batches
            return exc  # said by `wait`, in the batch's turn

    def wait(self, texts: list[str], voice: str, options: Any, ref: Any) -> Any:
        """The batch's SpokenBatch; sent again where its actor was lost beyond Ray's own
        retries; ClusterLost when it still can't be had."""
        exceptions = self.ray.exceptions
        for attempt in range(HEAD_RETRIES + 1):
            try:
                if isinstance(ref, Exception):
                    raise ref
                return self.ray.get(ref)
            except exceptions.RayTaskError as exc:  # raised by the engine: the job's error
                raise AudiopubError(f"The engine failed on the cluster: {exc.cause}") from exc
            except Exception as exc:  # a worker, a node or the whole cluster lost
                if attempt == HEAD_RETRIES:
                    raise connection.lost(self.address, first_line(exc)) from exc
                log.warning(
                    "a batch of %d chunks was lost with its worker (%s); sending it again",
                    len(texts),
                    first_line(exc),
                )
                time.sleep(RETRY_WAIT_S)
                ref = self.submit(texts, voice, options)
        raise AssertionError("unreachable")

    def stop(self) -> None:
        """The actors end with this driver; ending them first frees the cluster at once."""
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception:
                log.debug("could not end an actor", exc_info=True)


def first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
