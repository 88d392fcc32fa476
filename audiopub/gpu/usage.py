"""How much GPU memory one process holds on each device, from NVML's compute-process lists.

The monitor's VRAM figures are each device's total (every process on it); a job that runs its
engine in this process wants its own share, read after every batch. So this is a plain call,
not a thread, and it keeps NVML initialised between calls: `nvmlInit` can take up to ~1 s per
GPU without persistence mode, far more than a batch. NVML counts its inits, so holding one for
the life of the process is safe beside a `GpuMonitor` that opens and closes its own.

Limits of what the driver tells: with WDDM (WSL, Windows) or in some containers an entry's
`usedGpuMemory` is unknown (None), and the device's total used memory stands in for it. In a
container with its own PID namespace the driver may list host PIDs, which match no PID seen
inside, so the process reads as holding nothing.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from audiopub.gpu.monitor import open_nvml

log = logging.getLogger(__name__)

_MIB = 1024 * 1024  # NVML reports bytes
_lock = threading.Lock()  # guards _held
_held: Any = None  # the NVML module this process holds an nvmlInit on, kept between calls


def process_vram_mb(pid: int | None = None, nvml: Any = None) -> dict[int, float]:
    """MiB of GPU memory process `pid` (default: this one) holds, per device index.

    Devices where it holds nothing are left out; no NVML, no GPU or an NVML error give {}:
    this never raises for NVML. `nvml` is the pynvml module (imported when None) or a stand-in
    with the same names.
    """
    pid = os.getpid() if pid is None else pid
    nvml = _initialised(nvml)
    if nvml is None:
        return {}
    try:
        count = nvml.nvmlDeviceGetCount()
    except nvml.NVMLError as err:
        # E.g. NVML was shut down under us by an unbalanced nvmlShutdown: initialise again
        # next time rather than fail from here on.
        log.debug("NVML device count failed: %s", err)
        _forget(nvml)
        return {}
    used: dict[int, float] = {}
    for index in range(count):
        try:  # one lost GPU must not hide the others
            mb = _device_mb(nvml, index, pid)
        except nvml.NVMLError as err:
            log.debug("NVML could not read GPU %d's processes: %s", index, err)
            continue
        if mb is not None:
            used[index] = mb
    return used


def _initialised(nvml: Any) -> Any:
    """The NVML module, initialised (once per module); None when NVML can't be used."""
    global _held
    if nvml is None:
        try:
            import pynvml  # lazy: importing audiopub must not need the NVIDIA bindings
        except ImportError:
            return None
        nvml = pynvml
    with _lock:
        if nvml is _held:
            return nvml
        module, reason = open_nvml(nvml)
        if reason is not None:
            # Not remembered: a driver loaded later is found on the next call, and a failing
            # nvmlInit costs about 40 µs (measured with the real bindings and no GPU).
            log.debug("%s", reason)
            return None
        _held = module
        return module


def _forget(nvml: Any) -> None:
    global _held
    with _lock:
        if _held is nvml:
            _held = None


def _device_mb(nvml: Any, index: int, pid: int) -> float | None:
    """MiB `pid` holds on device `index`; None when it is not among the device's processes."""
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    # A process can be listed more than once (one entry per MIG instance it uses).
    mine = [p for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle) if p.pid == pid]
    if not mine:
        return None
    if any(p.usedGpuMemory is None for p in mine):
        # The driver won't say (WDDM under WSL or Windows, some containers): the device's total
        # is the best figure left, an upper bound that includes every other process on it.
        return float(nvml.nvmlDeviceGetMemoryInfo(handle).used / _MIB)
    return float(sum(p.usedGpuMemory for p in mine) / _MIB)
