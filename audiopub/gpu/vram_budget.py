"""How much GPU memory a job's batches may plan on, per device the job can see.

Two things make NVML's free memory the wrong figure on its own:

- NVML lists every GPU in the machine, in PCI bus order; CUDA shows a process only those in
  CUDA_VISIBLE_DEVICES (by index or UUID), numbered from 0 in its own order. A hidden GPU that
  another program fills must not shrink this job's batches, so visible devices are matched to
  NVML's by UUID or by their place in CUDA's order, never by NVML's index.
- An engine this process keeps between jobs holds its arena at the last job's peak: that
  memory reads as used, though the next batch can have it. So a device's budget is its free
  memory *plus this process's own use* of it.

The same budget is the ceiling of ONNX Runtime's CUDA arena (`gpu_mem_limit`), so a batch
that does not fit fails as "out of memory" (and is halved) instead of taking memory that other
programs on the card were promised. No NVML, no driver or no GPU: {} (no budget, never an
error).
"""

from __future__ import annotations

from typing import Any

from audiopub.gpu.monitor import _shutdown, open_nvml
from audiopub.gpu.usage import process_vram_mb
from audiopub.settings import Settings, current

_MIB = 1024 * 1024


def vram_budget_bytes(
    nvml: Any = None, options: Settings | None = None, pid: int | None = None
) -> dict[int, int]:
    """Bytes a batch may plan on, per CUDA device id this process can see (as `options`, by
    default the settings in force, say CUDA shows them): the device's free memory plus what
    process `pid` (default: this one) holds on it."""
    options = current() if options is None else options
    module, reason = open_nvml(nvml)
    if reason is not None:
        return {}
    try:
        visible = visible_nvml_indices(
            module, options.cuda_visible_devices, options.cuda_device_order
        )
        free = {
            index: int(
                module.nvmlDeviceGetMemoryInfo(module.nvmlDeviceGetHandleByIndex(index)).free
            )
            for index in visible
        }
    except module.NVMLError:
        return {}
    finally:
        _shutdown(module)
    own = process_vram_mb(pid, module)  # MiB per NVML index; {} when NVML can't say
    return {
        cuda_id: free[index] + int(own.get(index, 0.0) * _MIB)
        for cuda_id, index in enumerate(visible)
    }


def device_budget_bytes(cuda_id: int, nvml: Any = None) -> int | None:
    """The budget of one visible CUDA device; None when NVML can't say."""
    return vram_budget_bytes(nvml).get(cuda_id)


def visible_nvml_indices(nvml: Any, listed: str | None, order: str = "") -> list[int]:
    """NVML's index of each device CUDA shows this process, in CUDA's order (so position i is
    CUDA device i). NVML must be initialised.

    `listed` is CUDA_VISIBLE_DEVICES (None: not set, every device is shown), `order`
    CUDA_DEVICE_ORDER. The list's entries are indices into CUDA's order of all devices or
    (prefixes of) UUIDs; as CUDA does, the list ends at the first entry that names no device.
    CUDA's order is PCI bus order with CUDA_DEVICE_ORDER=PCI_BUS_ID; otherwise it puts the
    fastest first, for which a newer compute capability stands here (CUDA's own ranking is
    not published; on cards of one kind both are PCI bus order).
    """
    devices = _devices_in_cuda_order(nvml, order)
    if listed is None:
        return [index for index, _ in devices]
    shown: list[int] = []
    for entry in (part.strip() for part in listed.split(",")):
        index = _named(entry, devices)
        if index is None or index in shown:  # CUDA stops at the first entry it can't use
            break
        shown.append(index)
    return shown


def _devices_in_cuda_order(nvml: Any, order: str) -> list[tuple[int, str]]:
    """(NVML index, UUID) of every device, in the order CUDA numbers them."""
    devices = []
    for index in range(nvml.nvmlDeviceGetCount()):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        bus = _text(nvml.nvmlDeviceGetPciInfo(handle).busId).lower()
        newest_first = (0, 0)
        if order != "PCI_BUS_ID":
            major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
            newest_first = (-major, -minor)
        devices.append((newest_first, bus, index, _text(nvml.nvmlDeviceGetUUID(handle))))
    return [(index, uuid) for _, _, index, uuid in sorted(devices)]


def _named(entry: str, devices: list[tuple[int, str]]) -> int | None:
    """The NVML index of the device a CUDA_VISIBLE_DEVICES entry names, if one."""
    if entry.isdigit():
        position = int(entry)
        return devices[position][0] if position < len(devices) else None
    if entry.startswith("GPU-") and len(entry) > len("GPU-"):
        matches = [index for index, uuid in devices if uuid.startswith(entry)]
        return matches[0] if len(matches) == 1 else None  # a prefix must be unambiguous
    return None  # MIG instances and anything else: not a whole GPU that NVML lists


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
