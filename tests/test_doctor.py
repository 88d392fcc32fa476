"""`audiopub doctor`: a report folder per device, the GPU against the CPU, one table of them all.

The CPU path runs for real on a tiny text. The GPU path runs with fakes at the boundary only:
NVML is test_gpu_monitor's fake RTX 4090 (put where `import pynvml` finds it), and ORT's session
class claims CUDA while the CPU does the work; the executors, the measurement and the report
are the real ones.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnxruntime as ort
import pytest
from test_gpu_monitor import FakeNvml

from audiopub.bench.doctor import device_folder
from audiopub.cli import main
from audiopub.tts import onnx_runtime, registry

# Two sentences: the GPU's padded batches still hold rows of different lengths, and each of the
# run's six timed syntheses (GPU, CPU, four CUDA settings) speaks 90 characters, not 176.
TINY = ["--chars", "60", "--runs", "1", "--warmup", "0"]


class _ClaimsCuda(ort.InferenceSession):
    """Asked for CUDA, names CUDA first, runs on the CPU: what Audiopub sees on a GPU machine."""

    def __init__(
        self, path: Any, sess_options: Any = None, providers: Any = None, **kwargs: Any
    ) -> None:
        self.cuda = any(isinstance(p, tuple) and p[0] == onnx_runtime.CUDA for p in providers)
        super().__init__(path, sess_options, providers=[onnx_runtime.CPU], **kwargs)

    def get_providers(self) -> list[str]:
        return [onnx_runtime.CUDA, onnx_runtime.CPU] if self.cuda else [onnx_runtime.CPU]


@pytest.fixture(scope="module")
def engines() -> dict[Any, Any]:
    """The engine registry's cache for this module's doctor runs."""
    return {}


def _fake_nvml(patch: pytest.MonkeyPatch, engines: dict[Any, Any]) -> FakeNvml:
    fake = FakeNvml()
    patch.setitem(sys.modules, "pynvml", fake)
    patch.setenv("AUDIOPUB_CPU_WORKERS", "1")  # the CPU side in this process: no pool
    # Engines made here are nobody else's (some claim CUDA); within the module, one models
    # folder keys one Piper engine on the CPU for every run (~4 s of CPU per session made).
    patch.setattr(registry, "_cache", engines)
    return fake


@pytest.fixture
def nvml(
    monkeypatch: pytest.MonkeyPatch,
    engines: dict[Any, Any],
    embedded_voice_loaded_once: None,
    shared_model_cache: None,
) -> FakeNvml:
    return _fake_nvml(monkeypatch, engines)


@dataclass(frozen=True)
class DoctorRun:
    folder: Path  # the device folder it wrote
    out: str
    err: str


@pytest.fixture(scope="module")
def without_a_gpu(
    tmp_path_factory: pytest.TempPathFactory,
    engines: dict[Any, Any],
    shared_models_dir: Path,
    run_model_cache: Path,
) -> DoctorRun:
    """`audiopub doctor` run once here with NVML finding no driver, from its own folder with
    `--output reports`: the no-GPU test reads it, and the GPU test puts its folder beside its
    own as a second machine's (a doctor run of its own took ~7 s of CPU more)."""
    cwd = tmp_path_factory.mktemp("without-a-gpu")
    data = cwd / "audiopub-data"  # as the `data_dir` and `shared_model_cache` fixtures make it
    data.mkdir()
    (data / "model-cache").symlink_to(run_model_cache, target_is_directory=True)
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        _fake_nvml(patch, engines).init_error = FakeNvml.NVMLError_DriverNotLoaded
        patch.setenv("AUDIOPUB_DATA_DIR", str(data))
        patch.setenv("AUDIOPUB_MODELS_DIR", str(shared_models_dir))
        patch.chdir(cwd)
        argv = ["doctor", "--chars", "150", "--runs", "2", "--warmup", "1", "--output", "reports"]
        with redirect_stdout(out), redirect_stderr(err):
            code = main(argv)
    assert code == 0, err.getvalue()
    (folder,) = (cwd / "reports").iterdir()
    return DoctorRun(folder, out.getvalue(), err.getvalue())


def _doctor(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["doctor", *argv]) == 0
    return capsys.readouterr().out


