"""Previews (Preview, Hear it, the Voices page) speak with an engine of their own, loaded
when the app starts: the first one starts at once, and none ever touches a job's engine."""

from __future__ import annotations

import dataclasses
import io
import threading
import time
from pathlib import Path

import pytest
import soundfile as sf
from test_gpu_monitor import FakeNvml

from audiopub import settings
from audiopub.jobs.chunk_work import ChunkTask
from audiopub.jobs.device_executor import DeviceExecutor
from audiopub.tts import onnx_runtime, registry
from audiopub.tts.batching import BatchLimits
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


def test_a_preview_never_asks_for_the_jobs_engine(
    data_dir: Path, fresh_models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def job_engine(*args: object, **kwargs: object) -> None:
        raise AssertionError("a preview asked for the engine jobs speak with")

    services = Services(data_dir, nvml=FakeNvml())
    monkeypatch.setattr(registry, "get_engine", job_engine)
    wav = services.previews.preview(
        "piper", settings.DEFAULT_PIPER_VOICE, 1.0, settings.DEFAULT_STEPS
    )
    assert sf.info(io.BytesIO(wav)).duration > 1.0
    services.previews.check_lexicon((), "piper", settings.DEFAULT_PIPER_VOICE)


def test_the_preview_voice_is_loaded_when_the_app_starts(
    data_dir: Path, fresh_models: Path
) -> None:
    services = Services(data_dir, nvml=FakeNvml())
    services.start()
    try:
        assert services.previews.warm.wait(120)
        (result,) = registry.get_preview_engine("piper").synthesize(
            ["Hello there."], settings.DEFAULT_PIPER_VOICE, SynthesisOptions()
        )
        assert "load" not in result.stage_seconds  # the model was loaded before anyone asked
    finally:
        services.stop()


def test_stopping_waits_for_the_warm_up_to_leave_onnx_runtime(
    data_dir: Path, fresh_models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that exits while a thread is inside an ORT run aborts (C++'s terminate): an
    app stopped just after it started must not leave its warm-up speaking."""
    preview = registry.get_preview_engine("piper")
    speaking, spoken = threading.Event(), threading.Event()
    real_synthesize = preview.synthesize

    def slow_synthesize(*args: object) -> object:
        speaking.set()
        time.sleep(0.5)  # a slow disk's voice, still loading when the app is stopped
        result = real_synthesize(*args)  # type: ignore[arg-type]
        spoken.set()
        return result

    monkeypatch.setattr(preview, "synthesize", slow_synthesize)
    services = Services(data_dir, nvml=FakeNvml())
    services.start()
    assert speaking.wait(120)
    services.stop()
    assert spoken.is_set()
    assert not any(thread.name == "audiopub-preview-warmup" for thread in threading.enumerate())


class _Recorder:
    """A job's ORT session, as it meets the driver: each run is recorded with its thread."""

    def __init__(self, inference: object) -> None:
        self._inference = inference
        self.threads: list[str] = []

    def run(self, *args: object) -> object:
        self.threads.append(threading.current_thread().name)
        return self._inference.run(*args)  # type: ignore[attr-defined]


def test_a_preview_during_a_gpu_job_leaves_the_jobs_session_alone(
    data_dir: Path, fresh_models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job speaks on the engine jobs use (here a GPU request, which this machine answers on
    the CPU); a "Hear it" in the middle of its first batch runs no run of the job's session,
    and the job's voice is the only one that engine loaded."""
    voice = settings.DEFAULT_PIPER_VOICE
    job_engine = registry.get_engine("piper", use_gpu=True)
    loaded = job_engine._voice(voice)  # type: ignore[attr-defined]
    recorder = _Recorder(loaded.load().inference)
    loaded._session = dataclasses.replace(loaded.session, inference=recorder)
    speaking, previewed = threading.Event(), threading.Event()
    real_speak = job_engine.speak

    def speak(prepared, voice, options):  # type: ignore[no-untyped-def]
        speaking.set()
        assert previewed.wait(120)
        return real_speak(prepared, voice, options)

    monkeypatch.setattr(job_engine, "speak", speak)
    tasks = [
        ChunkTask(
            f"k{i}",
            f"Line number {i} of the job.",
            voice,
            SynthesisOptions(),
            tmp_path / f"k{i}.flac",
        )
        for i in range(4)
    ]
    results: list[object] = []
    job = threading.Thread(
        target=lambda: results.extend(DeviceExecutor([job_engine], BatchLimits(2)).map(tasks))
    )
    job.start()
    try:
        assert speaking.wait(120)
        runs_before = len(recorder.threads)
        wav = Services(data_dir, nvml=FakeNvml()).previews.preview(
            "piper", voice, 1.0, settings.DEFAULT_STEPS
        )
        assert sf.info(io.BytesIO(wav)).duration > 1.0
        assert len(recorder.threads) == runs_before  # the preview ran elsewhere
    finally:
        previewed.set()
        job.join(120)
    assert len(results) == 4
    assert recorder.threads and all(name.startswith("audiopub-device") for name in recorder.threads)


def test_a_gpu_job_loads_only_its_own_voice_to_learn_where_it_runs(
    fresh_models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asking where the job's engine runs loads the job's voice, not the default one too."""
    from voices import add_still_voice

    from audiopub.jobs.executor import executor_for

    add_still_voice(fresh_models / "piper", "en_US-still-medium")
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "1")  # in this process, where it can be seen
    engine = registry.get_engine("piper", use_gpu=True)

    executor_for("piper", engine, voice="en_US-still-medium")

    assert engine._voice("en_US-still-medium").has_session  # type: ignore[attr-defined]
    assert not engine._voice(settings.DEFAULT_PIPER_VOICE).has_session  # type: ignore[attr-defined]
