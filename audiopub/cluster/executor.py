"""The executor that speaks a job's chunks on a Ray cluster.

    job: plan batches ─▶ driver process ─▶ actor.speak (Ray task) on the cluster
                     ◀─ audio, in order ◀─   ─▶ chunk files written here, results in task order

Each job gets its own pool of actors, one per GPU (`num_gpus=1`) where the cluster has GPUs,
else one per CPU, sized by what the cluster has free when the job starts; they end with the
job's speaking. A pool per job rather than actors shared by every head: a job's actors hold
exactly its model, nothing outlives a head that crashed, and Ray's own scheduler shares the
cluster between several heads' books (a second head's pool takes what the first left free).

Faults: Ray restarts an actor whose worker died (`max_restarts`) and runs its batch again
(`max_task_retries`); a batch that still fails is sent again by the driver, to any actor. A
chunk is marked done only once its file is written here, so none is ever lost. When the
cluster itself is gone (its driver process ends, or says so), `ClusterLost` pauses the job;
the same command resumes it.
"""

from __future__ import annotations

import collections
import logging
import multiprocessing
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, Final

from audiopub import settings
from audiopub.cluster import connection, driver
from audiopub.cluster.actor import SpokenBatch
from audiopub.errors import ClusterLost, SynthesisFailed
from audiopub.jobs.chunk_cache import write_chunk
from audiopub.jobs.chunk_executor import (
    ChunkExecutor,
    ExecutorFactory,
    ExecutorInfo,
    Placement,
)
from audiopub.jobs.chunk_work import ChunkResult, ChunkTask, in_task_order, planned_batches
from audiopub.jobs.executor import executor_for
from audiopub.jobs.report import NODE_MARK
from audiopub.tts.batching import BatchLimits
from audiopub.tts.engine import Engine

log = logging.getLogger(__name__)

WINDOW_PER_ACTOR: Final = 2  # batches in flight per actor: the next one is always there
STOP_WAIT_S: Final = 10.0  # for the driver to end its actors and disconnect

Pending = tuple[list[int], list[ChunkTask]]  # positions and tasks of a batch sent


class RayExecutor(ChunkExecutor):
    """A job's actors on the cluster, fed batches in reading order through its driver."""

    def __init__(
        self, address: str, engine_name: str, engine: Engine, voice: str, batch_size: int | None
    ) -> None:
        connection.ray_module()  # installed, or say which extra to install
        self.address = address
        context = multiprocessing.get_context("spawn")  # a fresh process: no threads forked
        self._pipe, theirs = context.Pipe()
        forced = batch_size or settings.batch_size_override()
        self._driver = context.Process(
            target=driver.main,
            name="audiopub-ray-driver",
            daemon=True,
            args=(
                theirs,
                address,
                engine_name,
                engine.model_id(voice),
                voice,
                forced,
                engine.batch_size,
            ),
        )
        self._driver.start()
        theirs.close()
        try:
            _, self.device, max_items, self.actor_count = self._receive()  # "ready", or why not
        except BaseException:
            self.close()
            raise
        self.limits = BatchLimits(max_items)
        self.batch_sizes: Counter[int] = Counter()
        self.device_chunks: Counter[str] = Counter()  # per node, in the job's figures instead
        self.peak_vram_mb: dict[int, float] = {}  # on the workers, not measured here

    def start(self, voice: str) -> None:
        """Nothing left to load: the actors loaded the job's voice before the driver said it
        was ready (`__init__` waits for that)."""

    def map(
        self, tasks: Iterable[ChunkTask], notify: Callable[[str], None] | None = None
    ) -> Generator[ChunkResult, None, None]:
        """Results in task order. Stopping the iteration leaves the batches in flight to be
        read (and dropped) before the next map's, so their chunks stay pending."""
        yield from in_task_order(self._map(tasks))

    def _map(self, tasks: Iterable[ChunkTask]) -> Iterator[list[tuple[int, ChunkResult]]]:
        pending: collections.deque[Pending] = collections.deque()
        try:
            for batch in planned_batches(tasks, lambda: self.limits):
                chunk_tasks = [task for _, task in batch]
                self._send(
                    "speak",
                    [t.text for t in chunk_tasks],
                    chunk_tasks[0].voice,
                    chunk_tasks[0].options,
                )
                pending.append(([position for position, _ in batch], chunk_tasks))
                self.batch_sizes[len(batch)] += 1
                if len(pending) >= self.actor_count * WINDOW_PER_ACTOR:
                    yield self._collect(*pending.popleft())
            while pending:
                yield self._collect(*pending.popleft())
        finally:  # stopped early: the driver's answers to these still come, in order
            try:
                for _ in pending:
                    self._receive()
            except (ClusterLost, SynthesisFailed):
                pass  # nothing more comes

    def _send(self, *message: Any) -> None:
        try:
            self._pipe.send(message)
        except OSError as exc:  # the driver ended: Ray ended it with its cluster
            raise connection.lost(self.address, "the connection to it ended") from exc

    def _receive(self) -> tuple[Any, ...]:
        try:
            message = self._pipe.recv()
        except (EOFError, OSError) as exc:
            raise connection.lost(self.address, "the connection to it ended") from exc
        if message[0] == "lost":
            raise ClusterLost(message[1])
        if message[0] == "failed":
            raise SynthesisFailed(message[1])
        return message

    def _collect(
        self, positions: list[int], tasks: list[ChunkTask]
    ) -> list[tuple[int, ChunkResult]]:
        batch: SpokenBatch = self._receive()[1]
        where = f"{batch.provider}{NODE_MARK}{batch.node}"  # the figures per node read it
        results = []
        for task, spoken in zip(tasks, batch.spoken, strict=True):
            if isinstance(spoken, str):
                results.append(ChunkResult(task.key, 0, 0, 0.0, where, spoken))
                continue
            # Written here: the job's folder is on this machine only.
            frames = write_chunk(task.out_path, spoken.audio, spoken.sample_rate)
            results.append(
                ChunkResult(
                    task.key,
                    frames,
                    spoken.sample_rate,
                    spoken.engine_s,
                    where,
                    stages=spoken.stage_seconds,
                    word_starts=spoken.word_starts,
                )
            )
        return list(zip(positions, results, strict=True))

    def describe(self) -> ExecutorInfo:
        return ExecutorInfo(Placement.CLUSTER, self.device, (self.device,), self.actor_count)

    def close(self, keep_warm: bool = False) -> None:
        """End the driver, and the job's actors with it: they hold exactly this job's model,
        so they are never kept for another job."""
        try:
            self._pipe.send(("stop",))
        except OSError:
            pass  # already gone
        self._driver.join(STOP_WAIT_S)
        if self._driver.is_alive():
            self._driver.kill()
            self._driver.join()
        self._pipe.close()


def cluster_executors(address: str) -> ExecutorFactory:
    """The factory of executors on the cluster at `address`, for whoever runs jobs."""

    def executor(
        engine_name: str, engine: Engine, batch_size: int | None = None, voice: str | None = None
    ) -> ChunkExecutor:
        assert voice is not None  # a job's: the actors load it before they say ready
        return RayExecutor(address, engine_name, engine, voice, batch_size)

    return executor


def job_executors() -> ExecutorFactory:
    """How this process's jobs speak: on the Ray cluster `--ray` names (settings.ray_address),
    else on this machine (`jobs.executor.executor_for`)."""
    address = settings.ray_address()
    return cluster_executors(address) if address else executor_for
