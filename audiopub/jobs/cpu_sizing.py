"""How many engine processes a CPU job starts: one per usable core, as far as memory allows.

Each engine process holds a model and its activations (`ENGINE_PROCESS_BYTES`, more for
bigger batches); too many for the memory and the pool dies of it mid-book.
"""

from __future__ import annotations

import os
from pathlib import Path

# Memory budgeted per engine process: one with the embedded Piper joe voice measured 0.5 GB in
# a short benchmark and up to 0.83 GB through a whole 1.2 M-character novel; 1 GiB covers that.
ENGINE_PROCESS_BYTES = 1 << 30
# Kept free beside the engine processes: the app itself (web UI, job planning, ffmpeg) and the
# rest of the machine.
APP_RESERVE_BYTES = 1 << 30
MEMINFO = Path("/proc/meminfo")  # Linux's memory figures; psutil is not a dependency


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
