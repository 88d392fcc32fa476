"""The CPU executor: a pool of engine processes, one per core, each with a single intra-op
thread, fed batches in reading order.

On a CPU, ONNX Runtime spreads one small VITS/flow graph over several cores poorly; one worker
process per core keeps every core busy instead (`cpu_sizing` says how many the machine holds).
A task is plain data (`chunk_work`), so it crosses the process boundary as it is.
"""

from __future__ import annotations

import collections
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Protocol

from audiopub import settings
from audiopub.errors import SynthesisFailed
from audiopub.jobs.chunk_executor import ChunkExecutor, ExecutorInfo, Placement
from audiopub.jobs.chunk_work import (
    ChunkResult,
    ChunkTask,
    in_task_order,
    planned_batches,
    synthesize_batch,
)
from audiopub.tts.batching import BatchLimits
from audiopub.tts.engine import Engine, warm_up
from audiopub.tts.registry import engines_loaded, get_engine

WINDOW_PER_WORKER = 2  # batches queued ahead per process: enough to never leave a core idle
START_POLL_S = 0.05  # how often `start` asks again for the workers still loading

_worker_engine: Engine | None = None  # set in each worker process by _init_worker


def _init_worker(engine_name: str, model_dir: Path, options: settings.Settings) -> None:
    global _worker_engine
    settings.install(options)  # the parent's, as its command read them
    # Ctrl-C in a terminal reaches every process of the foreground group. The parent pauses
    # the job and shuts the pool down; a worker interrupted inside the pool's queue instead
    # leaves its lock held, and the pool (and the command) hang at exit.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent()
    _worker_engine = get_engine(engine_name, use_gpu=False, model_dir=model_dir, threads=1)


def exit_with_parent() -> None:
    """End this worker the moment its parent dies (even by SIGKILL), instead of finishing its
    queue as an orphan that still holds the terminal and a core."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="audiopub-parent-watch", daemon=True).start()


def _run_in_worker(tasks: list[ChunkTask]) -> list[ChunkResult]:
    assert _worker_engine is not None
    return synthesize_batch(_worker_engine, tasks)


def _load_voice_in_worker(voice: str) -> tuple[int, int]:
    """Load `voice` in this worker now (Piper loads a voice's session on first use); this
    process's id and how many engines it has loaded, ever."""
    assert _worker_engine is not None
    warm_up(_worker_engine, voice)
    return os.getpid(), engines_loaded()


class PoolKeeper(Protocol):
    """Whoever keeps engine processes between jobs (`warm_engines.WarmEngines`)."""

    def give_back(self, pool: ProcessExecutor, keep: bool) -> None:
        """A job is done with `pool`: keep it for the next one if `keep` (and there is room),
        else shut it down once nobody else uses it."""


class ProcessExecutor(ChunkExecutor):
    """A pool of single-threaded engine processes, fed batches in reading order."""

    def __init__(
        self,
        engine_name: str,
        model_dir: Path,
        workers: int,
        batch_size: int = 1,
        device: str = "CPU",
        keeper: PoolKeeper | None = None,
        *,
        options: settings.Settings,
    ) -> None:
        """`device`: the job's engine device the processes stand for, in words (the CPU, or a
        GPU asked for that is unavailable, and why); `keeper`: who the pool goes back to when
        a job closes it (None: it shuts down); `options`: the settings the processes run
        under."""
        # spawn, not fork: ONNX Runtime's thread pools do not survive a fork.
        context = multiprocessing.get_context("spawn")
        self.workers = workers
        self.device = device
        self.limits = BatchLimits(batch_size)
        self.broken = False
        self.batch_sizes: Counter[int] = Counter()
        self.device_chunks: Counter[str] = Counter()  # the processes' own: not counted here
        self._keeper = keeper
        self.peak_vram_mb: dict[int, float] = {}  # CPU processes hold none
        self._pool = ProcessPoolExecutor(
            workers,
            mp_context=context,
            initializer=_init_worker,
            initargs=(engine_name, model_dir, options),
        )

    def start(self, voice: str) -> dict[int, int]:
        """Start every worker process and load `voice` in each, before any chunk: a stage of
        its own, so no chunk's time holds a process starting. Quick when they already run with
        it loaded. Returns each worker's process id → engines it has loaded.

        A worker still starting takes no task, so asking until every process has answered
        means every one has loaded the voice."""
        loads: dict[int, int] = {}
        try:
            while len(loads) < self.workers:
                asked = [
                    self._pool.submit(_load_voice_in_worker, voice)
                    for _ in range(self.workers - len(loads))
                ]
                loads.update(future.result() for future in asked)
                if len(loads) < self.workers:
                    time.sleep(START_POLL_S)
        except BrokenProcessPool as exc:
            self.broken = True
            raise SynthesisFailed(
                "An engine process stopped while it started (out of "
                "memory?). Resume the job to try again."
            ) from exc
        return loads

    def process_ids(self) -> list[int]:
        """The worker processes running now."""
        return sorted(self._pool._processes or ())  # noqa: SLF001 — the pool's own record

    def map(
        self, tasks: Iterable[ChunkTask], notify: Callable[[str], None] | None = None
    ) -> Generator[ChunkResult, None, None]:
        pending: collections.deque[tuple[list[int], Future[list[ChunkResult]]]] = (
            collections.deque()
        )
        try:
            yield from in_task_order(self._map(pending, tasks))
        except BrokenProcessPool as exc:
            self.broken = True  # executor_for starts a fresh pool next time
            raise SynthesisFailed(
                "An engine process stopped unexpectedly (out of memory?). Resume the job to "
                "continue from its last finished chunk."
            ) from exc
        finally:  # stopped early (cancel, pause): drop what has not started
            for _, future in pending:
                future.cancel()

    def _map(
        self,
        pending: collections.deque[tuple[list[int], Future[list[ChunkResult]]]],
        tasks: Iterable[ChunkTask],
    ) -> Iterator[list[tuple[int, ChunkResult]]]:
        for batch in planned_batches(tasks, lambda: self.limits):
            positions = [position for position, _ in batch]
            pending.append(
                (positions, self._pool.submit(_run_in_worker, [task for _, task in batch]))
            )
            self.batch_sizes[len(batch)] += 1
            if len(pending) >= self.workers * WINDOW_PER_WORKER:
                yield self._collect(*pending.popleft())
        while pending:
            yield self._collect(*pending.popleft())

    @staticmethod
    def _collect(
        positions: list[int], future: Future[list[ChunkResult]]
    ) -> list[tuple[int, ChunkResult]]:
        return list(zip(positions, future.result(), strict=True))

    def describe(self) -> ExecutorInfo:
        return ExecutorInfo(
            Placement.ENGINE_PROCESSES,
            self.device,
            (f"{self.device} × {self.workers} processes",),
            self.workers,
        )

    def close(self, keep_warm: bool = False) -> None:
        """Back to its keeper, which keeps it warm for the next job if `keep_warm` and the
        machine has room; without a keeper, shut down now."""
        if self._keeper is not None:
            self._keeper.give_back(self, keep_warm)
        else:
            self.shutdown()

    def shutdown(self) -> None:
        """Stop the engine processes now."""
        self._pool.shutdown(wait=True, cancel_futures=True)
