"""NVML telemetry: one-shot device facts and a background sampler.

No GPU is a normal state (CI, laptops, AMD machines): `nvmlInit` failing becomes
`GpuStatus(available=False, reason=...)`, never an exception. NVML is only ever called from
`start()`/`query_gpu_info()` and the monitor's own daemon thread, so the UI can poll `latest()`
from its event loop without waiting on the driver.

Units: MB means MiB (as nvidia-smi shows them); timestamps are `time.monotonic()` seconds, so
a sample's age is `time.monotonic() - sample.timestamp` and clock changes can't reorder history.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_INTERVAL_S = 1.0  # 1 Hz: smooth enough for a gauge, negligible NVML cost
DEFAULT_MAX_SAMPLES = 600  # ring buffer: 10 minutes at 1 Hz, whatever the interval
_JOIN_TIMEOUT_S = 5.0  # NVML calls take milliseconds; a longer wait means a hung driver
_MIB = 1024 * 1024  # NVML reports bytes
# "This board can't report this metric" (e.g. power on laptops), not "the GPU is gone".
_UNSUPPORTED_ERRORS = (
    "NVMLError_NotSupported",
    "NVMLError_NoPermission",
    "NVMLError_FunctionNotFound",
)


@dataclass(frozen=True)
class GpuSample:
    """One reading of one GPU. A metric the board can't report is None."""

    index: int
    name: str
    uuid: str | None
    vram_used_mb: float | None
    vram_total_mb: float | None
    temperature_c: int | None
    utilisation_pct: int | None
    power_w: float | None
    timestamp: float  # time.monotonic() seconds


@dataclass(frozen=True)
class UtilisationSummary:
    """One GPU's utilisation over every sample since start(), not just the ring buffer's.

    NVML's figure is the share of the driver's own last sample period (1/6 s to 1 s, by board)
    in which a kernel ran; ticks shorter than that read one period more than once, so the mean
    is a time average and `samples` counts readings, not independent measurements.
    """

    samples: int  # readings that had a utilisation figure
    mean_pct: float | None  # None when the board never reported one
    max_pct: int | None


@dataclass(frozen=True)
class GpuInfo:
    """Facts about one device that don't change while the program runs."""

    index: int
    name: str
    driver_version: str  # "550.54.14"
    cuda_driver_version: str | None  # newest CUDA the driver supports, "12.4"
    compute_capability: str | None  # "8.6"
    vram_total_mb: float | None
    uuid: str | None = None


@dataclass(frozen=True)
class GpuStatus:
    """Whether a GPU can be used; if not (or if something broke since), `reason` says why."""

    available: bool
    reason: str | None = None  # written for people: the UI shows it as is
    gpus: tuple[GpuInfo, ...] = ()


def query_gpu_info(nvml: Any = None) -> GpuStatus:
    """Initialise NVML, read every device's facts, shut NVML down again. Never raises for NVML.

    `nvml` is the pynvml module (imported when None) or a stand-in with the same names.
    """
    nvml, reason = open_nvml(nvml)
    if reason is not None:
        return GpuStatus(False, reason)
    try:
        return _read_status(nvml)
    finally:
        _shutdown(nvml)


