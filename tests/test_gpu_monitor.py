"""GPU telemetry against a fake NVML, plus the real pynvml on this GPU-less machine.

The fake has pynvml's function names and raises pynvml's own error classes, so the monitor's
`except nvml.NVMLError` clauses are the ones real failures would hit.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace

import pynvml
import pytest

from audiopub.gpu.monitor import GpuMonitor, GpuSample, UtilisationSummary, query_gpu_info

MIB = 1024 * 1024
NAME = "NVIDIA GeForce RTX 4090"


class FakeNvml:
    """RTX 4090s (one unless `device_count` says). Tests flip the attributes below to change
    what they report."""

    NVMLError = pynvml.NVMLError
    NVMLError_NotSupported = pynvml.NVMLError_NotSupported
    NVMLError_NoPermission = pynvml.NVMLError_NoPermission
    NVMLError_FunctionNotFound = pynvml.NVMLError_FunctionNotFound
    NVMLError_LibraryNotFound = pynvml.NVMLError_LibraryNotFound
    NVMLError_DriverNotLoaded = pynvml.NVMLError_DriverNotLoaded
    NVMLError_LibRmVersionMismatch = pynvml.NVMLError_LibRmVersionMismatch
    NVMLError_GpuIsLost = pynvml.NVMLError_GpuIsLost
    NVML_TEMPERATURE_GPU = pynvml.NVML_TEMPERATURE_GPU

    def __init__(self) -> None:
        self.init_error: type[pynvml.NVMLError] | None = None
        self.power_error: type[pynvml.NVMLError] | None = None
        self.utilisation_error: type[pynvml.NVMLError] | None = None
        self.lost = False
        self.used_mb = 1024
        self.utilisation_pct = 37
        self.device_count = 1
        self.count_error: type[pynvml.NVMLError] | None = None
        # Per device index, the compute processes NVML lists: objects with .pid and
        # .usedGpuMemory (bytes, or None when the driver won't say).
        self.processes: dict[int, list[SimpleNamespace]] = {}
        self.lost_indices: set[int] = set()  # devices whose process list fails
        self.utilisation_reads: list[int] = []
        self.init_calls = 0
        self.shutdown_calls = 0
        self.handle_calls = 0
        self.sample_threads: set[int] = set()

    def nvmlInit(self) -> None:
        self.init_calls += 1
        if self.init_error is not None:
            raise self.init_error()

    def nvmlShutdown(self) -> None:
        self.shutdown_calls += 1

    def nvmlSystemGetDriverVersion(self) -> str:
        return "550.54.14"

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        return 12040

    def nvmlDeviceGetCount(self) -> int:
        if self.count_error is not None:
            raise self.count_error()
        return self.device_count

    def nvmlDeviceGetHandleByIndex(self, index: int) -> tuple[str, int]:
        self.handle_calls += 1
        self._check()
        return ("gpu", index)

    def nvmlDeviceGetName(self, handle: object) -> str:
        return NAME

    def nvmlDeviceGetUUID(self, handle: object) -> str:
        return "GPU-0a1b2c3d-4e5f-6789-abcd-ef0123456789"

    def nvmlDeviceGetCudaComputeCapability(self, handle: object) -> tuple[int, int]:
        return (8, 9)

    def nvmlDeviceGetPciInfo(self, handle: tuple[str, int]) -> SimpleNamespace:
        return SimpleNamespace(busId=f"00000000:{handle[1] + 1:02X}:00.0".encode())

    def nvmlDeviceGetMemoryInfo(self, handle: object) -> SimpleNamespace:
        self._check()
        used, total = self.used_mb * MIB, 24564 * MIB
        return SimpleNamespace(used=used, total=total, free=total - used)

    def nvmlDeviceGetTemperature(self, handle: object, sensor: int) -> int:
        assert sensor == pynvml.NVML_TEMPERATURE_GPU
        self.sample_threads.add(threading.get_ident())  # only sampling reads temperature
        self._check()
        return 45

    def nvmlDeviceGetUtilizationRates(self, handle: object) -> SimpleNamespace:
        self._check()
        if self.utilisation_error is not None:
            raise self.utilisation_error()
        self.utilisation_reads.append(self.utilisation_pct)
        return SimpleNamespace(gpu=self.utilisation_pct, memory=12)

    def nvmlDeviceGetPowerUsage(self, handle: object) -> int:
        self._check()
        if self.power_error is not None:
            raise self.power_error()
        return 120_000  # milliwatts

    def nvmlDeviceGetComputeRunningProcesses(
        self, handle: tuple[str, int]
    ) -> list[SimpleNamespace]:
        self._check()
        if handle[1] in self.lost_indices:
            raise pynvml.NVMLError_GpuIsLost()
        return list(self.processes.get(handle[1], []))

    def _check(self) -> None:
        if self.lost:
            raise pynvml.NVMLError_GpuIsLost()


def wait_for(condition: Callable[[], object], timeout: float = 2.0) -> None:
    """Poll `condition` until it holds; fail (rather than hang or guess) after `timeout`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.002)


