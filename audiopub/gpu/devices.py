"""Which CUDA devices a job can use, and how much memory each has free, from NVML.

NVML numbers every GPU in the machine; CUDA numbers only those in CUDA_VISIBLE_DEVICES, from
0. Audiopub gives ONNX Runtime CUDA's numbers, so a restricted list is counted, not looked up.
"""

from __future__ import annotations

from typing import Any

from audiopub.gpu.monitor import _shutdown, open_nvml, query_gpu_info


def cuda_device_ids(visible: str | None, nvml: Any = None) -> list[int]:
    """CUDA device ids to run engines on: every visible GPU (`visible`: CUDA_VISIBLE_DEVICES as
    the settings hold it; None: every GPU NVML counts), or [0] when none can be counted (a
    session asked for device 0 then runs there or reports why it fell back)."""
    if visible is not None:
        count = len([device for device in visible.split(",") if device.strip()])
    else:
        status = query_gpu_info(nvml)
        count = len(status.gpus) if status.available else 0
    return list(range(count)) or [0]


def free_vram_bytes(nvml: Any = None) -> dict[int, int]:
    """Free memory per NVML device index; {} when NVML can't say (no driver, no GPU)."""
    nvml, reason = open_nvml(nvml)
    if reason is not None:
        return {}
    try:
        free = {}
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            free[index] = int(nvml.nvmlDeviceGetMemoryInfo(handle).free)
        return free
    except nvml.NVMLError:
        return {}
    finally:
        _shutdown(nvml)
