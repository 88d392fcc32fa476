"""The engine registry: one cached engine per name, model folder, device request and GPU."""

from pathlib import Path
from typing import Any

import pytest

from audiopub.tts import onnx_runtime
from audiopub.tts.registry import engines, get_engine


def test_engines_for_different_gpus_are_different_objects(tmp_path: Path) -> None:
    first = get_engine("piper", use_gpu=True, model_dir=tmp_path, device_id=0)
    second = get_engine("piper", use_gpu=True, model_dir=tmp_path, device_id=1)
    assert first is not second
    assert get_engine("piper", use_gpu=True, model_dir=tmp_path, device_id=1) is second
    assert get_engine("piper", use_gpu=True, model_dir=tmp_path) is first  # device 0 by default


@pytest.mark.usefixtures("cuda_fails_to_load")
def test_the_device_id_reaches_the_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []
    real = onnx_runtime.create_session

    def create_session(*args: Any, **kwargs: Any) -> onnx_runtime.Session:
        asked.append(kwargs["device_id"])
        return real(*args, **kwargs)

    monkeypatch.setattr(onnx_runtime, "create_session", create_session)
    engine = get_engine("piper", use_gpu=True, model_dir=tmp_path, device_id=1)
    assert engine.device.requested_gpu  # the GPU engine's report makes its session
    assert asked == [1]


def test_every_engine_setting_is_its_own_and_documented() -> None:
    """An engine's variables carry its name, say what they do, and are in the docs' table."""
    documented = (Path(__file__).resolve().parents[1] / "docs" / "command-line.md").read_text()
    for engine in engines():
        for setting in engine.settings:
            assert setting.env.startswith(f"AUDIOPUB_{engine.name.upper()}_"), setting.env
            assert setting.description.strip(), setting.env
            assert f"`{setting.env}`" in documented, setting.env
