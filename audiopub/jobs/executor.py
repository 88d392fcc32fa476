"""Where chunks become audio files: in the calling thread, or in one process per CPU core.

On a CPU, ONNX Runtime spreads one small VITS/flow graph over several cores poorly; one worker
process per core, each with a single intra-op thread, fed chunks in reading order, keeps every
core busy instead. On a GPU one in-process engine is the right shape.

A task is plain data (text, voice, options, where to write), so a later executor can hand the
same tasks to a distributed engine instead of local processes.
"""

from __future__ import annotations

import atexit
import collections
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from audiopub.errors import AudiopubError, SynthesisFailed
from audiopub.jobs.chunk_cache import write_chunk
from audiopub.tts.engine import Engine, SynthesisOptions, SynthesisResult
from audiopub.tts.registry import default_model_dir, get_engine

log = logging.getLogger(__name__)

RETRIES = 1  # a chunk the engine fails on is tried once more before the job fails
WINDOW_PER_WORKER = 2  # chunks queued ahead per process: enough to never leave a core idle
# Memory budgeted per engine process: one with the embedded Piper joe voice measured 0.5 GB in
# a short benchmark and up to 0.83 GB through a whole 1.2 M-character novel; 1 GiB covers that.
ENGINE_PROCESS_BYTES = 1 << 30
# Kept free beside the engine processes: the app itself (web UI, job planning, ffmpeg) and the
# rest of the machine.
APP_RESERVE_BYTES = 1 << 30
MEMINFO = Path("/proc/meminfo")  # Linux's memory figures; psutil is not a dependency


@dataclass(frozen=True)
class ChunkTask:
    key: str  # the chunk's cache key: the caller matches results by it
    text: str
    voice: str
    options: SynthesisOptions
    out_path: Path


@dataclass(frozen=True)
class ChunkResult:
    """What became of one task: the bookkeeping the job store keeps (the audio is on disk)."""

    key: str
    frames: int
    sample_rate: int
    synth_s: float  # engine time, not counting the file write
    provider: str
    error: str | None = None  # set when every attempt failed; no file was written
    # Engine seconds per stage for this chunk. Plain data, so it crosses process boundaries.
    stages: dict[str, float] = field(default_factory=dict)


class ChunkExecutor(Protocol):
    def map(self, tasks: Iterable[ChunkTask]) -> Iterator[ChunkResult]:
        """Results in task order; stopping the iteration abandons the rest."""
        ...


def _written(engine: Engine, task: ChunkTask, result: SynthesisResult,
             synth_s: float) -> ChunkResult:
    frames = write_chunk(task.out_path, result.audio, result.sample_rate)
    return ChunkResult(task.key, frames, result.sample_rate, synth_s, engine.device.provider,
                       stages=result.stage_seconds)


def synthesize_to_file(engine: Engine, task: ChunkTask) -> ChunkResult:
    """Speak one chunk and write it atomically; engine errors come back as text, retried once."""
    error = ""
    for attempt in range(RETRIES + 1):
        began = time.perf_counter()
        try:
            (result,) = engine.synthesize([task.text], task.voice, task.options)
        except AudiopubError:
            raise
        except Exception as exc:  # engine internals (ORT, espeak): report with the chunk's text
            error = f"The engine failed on this text: {task.text!r} ({exc})"
            log.warning("attempt %d of %d: %s", attempt + 1, RETRIES + 1, error)
            continue
        return _written(engine, task, result, time.perf_counter() - began)
    return ChunkResult(task.key, 0, 0, 0.0, engine.device.provider, error)


def synthesize_batch(engine: Engine, tasks: Sequence[ChunkTask]) -> list[ChunkResult]:
    """Speak chunks of one job in one engine call; if the batch fails, each chunk is tried on
    its own so that a bad chunk names itself and the good ones are kept."""
    if len(tasks) > 1:
        began = time.perf_counter()
        try:
            results = engine.synthesize([t.text for t in tasks], tasks[0].voice,
                                        tasks[0].options)
        except AudiopubError:
            raise
        except Exception as exc:  # engine internals: fall back to one chunk at a time
            log.warning("a batch of %d chunks failed (%s); trying them one by one", len(tasks), exc)
        else:
            # The call's time, shared out by length: what each chunk cost, near enough.
            seconds = time.perf_counter() - began
            chars = sum(len(t.text) for t in tasks) or 1
            return [_written(engine, t, result, seconds * len(t.text) / chars)
                    for t, result in zip(tasks, results, strict=True)]
    return [synthesize_to_file(engine, t) for t in tasks]


