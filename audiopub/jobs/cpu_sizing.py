"""How many engine processes a CPU job starts: one per usable core, as far as memory allows.

Each engine process holds a model and its activations (`ENGINE_PROCESS_BYTES`, more for
bigger batches); too many for the memory and the pool dies of it mid-book. The machine's
figures come from psutil (Linux, macOS, Windows alike); in a container, its cgroup's memory
limit and CPU quota (`cgroup_limits`) count too, since the kernel kills a container that goes
past its limit however much memory the machine has free.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import psutil

from audiopub.jobs.cgroup_limits import (
    CGROUP_ROOT,
    PROC_CGROUP,
    cgroup_cpu_quota,
    cgroup_memory_left,
)

# Memory budgeted per engine process: one with the embedded Piper joe voice measured 0.5 GB in
# a short benchmark and up to 0.83 GB through a whole 1.2 M-character novel; 1 GiB covers that.
ENGINE_PROCESS_BYTES = 1 << 30
# Kept free beside the engine processes: the app itself (web UI, job planning, ffmpeg) and the
# rest of the machine.
APP_RESERVE_BYTES = 1 << 30


def cpu_workers_for(
    cores: int,
    available_bytes: int | None,
    per_process_bytes: int = ENGINE_PROCESS_BYTES,
    reserve_bytes: int = APP_RESERVE_BYTES,
) -> int:
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


def available_memory_bytes(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int:
    """Memory new processes can have without swapping: what the machine has available, or what
    this container's cgroup limit leaves, whichever is less."""
    available = int(psutil.virtual_memory().available)
    left = cgroup_memory_left(root, proc_cgroup)
    return available if left is None else min(available, left)


def usable_cores(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int:
    """Cores this process may keep busy: those it may run on (a container or `taskset` may
    allow fewer than the machine has), within its cgroup's CPU quota (2.5 CPUs: 3 processes,
    the last one sharing)."""
    try:
        cores = len(psutil.Process().cpu_affinity() or ())
    except (AttributeError, psutil.Error):  # macOS has no CPU affinity
        cores = 0
    cores = cores or psutil.cpu_count() or os.cpu_count() or 1
    quota = cgroup_cpu_quota(root, proc_cgroup)
    return max(1, min(cores, math.ceil(quota))) if quota is not None else cores


def process_bytes_for(batch_size: int) -> int:
    """Memory one engine process needs for padded batches of `batch_size` chunks: activations
    grow with the batch. Two joe-voice processes at batch 8 peaked at 7.1 GB together
    (3.5 GB each) over a whole book: a third of ENGINE_PROCESS_BYTES more per extra chunk."""
    return int(ENGINE_PROCESS_BYTES * (1 + (batch_size - 1) / 3))


def cpu_workers(batch_size: int = 1, forced: int | None = None) -> int:
    """Worker processes for CPU synthesis: `forced` (the settings' `cpu_workers`,
    AUDIOPUB_CPU_WORKERS; 1 = in-process) if given, else as many as cores and memory allow."""
    if forced:
        return forced
    return cpu_workers_for(usable_cores(), available_memory_bytes(), process_bytes_for(batch_size))