def _folder(path: Path) -> tuple[dict[str, Any], dict[str, Any], str]:
    return (
        json.loads((path / "gpu_info.json").read_text("utf-8")),
        json.loads((path / "benchmark_summary.json").read_text("utf-8")),
        (path / "report.md").read_text("utf-8"),
    )


def test_without_a_gpu_it_says_so_and_measures_the_cpu(without_a_gpu: DoctorRun) -> None:
    folder, out, err = without_a_gpu.folder, without_a_gpu.out, without_a_gpu.err
    # Each measurement says what it is before it starts, n of N; the folder by its full path.
    assert f"doctor: the report goes to {folder}/" in err
    steps = [line for line in err.splitlines() if line.startswith("doctor: [")]
    assert steps == [
        "doctor: [1/4] warm-up run 1 of 1, CPU",
        "doctor: [2/4] timed run 1 of 2, CPU",
        "doctor: [3/4] timed run 2 of 2, CPU",
        "doctor: [4/4] node placement, CPU",
    ]
    assert folder.name.startswith("cpu-")
    info, summary, report = _folder(folder)
    assert info["gpu"]["available"] is False and info["gpu"]["devices"] == []
    assert info["onnxruntime"] == ort.__version__ and "CPUExecutionProvider" in info["providers"]
    assert set(info["cuda_libraries"]) == {"cudart", "cublas", "cublasLt", "cufft", "cudnn"}
    assert summary["gpu"] is None and summary["gpu_over_cpu"] is None
    assert "NVIDIA driver" in summary["no_gpu"] or "NVML" in summary["no_gpu"]
    cpu = summary["cpu"]
    assert cpu["device"] == "CPU" and cpu["chars_per_s"]["median"] > 0
    assert cpu["node_placement"]["CPUExecutionProvider"] > 100
    assert summary["chars"] >= 150 and summary["chunks"] >= 1
    assert f"**{summary['no_gpu']}.** Only the CPU was measured." in report
    assert report in out and f"Wrote {folder}/" in out and folder.is_absolute()


def test_on_a_gpu_it_times_both_interleaved_and_reports_compare_in_one_table(
    nvml: FakeNvml,
    without_a_gpu: DoctorRun,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(
        onnx_runtime, "available_providers", lambda: [onnx_runtime.CUDA, onnx_runtime.CPU]
    )
    monkeypatch.setattr(onnx_runtime.ort, "InferenceSession", _ClaimsCuda)
    reports = tmp_path / "reports"
    assert main(["doctor", *TINY, "--output", str(reports), "--label", "rig"]) == 0
    out, err = capsys.readouterr()
    steps = [line for line in err.splitlines() if line.startswith("doctor: [")]
    # GPU and CPU a timed run each and their node placement, then each CUDA setting loaded
    # (with its node placement) and timed.
    assert steps[:4] == [
        "doctor: [1/12] timed run 1 of 1, GPU",
        "doctor: [2/12] timed run 1 of 1, CPU",
        "doctor: [3/12] node placement, GPU",
        "doctor: [4/12] node placement, CPU",
    ]
    # The settings in force are the default: the GPU's engine placed above is that one's.
    assert steps[4] == "doctor: [5/12] reusing the engine with default, its node placement"
    assert steps[5] == "doctor: [6/12] loading the engine with max_workspace, its node placement"
    assert steps[-1] == "doctor: [12/12] timed run 1 of 1, fp16_decoder" and len(steps) == 12

    folder = reports / "NVIDIA-GeForce-RTX-4090"
    info, summary, report = _folder(folder)
    assert info["gpu"]["available"] and info["gpu"]["devices"][0]["vram_total_mb"] == 24564
    assert summary["no_gpu"] is None and summary["label"] == "rig"
    gpu, cpu = summary["gpu"], summary["cpu"]
    assert gpu["device"] == "GPU (CUDA)" and gpu["provider"] == onnx_runtime.CUDA
    assert cpu["device"] == "CPU" and cpu["provider"] == onnx_runtime.CPU
    assert gpu["batches"] and gpu["chars_per_s"]["median"] > 0
    assert gpu["device_peak_vram_mb"] == {"0": 1024.0}  # what NVML said the card held
    assert summary["gpu_over_cpu"] == round(
        gpu["chars_per_s"]["median"] / cpu["chars_per_s"]["median"], 2
    )
    # What really ran were CPU kernels; on a real card this line shows the CUDA share.
    assert set(gpu["node_placement"]) == {onnx_runtime.CPU}
    assert f"- GPU ÷ CPU: {summary['gpu_over_cpu']}×" in report
    assert "| GPU | GPU (CUDA) |" in report and "| CPU | CPU |" in report
    assert "NVIDIA GeForce RTX 4090 (driver" in report and report in out
    # Each optional CUDA setting against none, on the GPU: the half-precision decoder ran (the
    # CPU runs float16 too) and its audio differs by rounding; the cuDNN settings not at all.
    compared = {cell["tuning"]: cell for cell in summary["cuda_settings"]}
    assert list(compared) == ["default", "max_workspace", "pad_nc1d", "fp16_decoder"]
    assert all(cell["device"] == "GPU (CUDA)" for cell in compared.values())
    assert [compared[name]["difference"] for name in ("max_workspace", "pad_nc1d")] == [0, 0]
    assert 0 < compared["fp16_decoder"]["difference"] < 1e-3
    assert "### Optional CUDA settings, interleaved on the same text" in report
    assert re.search(r"\| fp16_decoder \| GPU \(CUDA\) \| .* \| -\d\d dB \|", report)

    # A second machine's folder beside it (here: this one without its GPU): one table.
    shutil.copytree(without_a_gpu.folder, reports / without_a_gpu.folder.name)
    table = _doctor(["--report", str(reports)], capsys)
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 3  # the header and one row per device folder
    assert rows[1].startswith("| NVIDIA-GeForce-RTX-4090 | NVIDIA GeForce RTX 4090 |")
    assert rows[2].startswith("| cpu-") and "| none |" in rows[2]


def test_a_report_of_an_empty_folder_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "--report", str(tmp_path)]) == 1
    assert "no doctor reports in" in capsys.readouterr().err


