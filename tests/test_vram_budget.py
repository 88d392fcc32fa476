"""The VRAM budget: per device the job can see (matched to NVML by UUID and CUDA's order, not
NVML's index), free memory plus this process's own, the arena's limit, shrunk after running
out of memory, batches that grow back after clean ones, and slower speech in smaller batches.

No GPU is needed: NVML is a stand-in (several cards, hidden ones, another numbering, an arena
holding a past peak) and ORT's session is faked where it meets the driver; the budget, the
executor, the planner and the Piper engine are the real ones.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_batched_jobs import OUT_OF_MEMORY
from test_gpu_executor import STILL, OnGpu, _tasks
from test_gpu_monitor import MIB, FakeNvml
from voices import add_still_voice

from audiopub.gpu import devices
from audiopub.gpu.vram_budget import vram_budget_bytes
from audiopub.jobs import executor
from audiopub.jobs.chunk_work import ChunkTask, planned_batches
from audiopub.jobs.device_executor import DeviceExecutor
from audiopub.settings import from_environ
from audiopub.tts import onnx_runtime
from audiopub.tts.batching import BatchLimits, padded_chars_for_vram
from audiopub.tts.engine import DeviceReport, SynthesisOptions
from audiopub.tts.onnx_runtime import ARENA_SHRINKAGE, CUDA, Session

GIB = 1024 * MIB
TOTAL = 80 * GIB


class Cards(FakeNvml):
    """Several cards, each with its own UUID, PCI bus, compute capability and memory use."""

    def __init__(self, *cards: dict[str, Any]) -> None:
        super().__init__()
        self.cards = list(cards)
        self.device_count = len(cards)

    def nvmlDeviceGetUUID(self, handle: tuple[str, int]) -> str:
        return self.cards[handle[1]]["uuid"]

    def nvmlDeviceGetPciInfo(self, handle: tuple[str, int]) -> SimpleNamespace:
        return SimpleNamespace(busId=self.cards[handle[1]]["bus"].encode())

    def nvmlDeviceGetCudaComputeCapability(self, handle: tuple[str, int]) -> tuple[int, int]:
        return self.cards[handle[1]].get("cc", (9, 0))

    def nvmlDeviceGetMemoryInfo(self, handle: tuple[str, int]) -> SimpleNamespace:
        used = self.cards[handle[1]]["used"]
        return SimpleNamespace(used=used, total=TOTAL, free=TOTAL - used)


def _card(number: int, used: int, **facts: Any) -> dict[str, Any]:
    return {
        "uuid": f"GPU-{number}{number}{number}-0000",
        "bus": f"00000000:{number + 1:02X}:00.0",
        "used": used,
        **facts,
    }


def _holding(nvml: Cards, index: int, mib: float) -> None:
    """This process holds `mib` on NVML device `index` (its arena's last peak)."""
    nvml.processes[index] = [SimpleNamespace(pid=os.getpid(), usedGpuMemory=int(mib * MIB))]


def test_hidden_devices_do_not_shrink_the_budget() -> None:
    nvml = Cards(_card(0, 79 * GIB), _card(1, 10 * GIB), _card(2, 30 * GIB))
    every = vram_budget_bytes(nvml, from_environ({}))
    assert every == {0: 1 * GIB, 1: 70 * GIB, 2: 50 * GIB}
    # CUDA numbers what it is shown from 0: CUDA device 0 is NVML's 2, then NVML's 1.
    assert vram_budget_bytes(nvml, from_environ({"CUDA_VISIBLE_DEVICES": "2,1"})) == {
        0: 50 * GIB,
        1: 70 * GIB,
    }
    assert vram_budget_bytes(nvml, from_environ({"CUDA_VISIBLE_DEVICES": "GPU-111"})) == {
        0: 70 * GIB
    }
    # As CUDA does, the list ends at the first entry that names no device.
    assert vram_budget_bytes(nvml, from_environ({"CUDA_VISIBLE_DEVICES": "1,7,0"})) == {0: 70 * GIB}
    assert vram_budget_bytes(nvml, from_environ({"CUDA_VISIBLE_DEVICES": ""})) == {}


def test_cuda_numbers_the_fastest_first_unless_told_pci_bus_order() -> None:
    nvml = Cards(_card(0, 40 * GIB, cc=(7, 5)), _card(1, 10 * GIB, cc=(9, 0)))
    assert vram_budget_bytes(nvml, from_environ({"CUDA_VISIBLE_DEVICES": "0"})) == {0: 70 * GIB}
    assert vram_budget_bytes(
        nvml, from_environ({"CUDA_VISIBLE_DEVICES": "0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    ) == {0: 40 * GIB}


def test_an_arena_holding_the_last_jobs_peak_counts_as_budget() -> None:
    nvml = Cards(_card(0, 30 * GIB), _card(1, 60 * GIB))
    _holding(nvml, 1, 50 * 1024)  # the cached engine's arena, at the last job's peak
    nvml.processes[0] = [SimpleNamespace(pid=os.getpid() + 1, usedGpuMemory=30 * GIB)]
    assert vram_budget_bytes(nvml, from_environ({})) == {0: 50 * GIB, 1: 20 * GIB + 50 * GIB}
    nvml.init_error = FakeNvml.NVMLError_DriverNotLoaded
    assert vram_budget_bytes(nvml, from_environ({})) == {}  # no driver: no budget, never an error


@pytest.fixture(scope="module")
def voices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("voices")
    add_still_voice(folder, STILL)
    return folder


def test_a_gpu_job_is_sized_by_the_visible_devices_budget(
    voices: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Device 0 is hidden and full; the visible one's arena holds 40 GiB from the last job."""
    nvml = Cards(_card(0, 79 * GIB), _card(1, 60 * GIB))
    _holding(nvml, 1, 40 * 1024)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)  # what `import pynvml` finds
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monkeypatch.setattr(devices, "cuda_device_ids", lambda visible: [0])

    pool = executor.executor_for("piper", OnGpu(0, voices), voice=STILL)

    assert isinstance(pool, DeviceExecutor)
    assert pool.limits == BatchLimits(64, padded_chars_for_vram(60 * GIB, 22_050))


def test_slower_speech_plans_fewer_padded_characters() -> None:
    limits = BatchLimits(64, max_padded_chars=1000)
    texts = [f"A sentence of some length, number {i}." for i in range(40)]
    for speed, bound in ((1.0, 1000), (0.7, 700), (1.5, 1500)):
        tasks = [
            ChunkTask(f"k{i}", text, STILL, SynthesisOptions(speed=speed), Path("x"))
            for i, text in enumerate(texts)
        ]
        batches = list(planned_batches(tasks, lambda: limits))
        padded = [len(batch) * max(len(task.text) for _, task in batch) for batch in batches]
        assert max(padded) <= bound
        assert max(padded) > bound - 2 * max(len(t) for t in texts)  # and not far less


class Squeezed(OnGpu):
    """A device out of memory for batches of more than `fits` chunks while `squeezed`."""

    def __init__(self, voices_dir: Path, fits: int) -> None:
        super().__init__(0, voices_dir)
        self.fits, self.squeezed = fits, True
        self.sizes: list[int] = []

    def speak(self, prepared, voice, options):  # type: ignore[no-untyped-def]
        self.sizes.append(len(prepared))
        if self.squeezed and len(prepared) > self.fits:
            raise RuntimeError(OUT_OF_MEMORY)
        self.squeezed = False  # the other program let go of its memory
        return super().speak(prepared, voice, options)


def test_after_running_out_of_memory_clean_batches_grow_back(tmp_path: Path, voices: Path) -> None:
    engine = Squeezed(voices, fits=1)
    pool = DeviceExecutor([engine], BatchLimits(4), grow_after=2)
    notes: list[str] = []

    results = list(pool.map(_tasks(tmp_path, 40), notes.append))

    assert all(r.error is None for r in results) and len(results) == 40
    assert engine.sizes[:3] == [4, 2, 1]  # halved down to what fitted
    assert max(engine.sizes[3:]) == 4 and pool.limits.max_items == 4  # and back up
    grown = [note for note in notes if "may again be" in note]
    assert [note.split("may again be ")[1] for note in grown] == ["2 chunks", "4 chunks"]


class Arena:
    """ORT's session where it meets the driver: runs fail while a batch does not fit."""

    def __init__(self) -> None:
        self.fits = 1
        self.options: list[Any] = []

    def run(self, outputs: list[str], feeds: dict[str, Any], options: Any = None) -> list[int]:
        self.options.append(options)
        if feeds["batch"] > self.fits:
            raise RuntimeError(OUT_OF_MEMORY)
        return [feeds["batch"]]


def test_a_run_after_running_out_of_memory_shrinks_the_arena() -> None:
    arena = Arena()
    session = Session(arena, DeviceReport(requested_gpu=True, provider=CUDA, device_id=1))  # type: ignore[arg-type]
    assert session.run(["out"], {"batch": 1}) == [1]
    with pytest.raises(RuntimeError, match="Failed to allocate"):
        session.run(["out"], {"batch": 2})
    session.run(["out"], {"batch": 1})
    session.run(["out"], {"batch": 1})

    shrinking = [
        o is not None and o.get_run_config_entry(ARENA_SHRINKAGE) == "gpu:1" for o in arena.options
    ]
    assert shrinking == [False, False, True, False]  # once, on the run after the failure


def test_a_gpu_session_arena_is_limited_to_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []

    class FakeSession:
        def __init__(self, path: str, sess_options: Any, providers: list[Any]) -> None:
            made.append(providers)

        def get_providers(self) -> list[str]:
            return [CUDA, onnx_runtime.CPU]

    from audiopub.tts.piper.files import embedded_voice

    monkeypatch.setattr(onnx_runtime, "available_providers", lambda: [CUDA, onnx_runtime.CPU])
    monkeypatch.setattr(onnx_runtime, "device_budget_bytes", {1: 12 * GIB}.get)
    monkeypatch.setattr(onnx_runtime.ort, "InferenceSession", FakeSession)

    session = onnx_runtime.create_session(embedded_voice().model, use_gpu=True, device_id=1)

    assert session.device.on_gpu and session.device.device_id == 1
    ((name, options), _) = made[0]
    assert name == CUDA and options["device_id"] == "1"
    assert options["gpu_mem_limit"] == str(12 * GIB)