def batches(tasks: Iterable[ChunkTask], size: int) -> Iterator[list[ChunkTask]]:
    batch: list[ChunkTask] = []
    for task in tasks:
        batch.append(task)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class InlineExecutor:
    """Synthesises in the calling thread (GPU engines, tests, one-core machines)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def map(self, tasks: Iterable[ChunkTask]) -> Iterator[ChunkResult]:
        for batch in batches(tasks, self.engine.batch_size):
            yield from synthesize_batch(self.engine, batch)


# --- one process per core ------------------------------------------------------------------

_worker_engine: Engine | None = None  # set in each worker process by _init_worker


def _init_worker(engine_name: str, model_dir: Path) -> None:
    global _worker_engine
    # Ctrl-C in a terminal reaches every process of the foreground group. The parent pauses
    # the job and shuts the pool down; a worker interrupted inside the pool's queue instead
    # leaves its lock held, and the pool (and the command) hang at exit.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()
    _worker_engine = get_engine(engine_name, use_gpu=False, model_dir=model_dir, threads=1)


def _exit_with_parent() -> None:
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


class ProcessExecutor:
    """A pool of single-threaded engine processes, fed in reading order."""

    def __init__(self, engine_name: str, model_dir: Path, workers: int,
                 batch_size: int = 1) -> None:
        # spawn, not fork: ONNX Runtime's thread pools do not survive a fork.
        context = multiprocessing.get_context("spawn")
        self.workers = workers
        self.batch_size = batch_size
        self.broken = False
        self._pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                                         initargs=(engine_name, model_dir))

    def map(self, tasks: Iterable[ChunkTask]) -> Iterator[ChunkResult]:
        pending: collections.deque[Future[list[ChunkResult]]] = collections.deque()
        try:
            yield from self._map(pending, tasks)
        except BrokenProcessPool as exc:
            self.broken = True  # executor_for starts a fresh pool next time
            raise SynthesisFailed(
                "An engine process stopped unexpectedly (out of memory?). Resume the job to "
                "continue from its last finished chunk."
            ) from exc
        finally:  # stopped early (cancel, pause): drop what has not started
            for future in pending:
                future.cancel()

    def _map(self, pending: collections.deque[Future[list[ChunkResult]]],
             tasks: Iterable[ChunkTask]) -> Iterator[ChunkResult]:
        for batch in batches(tasks, self.batch_size):
            pending.append(self._pool.submit(_run_in_worker, batch))
            if len(pending) >= self.workers * WINDOW_PER_WORKER:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


_pools: dict[tuple[str, Path, int], ProcessExecutor] = {}
_pools_lock = threading.Lock()


def cpu_workers_for(cores: int, available_bytes: int | None,
                    per_process_bytes: int = ENGINE_PROCESS_BYTES,
                    reserve_bytes: int = APP_RESERVE_BYTES) -> int:
    """Engine processes for CPU synthesis: one per core, no more than the available memory
    holds after `reserve_bytes` for the app, and at least one.

    `available_bytes` None (memory unknown) lets the cores alone decide: any fixed guess would
    starve a large machine, and a pool that runs out of memory stops with a message that says
    so, and the job resumes from its last chunk.
    """
    workers = cores
    if available_bytes is not None:
        workers = min(workers, (available_bytes - reserve_bytes) // per_process_bytes)
    return max(1, workers)


def available_memory_bytes(meminfo: Path = MEMINFO) -> int | None:
    """Memory the kernel can give new processes without swapping (MemAvailable), or None
    where it does not say (not Linux, or a kernel older than 3.14)."""
    try:
        text = meminfo.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        name, _, value = line.partition(":")
        fields = value.split()  # e.g. ["12345678", "kB"]
        if name == "MemAvailable" and fields and fields[0].isdigit():
            return int(fields[0]) * (1024 if fields[1:] == ["kB"] else 1)
    return None


def usable_cores() -> int:
    """Cores this process may run on: a container or `taskset` may allow fewer than the
    machine has, and os.cpu_count() counts the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # sched_getaffinity exists on Linux only
        return os.cpu_count() or 1


def cpu_workers() -> int:
    """Worker processes for CPU synthesis (AUDIOPUB_CPU_WORKERS overrides; 1 = in-process)."""
    override = os.environ.get("AUDIOPUB_CPU_WORKERS")
    if override:
        return max(1, int(override))
    return cpu_workers_for(usable_cores(), available_memory_bytes())


def executor_for(engine_name: str, engine: Engine) -> ChunkExecutor:
    """The executor for a loaded engine: its own thread on a GPU, a process pool on a CPU."""
    workers = cpu_workers()
    if engine.device.on_gpu or workers == 1:
        return InlineExecutor(engine)
    model_dir = default_model_dir(engine_name)
    with _pools_lock:
        key = (engine_name, model_dir, workers)
        if key in _pools and _pools[key].broken:
            _pools.pop(key).close()
        if key not in _pools:
            _pools[key] = ProcessExecutor(engine_name, model_dir, workers, engine.batch_size)
        return _pools[key]


def release(executor: ChunkExecutor) -> None:
    """Stop an executor's engine processes, if it has any. Each holds its own model and
    activation memory (hundreds of MB for a Piper voice): a job lets them go once its audio is
    spoken, so encoding and an idle app don't carry them; the next job starts fresh ones."""
    if not isinstance(executor, ProcessExecutor):
        return
    with _pools_lock:
        for key in [key for key, pool in _pools.items() if pool is executor]:
            del _pools[key]
    executor.close()


@atexit.register
def _close_pools() -> None:
    with _pools_lock:
        for pool in _pools.values():
            pool.close()
        _pools.clear()