def test_device_folders_are_named_for_any_file_system() -> None:
    assert device_folder([{"name": "NVIDIA H100 80GB HBM3"}], "x") == "NVIDIA-H100-80GB-HBM3"
    assert device_folder([], "Intel(R) Core(TM) i7-8550U CPU @ 1.80GHz") == (
        "cpu-Intel-R-Core-TM-i7-8550U-CPU-1.80GHz"
    )


def test_kokoro_times_its_other_runtime_in_turn_with_onnx_runtime(
    nvml: FakeNvml,
    kokoro_torch_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    pytest.importorskip("torch", reason="scripts/test.sh installs torch==2.13.0")
    # PyTorch on one thread (conftest): on a busy two-core machine a second one mostly spins.
    request.getfixturevalue("torch_on_one_thread")
    nvml.init_error = FakeNvml.NVMLError_DriverNotLoaded
    # The worker's Kokoro folder, whose PyTorch weights the torch modules make once (~3 s).
    monkeypatch.setenv("AUDIOPUB_KOKORO_DIR", str(kokoro_torch_folder))
    monkeypatch.chdir(tmp_path)
    argv = ["--engine", "kokoro", "--voice", "jf_alpha", "--chars", "20"]
    out = _doctor([*argv, "--runs", "1", "--warmup", "0", "--output", "reports"], capsys)

    (folder,) = (tmp_path / "reports").iterdir()
    info, summary, report = _folder(folder)
    # No GPU: PyTorch takes its turns on the CPU, between ONNX Runtime's.
    torch_side = summary["runtimes"]["torch"]
    assert summary["runtime"] == "onnx" and torch_side["placed"] == "cpu"
    assert torch_side["chars_per_s"]["median"] > 0 and torch_side["over_cpu"] > 0
    assert summary["cpu"]["chars_per_s"]["median"] > 0
    assert torch_side["node_placement"] == {}  # no ONNX graph of its own
    assert re.search(r"\| CPU, torch \| .+ \| [\d,]+ \(", report)
    assert f"- torch on the CPU ÷ CPU: {torch_side['over_cpu']}×" in report
    assert report in out

    # ONNX Runtime first, and only runtimes the engine has.
    for wrong in (["--runtime", "torch"], ["--runtime", "onnx,tensorflow"]):
        assert main(["doctor", *argv, *wrong]) == 2
        assert "onnx,torch, onnx first" in capsys.readouterr().err
    assert main(["doctor", "--runtime", "onnx,torch"]) == 2  # Piper has one