def has_used(monitor: GpuMonitor, mb: float) -> Callable[[], bool]:
    return lambda: [s.vram_used_mb for s in monitor.latest()] == [mb]


def test_query_gpu_info_reports_device_facts() -> None:
    fake = FakeNvml()
    status = query_gpu_info(fake)
    assert status.available and status.reason is None
    (gpu,) = status.gpus
    assert (gpu.index, gpu.name, gpu.driver_version) == (0, NAME, "550.54.14")
    assert gpu.cuda_driver_version == "12.4"
    assert gpu.compute_capability == "8.9"
    assert gpu.vram_total_mb == 24564
    assert gpu.uuid is not None and gpu.uuid.startswith("GPU-")
    assert (fake.init_calls, fake.shutdown_calls) == (1, 1)


def test_monitor_samples_on_its_own_thread() -> None:
    fake = FakeNvml()
    with GpuMonitor(fake, interval_s=0.01) as monitor:
        assert monitor.running and monitor.status().available
        wait_for(lambda: len(monitor.history()) >= 3)
        (sample,) = monitor.latest()
    assert fake.sample_threads and threading.get_ident() not in fake.sample_threads
    assert sample == GpuSample(
        index=0,
        name=NAME,
        uuid=sample.uuid,
        vram_used_mb=1024,
        vram_total_mb=24564,
        temperature_c=45,
        utilisation_pct=37,
        power_w=120.0,
        timestamp=sample.timestamp,
    )
    assert 0 <= time.monotonic() - sample.timestamp < 5


def test_history_is_a_bounded_ring_and_filters_by_age() -> None:
    fake = FakeNvml()
    with GpuMonitor(fake, interval_s=0.005, max_samples=5) as monitor:
        wait_for(lambda: fake.handle_calls > 12)
    ticks = monitor.history(seconds=60)
    assert len(ticks) == 5
    stamps = [tick[0].timestamp for tick in ticks]
    assert stamps == sorted(stamps)
    assert monitor.history(seconds=0) == []


def test_peak_vram_is_the_maximum_since_start_or_reset() -> None:
    fake = FakeNvml()
    with GpuMonitor(fake, interval_s=0.01) as monitor:
        for mb in (1000, 5000, 2000):
            fake.used_mb = mb
            wait_for(has_used(monitor, mb))
        assert monitor.peak_vram_mb() == {0: 5000}


def test_utilisation_covers_every_sample_not_just_the_ring_buffer() -> None:
    fake = FakeNvml()
    monitor = GpuMonitor(fake, interval_s=0.005, max_samples=3)
    with monitor:
        fake.utilisation_pct = 100
        wait_for(lambda: [s.utilisation_pct for s in monitor.latest()] == [100])
        fake.utilisation_pct = 20
        wait_for(lambda: fake.utilisation_reads.count(20) > 10)
    reads = fake.utilisation_reads  # every reading the monitor took, all of them kept
    summary = monitor.utilisation()[0]
    assert summary.samples == len(reads) > 3
    assert summary.mean_pct == pytest.approx(sum(reads) / len(reads))
    assert summary.max_pct == 100
    assert all(s.utilisation_pct == 20 for tick in monitor.history(60) for s in tick)

    with monitor:  # a new start() starts the figures afresh
        wait_for(lambda: monitor.utilisation().get(0, UtilisationSummary(0, None, None)).samples)
    assert monitor.utilisation()[0].max_pct == 20