class GpuMonitor:
    """Samples every GPU each `interval_s` on a daemon thread; reads are thread-safe.

    Use `with GpuMonitor() as monitor:` or `start()` / `stop()` (from one owning thread).
    """

    def __init__(
        self,
        nvml: Any = None,
        interval_s: float = DEFAULT_INTERVAL_S,
        max_samples: int = DEFAULT_MAX_SAMPLES,
    ) -> None:
        if interval_s <= 0:
            raise ValueError(f"interval_s must be positive, got {interval_s}")
        if max_samples < 1:
            raise ValueError(f"max_samples must be at least 1, got {max_samples}")
        self._nvml_arg = nvml
        self._nvml: Any = None  # the module while we hold an nvmlInit
        self._interval_s = interval_s
        self._lock = threading.Lock()  # guards _status, _ticks, _peak and _busy
        self._status = GpuStatus(False, "GPU monitor not started")
        self._ticks: deque[tuple[GpuSample, ...]] = deque(maxlen=max_samples)
        # Whole-run figures, kept as samples arrive: the ring buffer forgets the start of a run.
        self._peak: dict[int, float] = {}
        self._busy: dict[int, _Busy] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Initialise NVML and start sampling; with no usable GPU, record why and do nothing.

        nvmlInit and the device facts are read here, on the caller's thread, so `status()` is
        final when this returns. It's a one-off (up to ~1 s per GPU without persistence mode):
        call it at startup or off the event loop. A second start() while running is a no-op.
        """
        if self._thread is not None:
            return
        nvml, reason = open_nvml(self._nvml_arg)
        status = GpuStatus(False, reason) if reason is not None else _read_status(nvml)
        if reason is None and not status.available:
            _shutdown(nvml)  # initialised, but nothing to watch
        with self._lock:
            self._status = status
            self._peak.clear()
            self._busy.clear()
        if not status.available:
            return
        self._nvml = nvml
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run,
            args=(nvml, status.gpus, _unsupported(nvml)),
            name="audiopub-gpu-monitor",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling, wait for the thread, and release NVML. Safe to call repeatedly."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        thread.join(_JOIN_TIMEOUT_S)
        if thread.is_alive():
            # Shutting NVML down under a call still in progress could crash the driver library.
            log.warning(
                "GPU monitor thread did not stop within %.0f s; leaving NVML initialised",
                _JOIN_TIMEOUT_S,
            )
            return
        _shutdown(self._nvml)
        self._nvml = None

    @property
    def running(self) -> bool:
        """True while the sampling thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def status(self) -> GpuStatus:
        """Availability, device facts, and the latest sampling error if any."""
        with self._lock:
            return self._status

    def latest(self) -> list[GpuSample]:
        """The newest reading of each GPU that answered; [] before the first or with no GPU."""
        with self._lock:
            return list(self._ticks[-1]) if self._ticks else []

    def history(self, seconds: float = 300.0) -> list[list[GpuSample]]:
        """Readings of the last `seconds`, oldest first: one list of GPUs per sampling tick."""
        cutoff = time.monotonic() - seconds
        with self._lock:
            return [list(tick) for tick in self._ticks if tick[-1].timestamp > cutoff]

    def peak_vram_mb(self) -> dict[int, float]:
        """Highest VRAM use per GPU index since start()."""
        with self._lock:
            return dict(self._peak)

    def utilisation(self) -> dict[int, UtilisationSummary]:
        """Per GPU index, utilisation over every sample since start() (see UtilisationSummary);
        a GPU whose board reports none has `samples == 0`."""
        with self._lock:
            return {index: busy.summary() for index, busy in self._busy.items()}

    def __enter__(self) -> GpuMonitor:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(
        self, nvml: Any, gpus: tuple[GpuInfo, ...], unsupported: tuple[type[BaseException], ...]
    ) -> None:
        while True:
            self._sample(nvml, gpus, unsupported)
            # Failed or not, the next attempt waits a full interval: a lost GPU never spins.
            if self._stop.wait(self._interval_s):
                return

    def _sample(
        self, nvml: Any, gpus: tuple[GpuInfo, ...], unsupported: tuple[type[BaseException], ...]
    ) -> None:
        samples: list[GpuSample] = []
        errors: list[str] = []
        for info in gpus:  # one lost GPU must not blank the others
            try:
                samples.append(_read_sample(nvml, info, unsupported))
            except nvml.NVMLError as err:
                errors.append(f"Lost contact with GPU {info.index} ({info.name}): {err}")
        reason = "; ".join(errors) or None
        with self._lock:
            if samples:  # a failed tick keeps the last good readings in place
                self._ticks.append(tuple(samples))
            for sample in samples:
                if sample.vram_used_mb is not None:
                    peak = self._peak.get(sample.index, 0.0)
                    self._peak[sample.index] = max(peak, sample.vram_used_mb)
                self._busy.setdefault(sample.index, _Busy()).add(sample.utilisation_pct)
            changed = reason != self._status.reason
            self._status = replace(self._status, available=bool(samples), reason=reason)
        if changed:  # log transitions only, not every failing tick
            if reason:
                log.warning("%s", reason)
            else:
                log.info("GPU monitoring recovered")


@dataclass
class _Busy:
    """Running count, sum and maximum of one GPU's utilisation readings."""

    samples: int = 0
    total: int = 0
    max_pct: int | None = None

    def add(self, pct: int | None) -> None:
        if pct is None:
            return
        self.samples += 1
        self.total += pct
        self.max_pct = pct if self.max_pct is None else max(self.max_pct, pct)

    def summary(self) -> UtilisationSummary:
        mean = self.total / self.samples if self.samples else None
        return UtilisationSummary(self.samples, mean, self.max_pct)


