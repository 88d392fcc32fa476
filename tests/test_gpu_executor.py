"""Several GPUs, one queue: an engine per device, batches bounded by the free VRAM.

No GPU is needed: engines that report a CUDA device (what ORT would say) run on the CPU, and
NVML is the stand-in from test_gpu_monitor; the executor and planner are the real ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_gpu_monitor import MIB, FakeNvml
from voices import add_still_voice

from audiopub.gpu import devices, vram_budget
from audiopub.jobs import executor
from audiopub.jobs.chunk_work import ChunkTask
from audiopub.jobs.device_executor import DeviceExecutor
from audiopub.tts.batching import BatchLimits, padded_chars_for_vram
from audiopub.tts.engine import DeviceReport, SynthesisOptions
from audiopub.tts.onnx_runtime import CUDA
from audiopub.tts.piper.engine import PiperEngine

STILL = "en_US-still-medium"


class OnGpu(PiperEngine):
    """A Piper engine that reports CUDA device `device_id`, as ORT would on a GPU machine."""

    def __init__(self, device_id: int, voices_dir: Path) -> None:
        super().__init__(threads=1, voices_dir=voices_dir)
        self._report = DeviceReport(requested_gpu=True, provider=CUDA, device_id=device_id)

    @property
    def device(self) -> DeviceReport:
        return self._report

    def device_for(self, voice: str) -> DeviceReport:
        return self._report


@pytest.fixture(scope="module")
def voices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("voices")
    add_still_voice(folder, STILL)
    return folder


def _tasks(folder: Path, count: int) -> list[ChunkTask]:
    words = ["one", "two", "three", "four", "five", "six", "seven", "eight"]
    return [
        ChunkTask(
            f"k{i:02d}",
            f"Chapter {words[i % 8]}, line {words[i // 8]}.",
            STILL,
            SynthesisOptions(),
            folder / f"k{i:02d}.flac",
        )
        for i in range(count)
    ]


def test_every_device_speaks_from_the_same_queue(tmp_path: Path, voices: Path) -> None:
    probes = iter(range(1, 1000))
    gpus = [OnGpu(0, voices), OnGpu(1, voices)]
    pool = DeviceExecutor(
        gpus, BatchLimits(2), vram_probe=lambda: {0: 100.0 + next(probes), 1: 50.0}
    )
    tasks = _tasks(tmp_path, 16)

    results = list(pool.map(tasks))

    assert [r.key for r in results] == [t.key for t in tasks]  # reading order, whoever spoke
    assert all(
        r.error is None and r.frames > 0 and t.out_path.is_file()
        for r, t in zip(results, tasks, strict=True)
    )
    assert set(pool.device_chunks) == {"GPU (CUDA)", "GPU 1 (CUDA)"}
    assert sum(pool.device_chunks.values()) == 16
    assert pool.batch_sizes == {2: 8}
    assert pool.peak_vram_mb[1] == 50.0 and pool.peak_vram_mb[0] > 100.0


def test_a_gpu_job_gets_one_engine_per_device_and_a_vram_budget(
    voices: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(devices, "cuda_device_ids", lambda visible: [0, 1])
    monkeypatch.setattr(vram_budget, "vram_budget_bytes", lambda: {0: 8 << 30, 1: 2 << 30})
    made: list[int] = []

    def get_engine(name: str, use_gpu: bool, device_id: int) -> OnGpu:
        assert (name, use_gpu) == ("piper", True)
        made.append(device_id)
        return OnGpu(device_id, voices)

    monkeypatch.setattr(executor, "get_engine", get_engine)
    first = OnGpu(0, voices)

    pool = executor.executor_for("piper", first, voice=STILL)
    assert isinstance(pool, DeviceExecutor)
    assert made == [1] and pool.engines[0] is first
    # Sized by the device with the smallest budget, at the voice's 22.05 kHz.
    assert pool.limits == BatchLimits(64, padded_chars_for_vram(2 << 30, 22_050))

    forced = executor.executor_for("piper", first, batch_size=16, voice=STILL)
    assert isinstance(forced, DeviceExecutor)
    assert forced.limits == BatchLimits(16)  # as asked; only an out-of-memory error halves it


def test_cuda_device_ids_follow_cuda_visible_devices() -> None:
    nvml = FakeNvml()
    nvml.device_count = 3
    assert devices.cuda_device_ids(None, nvml) == [0, 1, 2]
    assert devices.cuda_device_ids("2,0", nvml) == [0, 1]  # CUDA renumbers what it is shown
    assert devices.cuda_device_ids("", nvml) == [0]  # a session then says why it fell back


def test_free_vram_is_read_per_device_and_never_raises() -> None:
    nvml = FakeNvml()
    nvml.device_count = 2
    nvml.used_mb = 4096
    assert devices.free_vram_bytes(nvml) == {0: (24564 - 4096) * MIB, 1: (24564 - 4096) * MIB}
    nvml.init_error = FakeNvml.NVMLError_DriverNotLoaded
    assert devices.free_vram_bytes(nvml) == {}
