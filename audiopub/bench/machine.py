"""Facts about the machine a benchmark ran on: CPU, GPU, provider, how busy the GPU was, raw
float32 speed."""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from audiopub.gpu.monitor import GpuMonitor, UtilisationSummary, query_gpu_info
from audiopub.tts.engine import Engine

MATMUL_SIZE = 2048  # big enough for BLAS to reach its peak, small enough to take ~0.1 s a go
MATMUL_SECONDS = 3.0  # how long to keep multiplying; the best run counts


@dataclass(frozen=True)
class GpuFacts:
    available: bool
    reason: str | None  # why there is no usable GPU, for people
    devices: list[dict[str, Any]] = field(default_factory=list)  # monitor.GpuInfo fields


@dataclass(frozen=True)
class DeviceFacts:
    requested_gpu: bool
    provider: str  # what the engine's sessions actually run on
    description: str  # DeviceReport.describe(): "CPU", "GPU (CUDA)", or the fallback reason
    fallback_reason: str | None
    cpu_model: str
    cpu_threads: int  # logical CPUs the OS reports
    engine_threads: int | None  # intra-op threads of the in-process engine (None: ORT default)
    cpu_workers: int  # engine processes the production executor runs on a CPU
    platform: str
    python: str
    onnxruntime: str
    gpu: GpuFacts


def cpu_model() -> str:
    """The CPU's marketing name: /proc/cpuinfo on Linux, else what `platform` knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or platform.machine() or "unknown"


def gpu_facts() -> GpuFacts:
    status = query_gpu_info()
    devices = [
        {
            "index": g.index,
            "name": g.name,
            "driver_version": g.driver_version,
            "cuda_driver_version": g.cuda_driver_version,
            "compute_capability": g.compute_capability,
            "vram_total_mb": g.vram_total_mb,
        }
        for g in status.gpus
    ]
    return GpuFacts(status.available, status.reason, devices)


@dataclass(frozen=True)
class GpuUsage:
    """How busy one GPU was over the whole run, from the monitor's samples."""

    index: int
    name: str
    samples: int  # utilisation readings (0 when the board reports none)
    mean_utilisation_pct: float | None
    max_utilisation_pct: int | None
    peak_vram_mb: float | None  # the device's used memory, every process on it


def gpu_usage(monitor: GpuMonitor) -> list[GpuUsage]:
    """Per GPU the monitor found at start, its utilisation and peak VRAM since; [] if none."""
    busy, peaks = monitor.utilisation(), monitor.peak_vram_mb()
    usage = []
    for gpu in monitor.status().gpus:
        summary = busy.get(gpu.index, UtilisationSummary(0, None, None))
        usage.append(
            GpuUsage(
                gpu.index,
                gpu.name,
                summary.samples,
                _round(summary.mean_pct),
                summary.max_pct,
                _round(peaks.get(gpu.index)),
            )
        )
    return usage


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def device_facts(
    engine: Engine, requested_gpu: bool, engine_threads: int | None, cpu_workers: int
) -> DeviceFacts:
    import onnxruntime  # not for `bench --report`, which reads these facts back

    report = engine.device
    return DeviceFacts(
        requested_gpu=requested_gpu,
        provider=report.provider,
        description=report.describe(),
        fallback_reason=report.fallback_reason,
        cpu_model=cpu_model(),
        cpu_threads=os.cpu_count() or 1,
        engine_threads=engine_threads,
        cpu_workers=cpu_workers,
        platform=platform.platform(),
        python=platform.python_version(),
        onnxruntime=onnxruntime.__version__,
        gpu=gpu_facts(),
    )


# --- raw speed ------------------------------------------------------------------------------


def matmul_gflops(size: int = MATMUL_SIZE, seconds: float = MATMUL_SECONDS) -> float:
    """This machine's float32 matrix-multiply speed through NumPy's BLAS, all cores: the best
    of repeated size×size products (2·size³ FLOP each) within `seconds`."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    out = np.empty_like(a)
    np.matmul(a, b, out=out)  # warm-up: BLAS threads start, pages are touched
    best = float("inf")
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        began = time.perf_counter()
        np.matmul(a, b, out=out)
        best = min(best, time.perf_counter() - began)
    return 2 * size**3 / best / 1e9
