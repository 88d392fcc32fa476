"""Engine processes kept between jobs, so the next job of the same engine starts speaking at
once instead of starting processes and loading its voice again (11-30 s on a small machine).

A pool is kept per (engine, models folder, batch size) while the machine has room for it:
it is let go when a job finishes with it and less than `KEEP_ROOM_BYTES` of memory is
available, when a job needs a pool of another engine (whose processes are sized on the memory
these would hold), or when no job has used it for `settings.engine_idle_s()`
(AUDIOPUB_ENGINE_IDLE_S, 10 minutes by default).
Memory is read with psutil (`cpu_sizing.available_memory_bytes`), within a container's limit.
"""

from __future__ import annotations

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

log = logging.getLogger(__name__)

# An idle pool is kept only while this much memory stays available beside it: the app's own
# reserve, and room for one more engine process (a preview's, the next job's planning).
KEEP_ROOM_BYTES: Final = APP_RESERVE_BYTES + ENGINE_PROCESS_BYTES

# Engine name, models folder, chunks per batch, and the device the processes stand for in
# words (the CPU, or a GPU asked for that is unavailable: a job's record says why).
PoolKey = tuple[str, Path, int, str]


@dataclass
class _Kept:
    pool: ProcessExecutor
    users: int = 0  # jobs (or a next job's preparation) speaking with it now
    idle_since: float = 0.0  # time.monotonic() when the last user let go


class WarmPools:
    """The engine processes of this process's jobs, kept warm between them."""

    def __init__(self, room: Callable[[], int] = available_memory_bytes) -> None:
        self._kept: dict[PoolKey, _Kept] = {}
        self._lock = threading.Lock()
        self._room = room

    def take(
        self, key: PoolKey, workers: int | None, make: Callable[[], ProcessExecutor | None]
    ) -> ProcessExecutor | None:
        """The warm pool for `key` (with `workers` processes, if that is forced), else what
        `make` makes once the idle pools of other keys are let go (None: no pool after all, the
        job speaks in this process). Either way the pool is in use until `give_back`."""
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and (
                kept.pool.broken or (workers is not None and kept.pool.workers != workers)
            ):
                if kept.users == 0:
                    del self._kept[key]
                    kept.pool.shutdown()
                kept = None
            # Idle pools of other engines go: their memory is this one's (or the job's).
            self._let_go(
                lambda other: other.users == 0 and other is not kept,
                "another engine needs the memory",
            )
            if kept is None:
                pool = make()  # sized on the memory the idle pools just gave back
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
            kept.idle_since = time.monotonic()
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

    def pools(self) -> list[ProcessExecutor]:
        with self._lock:
            return [kept.pool for kept in self._kept.values()]

    def reap(self) -> None:
        """Let go of the pools idle for longer than the idle time, or all idle ones where the
        machine is short of memory."""
        idle_s = settings.engine_idle_s()
        short = self._room() < KEEP_ROOM_BYTES
        now = time.monotonic()
        with self._lock:
            self._let_go(
                lambda kept: kept.users == 0 and (short or now - kept.idle_since >= idle_s),
                "short of memory" if short else "idle",
            )

    def close_all(self) -> None:
        with self._lock:
            kept, self._kept = list(self._kept.values()), {}
        for each in kept:
            each.pool.shutdown()

    def _let_go(self, which: Callable[[_Kept], bool], why: str) -> None:
        """Close the kept pools `which` picks (called holding the lock)."""
        for key, kept in list(self._kept.items()):
            if which(kept):
                del self._kept[key]
                log.info("stopping %d idle engine processes (%s)", kept.pool.workers, why)
                kept.pool.shutdown()

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