def test_utilisation_a_board_does_not_report_has_no_figures() -> None:
    fake = FakeNvml()
    fake.utilisation_error = pynvml.NVMLError_NotSupported
    with GpuMonitor(fake, interval_s=0.01) as monitor:
        wait_for(lambda: len(monitor.history()) >= 2)
    assert monitor.utilisation() == {0: UtilisationSummary(0, None, None)}
    assert monitor.peak_vram_mb() == {0: 1024}


def test_unsupported_metric_is_none_and_the_others_still_report() -> None:
    fake = FakeNvml()
    fake.power_error = pynvml.NVMLError_NotSupported
    with GpuMonitor(fake, interval_s=0.01) as monitor:
        wait_for(monitor.latest)
        (sample,) = monitor.latest()
        assert monitor.status().available and monitor.status().reason is None
    assert sample.power_w is None
    assert (sample.temperature_c, sample.utilisation_pct, sample.vram_used_mb) == (45, 37, 1024)


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (pynvml.NVMLError_LibraryNotFound, "NVML could not be initialised (NVML Shared Library"),
        (pynvml.NVMLError_DriverNotLoaded, "the NVIDIA driver is not loaded"),
    ],
)
def test_init_failure_means_unavailable_with_a_reason_and_no_thread(
    error: type[pynvml.NVMLError], words: str
) -> None:
    fake = FakeNvml()
    fake.init_error = error
    threads_before = threading.active_count()
    with GpuMonitor(fake, interval_s=0.01) as monitor:
        status = monitor.status()
        assert not status.available and status.gpus == ()
        assert status.reason is not None and status.reason.startswith("No NVIDIA GPU detected")
        assert words in status.reason
        assert not monitor.running and threading.active_count() == threads_before
        assert (monitor.latest(), monitor.history(), monitor.peak_vram_mb()) == ([], [], {})
        assert monitor.utilisation() == {}
    assert fake.shutdown_calls == 0  # nothing was initialised, so nothing to shut down
    assert query_gpu_info(fake).reason == status.reason


def test_gpu_lost_mid_run_keeps_last_samples_and_retries_at_the_interval() -> None:
    fake = FakeNvml()
    interval = 0.05
    with GpuMonitor(fake, interval_s=interval) as monitor:
        wait_for(monitor.latest)
        fake.used_mb = 3000
        wait_for(has_used(monitor, 3000))
        fake.lost = True
        wait_for(lambda: monitor.status().reason is not None)
        status = monitor.status()
        assert not status.available and status.gpus  # the facts found at start stay
        assert "GPU 0" in status.reason and "GPU is lost" in status.reason
        # Still trying, but no faster than the interval: no busy loop on a dead GPU.
        attempts, began = fake.handle_calls, time.monotonic()
        wait_for(lambda: fake.handle_calls >= attempts + 3)
        assert time.monotonic() - began >= 2 * interval * 0.9
        assert monitor.running
        assert [s.vram_used_mb for s in monitor.latest()] == [3000]
        fake.lost = False  # e.g. the driver recovered it
        wait_for(lambda: monitor.status().reason is None)
        assert monitor.status().available


def test_stop_joins_and_shuts_nvml_down_exactly_once() -> None:
    fake = FakeNvml()
    monitor = GpuMonitor(fake, interval_s=0.01)
    with monitor:
        wait_for(monitor.latest)
    monitor.stop()
    monitor.stop()
    assert not monitor.running
    assert (fake.init_calls, fake.shutdown_calls) == (1, 1)
    assert not any(t.name == "audiopub-gpu-monitor" for t in threading.enumerate())
    assert monitor.latest()  # the last readings stay readable after stop


def test_real_pynvml_reports_the_state_of_this_machine_without_raising() -> None:
    # CI has no GPU: NVML can't initialise, which must read as "unavailable, because ...".
    status = query_gpu_info()
    if status.available:  # a developer's GPU machine
        assert status.gpus and status.reason is None
    else:
        assert status.gpus == ()
        assert status.reason and "GPU" in status.reason
    with GpuMonitor(interval_s=0.01) as monitor:
        assert monitor.status().available == status.available
        assert monitor.running == status.available


def test_missing_bindings_read_as_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml -> ImportError
    status = query_gpu_info()
    assert not status.available and "nvidia-ml-py" in (status.reason or "")