def open_nvml(nvml: Any) -> tuple[Any, str | None]:
    """Load (if None) and initialise NVML: (module, None), or (whatever, why not) for people."""
    if nvml is None:
        try:
            import pynvml  # lazy: importing audiopub must not need the NVIDIA bindings
        except ImportError:
            return None, "GPU monitoring unavailable: the nvidia-ml-py package is not installed"
        nvml = pynvml
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as err:
        # getattr(..., ()) keeps a stand-in module without these classes working.
        if isinstance(err, getattr(nvml, "NVMLError_DriverNotLoaded", ())):
            return nvml, f"No NVIDIA GPU detected: the NVIDIA driver is not loaded ({err})"
        if isinstance(err, getattr(nvml, "NVMLError_LibRmVersionMismatch", ())):
            return nvml, (
                "NVIDIA GPU unavailable: the driver and its NVML library versions "
                f"differ; rebooting after a driver update usually fixes this ({err})"
            )
        return nvml, f"No NVIDIA GPU detected: NVML could not be initialised ({err})"
    return nvml, None


def _shutdown(nvml: Any) -> None:
    try:
        nvml.nvmlShutdown()
    except nvml.NVMLError as err:  # nothing we could do about it; the process goes on
        log.debug("nvmlShutdown failed: %s", err)


def _unsupported(nvml: Any) -> tuple[type[BaseException], ...]:
    return tuple(getattr(nvml, name) for name in _UNSUPPORTED_ERRORS if hasattr(nvml, name))


def _optional(
    unsupported: tuple[type[BaseException], ...], read: Callable[..., T], *args: Any
) -> T | None:
    """`read(*args)`, or None when the board doesn't support it. Other NVML errors propagate."""
    try:
        return read(*args)
    except unsupported:
        return None


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value  # old pynvml returns bytes


def _read_status(nvml: Any) -> GpuStatus:
    """Every device's static facts; NVML must be initialised."""
    unsupported = _unsupported(nvml)
    gpus: list[GpuInfo] = []
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        cuda = _optional(unsupported, nvml.nvmlSystemGetCudaDriverVersion_v2)  # 12040 = 12.4
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            capability = _optional(unsupported, nvml.nvmlDeviceGetCudaComputeCapability, handle)
            memory = _optional(unsupported, nvml.nvmlDeviceGetMemoryInfo, handle)
            uuid = _optional(unsupported, nvml.nvmlDeviceGetUUID, handle)
            gpus.append(
                GpuInfo(
                    index=index,
                    name=_text(nvml.nvmlDeviceGetName(handle)),
                    driver_version=driver,
                    cuda_driver_version=None
                    if cuda is None
                    else f"{cuda // 1000}.{cuda % 1000 // 10}",
                    compute_capability=None if capability is None else "{}.{}".format(*capability),
                    vram_total_mb=None if memory is None else memory.total / _MIB,
                    uuid=None if uuid is None else _text(uuid),
                )
            )
    except nvml.NVMLError as err:
        return GpuStatus(False, f"NVIDIA GPU unavailable: NVML could not read it ({err})")
    if not gpus:
        return GpuStatus(False, "No NVIDIA GPU detected: the NVIDIA driver reports no devices")
    return GpuStatus(True, None, tuple(gpus))


def _read_sample(
    nvml: Any, info: GpuInfo, unsupported: tuple[type[BaseException], ...]
) -> GpuSample:
    """One reading of one device; raises NVMLError if the device itself fails."""
    handle = nvml.nvmlDeviceGetHandleByIndex(info.index)  # cheap; keeps no stale handle around
    memory = _optional(unsupported, nvml.nvmlDeviceGetMemoryInfo, handle)
    rates = _optional(unsupported, nvml.nvmlDeviceGetUtilizationRates, handle)
    milliwatts = _optional(unsupported, nvml.nvmlDeviceGetPowerUsage, handle)
    temperature = _optional(
        unsupported, nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU
    )
    return GpuSample(
        index=info.index,
        name=info.name,
        uuid=info.uuid,
        vram_used_mb=None if memory is None else memory.used / _MIB,
        vram_total_mb=None if memory is None else memory.total / _MIB,
        temperature_c=None if temperature is None else int(temperature),
        utilisation_pct=None if rates is None else int(rates.gpu),
        power_w=None if milliwatts is None else milliwatts / 1000,
        timestamp=time.monotonic(),
    )
