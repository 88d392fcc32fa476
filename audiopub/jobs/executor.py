"""Where chunks become audio files: in this process (`device_executor`: one worker thread per
GPU), or in one process per CPU core.

On a CPU, ONNX Runtime spreads one small VITS/flow graph over several cores poorly; one worker
process per core, each with a single intra-op thread, fed chunks in reading order, keeps every
core busy instead. On a GPU, one in-process engine per device, fed padded batches, is the right
shape. Either way chunks go in batches planned by length (`tts.batching`), and results come
back in task order.

A task is plain data (`chunk_work`), so a later executor can hand the same tasks to a
distributed engine instead of local processes.
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
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from audiopub import settings
from audiopub.errors import SynthesisFailed
from audiopub.jobs.chunk_work import (
    ChunkExecutor,
    ChunkResult,
    ChunkTask,
    in_task_order,
    planned_batches,
    synthesize_batch,
)
from audiopub.jobs.device_executor import DeviceExecutor
from audiopub.tts.batching import BatchLimits, padded_chars_for_vram
from audiopub.tts.engine import Engine, device_for, voice_of
from audiopub.tts.registry import default_model_dir, get_engine

log = logging.getLogger(__name__)

WINDOW_PER_WORKER = 2  # batches queued ahead per process: enough to never leave a core idle
# Memory budgeted per engine process: one with the embedded Piper joe voice measured 0.5 GB in
# a short benchmark and up to 0.83 GB through a whole 1.2 M-character novel; 1 GiB covers that.
ENGINE_PROCESS_BYTES = 1 << 30
# Kept free beside the engine processes: the app itself (web UI, job planning, ffmpeg) and the
# rest of the machine.
APP_RESERVE_BYTES = 1 << 30
MEMINFO = Path("/proc/meminfo")  # Linux's memory figures; psutil is not a dependency


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
    """A pool of single-threaded engine processes, fed batches in reading order."""

    def __init__(self, engine_name: str, model_dir: Path, workers: int,
                 batch_size: int = 1) -> None:
        # spawn, not fork: ONNX Runtime's thread pools do not survive a fork.
        context = multiprocessing.get_context("spawn")
        self.workers = workers
        self.limits = BatchLimits(batch_size)
        self.broken = False
        self.batch_sizes: Counter[int] = Counter()
        self.peak_vram_mb: dict[int, float] = {}  # CPU processes hold none
        self._pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                                         initargs=(engine_name, model_dir))

    def map(self, tasks: Iterable[ChunkTask],
            notify: Callable[[str], None] | None = None) -> Iterator[ChunkResult]:
        pending: collections.deque[tuple[list[int], Future[list[ChunkResult]]]] = (
            collections.deque())
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

    def _map(self, pending: collections.deque[tuple[list[int], Future[list[ChunkResult]]]],
             tasks: Iterable[ChunkTask]) -> Iterator[list[tuple[int, ChunkResult]]]:
        for batch in planned_batches(tasks, lambda: self.limits):
            positions = [position for position, _ in batch]
            pending.append((positions, self._pool.submit(_run_in_worker,
                                                         [task for _, task in batch])))
            self.batch_sizes[len(batch)] += 1
            if len(pending) >= self.workers * WINDOW_PER_WORKER:
                yield self._collect(*pending.popleft())
        while pending:
            yield self._collect(*pending.popleft())

    @staticmethod
    def _collect(positions: list[int],
                 future: Future[list[ChunkResult]]) -> list[tuple[int, ChunkResult]]:
        return list(zip(positions, future.result(), strict=True))

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


def process_bytes_for(batch_size: int) -> int:
    """Memory one engine process needs for padded batches of `batch_size` chunks: activations
    grow with the batch. Two joe-voice processes at batch 8 peaked at 7.1 GB together
    (3.5 GB each) over a whole book: a third of ENGINE_PROCESS_BYTES more per extra chunk."""
    return int(ENGINE_PROCESS_BYTES * (1 + (batch_size - 1) / 3))


def cpu_workers(batch_size: int = 1) -> int:
    """Worker processes for CPU synthesis (AUDIOPUB_CPU_WORKERS overrides; 1 = in-process)."""
    override = os.environ.get("AUDIOPUB_CPU_WORKERS")
    if override:
        return max(1, int(override))
    return cpu_workers_for(usable_cores(), available_memory_bytes(),
                           process_bytes_for(batch_size))


def executor_for(engine_name: str, engine: Engine, batch_size: int | None = None,
                 voice: str | None = None) -> ChunkExecutor:
    """The executor for a loaded engine: one thread per GPU, or a process pool on a CPU.

    `batch_size` forces chunks per batch (else AUDIOPUB_BATCH_SIZE, else what is fastest on
    the device: the engine's own choice on a CPU, up to GPU_MAX_BATCH within the free VRAM on a
    GPU); `voice` sizes GPU batches by the audio it makes (its sample rate)."""
    forced = batch_size or settings.batch_size_override()
    if device_for(engine, voice).on_gpu:  # the job's voice: no other is loaded to tell
        return _gpu_executor(engine_name, engine, forced, voice)
    size = default_batch_size(engine, forced)
    workers = cpu_workers(size)
    if workers == 1:
        return in_process_executor(engine, forced)
    model_dir = default_model_dir(engine_name)
    with _pools_lock:
        key = (engine_name, model_dir, workers, size)
        if key in _pools and _pools[key].broken:
            _pools.pop(key).close()
        if key not in _pools:
            _pools[key] = ProcessExecutor(engine_name, model_dir, workers, size)
        return _pools[key]


def default_batch_size(engine: Engine, forced: int | None = None) -> int:
    """`forced`, else AUDIOPUB_BATCH_SIZE, else the fastest for the engine's device: its own
    choice on a CPU, GPU_MAX_BATCH on a GPU (where the free VRAM may allow fewer)."""
    forced = forced or settings.batch_size_override()
    if forced:
        return forced
    return settings.GPU_MAX_BATCH if engine.device.on_gpu else engine.batch_size


def in_process_executor(engine: Engine, batch_size: int | None = None) -> ChunkExecutor:
    """Synthesis in this process, on this one engine (injected engines, one-core machines)."""
    return DeviceExecutor([engine], BatchLimits(default_batch_size(engine, batch_size)))


def _gpu_executor(engine_name: str, engine: Engine, forced: int | None,
                  voice: str | None) -> ChunkExecutor:
    """One engine per visible GPU, all fed from one queue; batches bounded by the VRAM budget
    (free + this process's own) of the tightest visible device, unless the size was forced."""
    from audiopub.gpu.devices import cuda_device_ids
    from audiopub.gpu.usage import process_vram_mb
    from audiopub.gpu.vram_budget import vram_budget_bytes
    engines = [engine] + [get_engine(engine_name, use_gpu=True, device_id=device)
                          for device in cuda_device_ids()[1:]]
    limits = BatchLimits(default_batch_size(engine, forced))
    budget = vram_budget_bytes()
    if budget and not forced:
        rate = voice_of(engine, voice).sample_rate if voice else 48_000  # the highest there is
        limits = BatchLimits(limits.max_items, padded_chars_for_vram(min(budget.values()), rate))
    return DeviceExecutor(engines, limits, vram_probe=process_vram_mb)


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
