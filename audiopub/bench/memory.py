"""Peak memory of a run: this process and every process it starts (engine workers, ffmpeg).

`getrusage(RUSAGE_CHILDREN)` cannot be trusted for children: Linux charges a child with the
pages it had before its exec, so an ffmpeg started by a 200 MiB Python reports 200 MiB. So a
thread reads /proc every SAMPLE_INTERVAL_S instead: each descendant's own peak (VmHWM, kept by
the kernel, so nothing between samples is missed for a process that is still alive) and the
sum of everyone's current RSS, whose highest value is the run's real simultaneous footprint.
Linux only; elsewhere only this process's own peak is known.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

SAMPLE_INTERVAL_S: Final = 0.1
_PROC: Final = Path("/proc")


@dataclass(frozen=True)
class MemoryFacts:
    peak_rss_mb: float | None  # this process (getrusage RUSAGE_SELF)
    workers_peak_rss_mb: float | None  # engine worker processes: the sum of each one's peak
    other_children_peak_rss_mb: float | None  # the largest other descendant (ffmpeg)
    children_peak_rss_mb: float | None  # workers + other
    # This process + children, as if every one peaked at once: an upper bound. Engine workers
    # end before encoding starts, so it overstates a conversion; the next line is the truth.
    total_peak_rss_mb: float | None
    sampled_peak_rss_mb: float | None  # the highest simultaneous sum: the run's real peak
    peak_vram_mb: dict[str, float] = field(default_factory=dict)  # per GPU index, from NVML


@dataclass
class _Seen:
    name: str
    is_worker: bool  # an engine process of the multiprocessing pool
    peak_mb: float = 0.0


def _is_engine_worker(pid: int) -> bool:
    """Pool workers are started by multiprocessing's spawn (its resource tracker is not);
    known by their command line, because a job stops them before the run ends."""
    try:
        command = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return False
    return b"spawn_main" in command


def _own_peak_mb() -> float | None:
    try:
        import resource  # POSIX only
    except ImportError:
        return None
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss / 1024 / (1024 if sys.platform == "darwin" else 1)  # KiB on Linux, bytes on macOS


def _status(pid: int) -> dict[str, str]:
    try:
        text = (_PROC / str(pid) / "status").read_text()
    except OSError:  # it has just ended
        return {}
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def _kib_as_mb(value: str | None) -> float:
    return int(value.split()[0]) / 1024 if value else 0.0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in (_PROC / str(pid) / "task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
    except OSError:
        pass
    return found


def _descendants(pid: int) -> list[int]:
    pending, found = _children(pid), []
    while pending:
        child = pending.pop()
        found.append(child)
        pending += _children(child)
    return found


class MemorySampler:
    """Use `with sampling_memory() as memory: ...; facts = memory.facts()`."""

    def __init__(self, interval_s: float = SAMPLE_INTERVAL_S) -> None:
        self._interval_s = interval_s
        self._enabled = (_PROC / "self" / "status").is_file()
        self._seen: dict[int, _Seen] = {}
        self._sampled_peak_mb = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="audiopub-bench-memory", daemon=True)

    def start(self) -> None:
        if self._enabled:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.sample()

    def sample(self) -> None:
        total = _kib_as_mb(_status(os.getpid()).get("VmRSS"))
        for pid in _descendants(os.getpid()):
            status = _status(pid)
            if not status:
                continue
            total += _kib_as_mb(status.get("VmRSS"))
            with self._lock:
                seen = self._seen.get(pid)
                if seen is None:
                    seen = self._seen[pid] = _Seen(
                        status.get("Name", "?").strip(), _is_engine_worker(pid)
                    )
                seen.peak_mb = max(seen.peak_mb, _kib_as_mb(status.get("VmHWM")))
        with self._lock:
            self._sampled_peak_mb = max(self._sampled_peak_mb, total)

    def facts(self, peak_vram_mb: dict[int, float] | None = None) -> MemoryFacts:
        vram = {str(index): mb for index, mb in (peak_vram_mb or {}).items()}
        own = _own_peak_mb()
        if not self._enabled:
            return MemoryFacts(_round(own), None, None, None, None, None, vram)
        self.sample()
        with self._lock:
            worker_mb = sum(s.peak_mb for s in self._seen.values() if s.is_worker)
            other_mb = max((s.peak_mb for s in self._seen.values() if not s.is_worker), default=0.0)
            sampled = self._sampled_peak_mb
        children = worker_mb + other_mb
        # Two small children at once (ffmpeg and the resource tracker) can beat the sum of
        # peaks, which counts only the largest other child; the bound must stay a bound.
        total = max((own or 0.0) + children, sampled)
        return MemoryFacts(
            _round(own),
            _round(worker_mb),
            _round(other_mb),
            _round(children),
            _round(total),
            _round(sampled),
            vram,
        )


@contextmanager
def sampling_memory(interval_s: float = SAMPLE_INTERVAL_S) -> Iterator[MemorySampler]:
    sampler = MemorySampler(interval_s)
    sampler.start()
    try:
        yield sampler
    finally:
        sampler.stop()


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
