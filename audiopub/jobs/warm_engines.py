"""Engines kept loaded between jobs, so the next job of the same engine starts speaking at once
instead of starting processes and loading its voice again (11-30 s on a small machine).

Two kinds are kept: a pool of engine processes per (engine, models folder, batch size) for CPU
jobs, and the engines a GPU job spoke with in this process (the registry's, whose ONNX
sessions hold VRAM). Either is kept while the machine has room for it, and let go:
- when a job finishes with it and less than `KEEP_ROOM_BYTES` of memory is available;
- when a job needs another engine (sized on the memory these would hold);
- when no job has used it for `settings.engine_idle_s()` (AUDIOPUB_ENGINE_IDLE_S, 10 minutes
  by default), or the machine runs short of memory while it waits.
Memory is read with psutil (`cpu_sizing.available_memory_bytes`), within a container's limit.
A GPU engine let go is forgotten by the registry: its sessions, and their VRAM, go back once
nobody speaks with it.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import psutil

from audiopub import settings
from audiopub.figures import size
from audiopub.jobs.cpu_sizing import APP_RESERVE_BYTES, ENGINE_PROCESS_BYTES, available_memory_bytes
from audiopub.jobs.process_pool import ProcessExecutor
from audiopub.tts import registry
from audiopub.tts.engine_info import Stamp

log = logging.getLogger(__name__)

# An idle engine is kept only while this much memory stays available beside it: the app's own
# reserve, and room for one more engine process (a preview's, the next job's planning).
KEEP_ROOM_BYTES: Final = APP_RESERVE_BYTES + ENGINE_PROCESS_BYTES

# Engine name, models folder, chunks per batch, the device the processes stand for in words
# (the CPU, or a GPU asked for that is unavailable: a job's record says why), and the stamp of
# what they loaded (`registry.stamp`: the files, and Kokoro's runtime), so a pool of ONNX
# Runtime engines never serves a job asking for PyTorch, nor one of old files a job after a
# download.
PoolKey = tuple[str, Path, int, str, Stamp]


@dataclass
class _Kept:
    pool: ProcessExecutor
    users: int = 0  # jobs (or a next job's preparation) speaking with it now
    idle_since: float = 0.0  # on the keeper's clock, when the last user let go


@dataclass
class _KeptOnGpu:
    """A GPU engine's use: the registry holds the engines (one per visible GPU)."""

    users: int = 0
    idle_since: float = 0.0


def release_gpu_engines(engine_name: str) -> None:
    """Let the registry forget `engine_name`'s GPU engines, and collect them now: ORT frees a
    session's VRAM when the session is destroyed, not at the next garbage collection."""
    registry.release(engine_name, use_gpu=True)
    gc.collect()


