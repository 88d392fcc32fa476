"""Previews (Preview, Hear it, the Voices page) speak with an engine of their own, loaded
when the app starts: the first one starts at once, and none ever touches a job's engine."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import soundfile as sf
from test_gpu_monitor import FakeNvml

from audiopub import settings
from audiopub.tts import onnx_runtime, registry
from audiopub.tts.engine import SynthesisOptions
from audiopub.ui.services import Services


@pytest.fixture
def fresh_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A models folder no engine was loaded from yet in this process."""
    folder = tmp_path / "models"
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(folder))
    return folder


def test_previews_never_share_a_jobs_engine(fresh_models: Path) -> None:
    preview = registry.get_preview_engine("piper")
    assert preview is registry.get_preview_engine("piper")  # loaded once
    assert preview is not registry.get_engine("piper")
    assert preview is not registry.get_engine("piper", use_gpu=True)
    assert preview.device.provider == onnx_runtime.CPU  # the GPU stays the job's


def test_a_preview_never_asks_for_the_jobs_engine(data_dir: Path, fresh_models: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def job_engine(*args: object, **kwargs: object) -> None:
        raise AssertionError("a preview asked for the engine jobs speak with")

    services = Services(data_dir, nvml=FakeNvml())
    monkeypatch.setattr(registry, "get_engine", job_engine)
    wav = services.preview("piper", settings.DEFAULT_PIPER_VOICE, 1.0, settings.DEFAULT_STEPS)
    assert sf.info(io.BytesIO(wav)).duration > 1.0
    services.check_lexicon((), "piper", settings.DEFAULT_PIPER_VOICE)


def test_the_preview_voice_is_loaded_when_the_app_starts(data_dir: Path,
                                                        fresh_models: Path) -> None:
    services = Services(data_dir, nvml=FakeNvml())
    services.start()
    try:
        assert services.previews_warm.wait(120)
        (result,) = registry.get_preview_engine("piper").synthesize(
            ["Hello there."], settings.DEFAULT_PIPER_VOICE, SynthesisOptions())
        assert "load" not in result.stage_seconds  # the model was loaded before anyone asked
    finally:
        services.stop()