class WarmEngines:
    """The engines of this process's jobs, kept warm between them."""

    def __init__(
        self,
        room: Callable[[], int] = available_memory_bytes,
        clock: Callable[[], float] = time.monotonic,
        release_gpu: Callable[[str], None] = release_gpu_engines,
    ) -> None:
        self._kept: dict[PoolKey, _Kept] = {}
        self._on_gpu: dict[str, _KeptOnGpu] = {}  # engine name → its GPU engines' use
        self._lock = threading.Lock()
        self._room = room
        self._clock = clock
        self._release_gpu = release_gpu

    def take(
        self, key: PoolKey, workers: int | None, make: Callable[[], ProcessExecutor | None]
    ) -> ProcessExecutor | None:
        """The warm pool for `key` (with `workers` processes, if that is forced), else what
        `make` makes once the idle engines of other keys are let go (None: no pool after all,
        the job speaks in this process). Either way the pool is in use until `give_back`."""
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and (
                kept.pool.broken or (workers is not None and kept.pool.workers != workers)
            ):
                if kept.users == 0:
                    del self._kept[key]
                    kept.pool.shutdown()
                kept = None
            # Idle engines of other keys go: their memory is this one's (or the job's).
            self._let_go(
                lambda other: other.users == 0 and other is not kept,
                "another engine needs the memory",
            )
            self._release(self._idle_on_gpu(lambda name: True), "another engine needs the memory")
            if kept is None:
                pool = make()  # sized on the memory the idle engines just gave back
                if pool is None:
                    return None
                kept = self._kept[key] = _Kept(pool)
            kept.users += 1
            return kept.pool

    def give_back(self, pool: ProcessExecutor, keep: bool) -> None:
        """A job is done with `pool`: kept warm for the next one if `keep` and the machine has
        room, else closed once nobody else uses it."""
        with self._lock:
            found = next(((k, v) for k, v in self._kept.items() if v.pool is pool), None)
            if found is None:  # not kept (a forced size another job replaced): shut it down
                pool.shutdown()
                return
            key, kept = found
            kept.users = max(0, kept.users - 1)
            kept.idle_since = self._clock()
            if kept.users:
                return
            room = self._room()
            if keep and room >= KEEP_ROOM_BYTES and not pool.broken:
                log.info(
                    "keeping %d engine processes (%s) warm for the next job; %s available",
                    pool.workers,
                    size(pool_bytes(pool)),
                    size(room),
                )
                self._reap_later()
                return
            del self._kept[key]
        pool.shutdown()

    def hold_on_gpu(self, engine_name: str) -> None:
        """A job speaks with `engine_name`'s GPU engines (loaded by the registry) until
        `give_back_on_gpu`; the idle engines of others go, their memory is this one's."""
        with self._lock:
            self._let_go(lambda kept: kept.users == 0, "another engine needs the memory")
            released = self._idle_on_gpu(lambda name: name != engine_name)
            self._on_gpu.setdefault(engine_name, _KeptOnGpu()).users += 1
        self._release(released, "another engine needs the memory")

    def give_back_on_gpu(self, engine_name: str, keep: bool) -> None:
        """A job is done with `engine_name`'s GPU engines: kept loaded for the next job if
        `keep` and the machine has room, else released once nobody else uses them."""
        with self._lock:
            held = self._on_gpu.get(engine_name)
            if held is not None:
                held.users = max(0, held.users - 1)
                held.idle_since = self._clock()
                if held.users:
                    return
            room = self._room()
            if keep and room >= KEEP_ROOM_BYTES:
                log.info(
                    "keeping the %s engine on the GPU for the next job; %s available",
                    engine_name,
                    size(room),
                )
                self._on_gpu.setdefault(engine_name, _KeptOnGpu(idle_since=self._clock()))
                self._reap_later()
                return
            self._on_gpu.pop(engine_name, None)
        self._release([engine_name], "done" if not keep else "short of memory")

    def room_to_prepare(self) -> bool:
        """Whether the machine has room to load the next job's engine beside this one's."""
        return self._room() >= KEEP_ROOM_BYTES

    def pools(self) -> list[ProcessExecutor]:
        with self._lock:
            return [kept.pool for kept in self._kept.values()]

    def on_gpu(self) -> list[str]:
        """The engines whose GPU engines are held now, in use or kept warm."""
        with self._lock:
            return sorted(self._on_gpu)

    def reap(self) -> None:
        """Let go of the engines idle for longer than the idle time, or all idle ones where
        the machine is short of memory."""
        idle_s = settings.engine_idle_s()
        short = self._room() < KEEP_ROOM_BYTES
        now = self._clock()
        why = "short of memory" if short else "idle"
        with self._lock:
            self._let_go(
                lambda kept: kept.users == 0 and (short or now - kept.idle_since >= idle_s), why
            )
            released = self._idle_on_gpu(
                lambda name: short or now - self._on_gpu[name].idle_since >= idle_s
            )
        self._release(released, why)

    def close_all(self) -> None:
        with self._lock:
            kept, self._kept = list(self._kept.values()), {}
            on_gpu, self._on_gpu = list(self._on_gpu), {}
        for each in kept:
            each.pool.shutdown()
        self._release(on_gpu, "stopping")

    def _let_go(self, which: Callable[[_Kept], bool], why: str) -> None:
        """Close the kept pools `which` picks (called holding the lock)."""
        for key, kept in list(self._kept.items()):
            if which(kept):
                del self._kept[key]
                log.info("stopping %d idle engine processes (%s)", kept.pool.workers, why)
                kept.pool.shutdown()

    def _idle_on_gpu(self, which: Callable[[str], bool]) -> list[str]:
        """Stop holding the idle GPU engines `which` picks (called holding the lock); the
        caller releases them once the lock is let go."""
        names = [name for name, held in self._on_gpu.items() if held.users == 0 and which(name)]
        for name in names:
            del self._on_gpu[name]
        return names

    def _release(self, engine_names: list[str], why: str) -> None:
        for name in engine_names:
            log.info("releasing the %s engine on the GPU (%s)", name, why)
            self._release_gpu(name)

    def _reap_later(self) -> None:
        timer = threading.Timer(settings.engine_idle_s(), self.reap)
        timer.daemon = True  # an idle app that exits doesn't wait for it
        timer.start()


def pool_bytes(pool: ProcessExecutor) -> int:
    """Resident memory of the pool's processes now (a process gone meanwhile counts 0)."""
    total = 0
    for pid in pool.process_ids():
        try:
            total += psutil.Process(pid).memory_info().rss
        except psutil.Error:
            continue
    return total
