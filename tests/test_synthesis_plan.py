"""One plan per job run: voice, sample rate, speed, devices and batch limits, decided once."""

from __future__ import annotations

from pathlib import Path

import pytest
from voices import add_voice_with_rate

from audiopub.errors import EngineUnavailable
from audiopub.jobs import executor, synthesis_plan
from audiopub.jobs.chunk_cache import chunk_path
from audiopub.jobs.device_executor import DeviceExecutor
from audiopub.jobs.models import ChunkRow, ChunkState, JobSettings
from audiopub.jobs.synthesis_plan import plan_synthesis
from audiopub.tts.batching import BatchLimits
from audiopub.tts.piper.engine import PiperEngine

SLOW = "en_US-slow-low"


@pytest.fixture
def engine(tmp_path: Path) -> PiperEngine:
    add_voice_with_rate(tmp_path / "voices", SLOW, 16_000)
    return PiperEngine(threads=1, voices_dir=tmp_path / "voices")


def test_an_injected_engine_is_planned_in_this_process(engine: PiperEngine) -> None:
    plan = plan_synthesis(JobSettings(voice=SLOW, speed=0.8, batch_size=3), engine)

    assert plan.engine is engine
    assert plan.sample_rate == 16_000  # the voice's own, not the engine's usual 22.05 kHz
    assert plan.speed == 0.8 and plan.options.speed == 0.8
    assert isinstance(plan.executor, DeviceExecutor) and plan.executor.engines == [engine]
    assert plan.limits == BatchLimits(3)
    assert plan.info.devices == ("CPU",)
    assert plan.describe() == (f"{SLOW} at 16000 Hz, speed 0.8, on CPU, batches of up to 3 chunks")


def test_the_registry_engine_and_the_factory_executor_are_asked_once(
    engine: PiperEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, ...]] = []

    def get_engine(name: str, use_gpu: bool) -> PiperEngine:
        asked.append(("engine", name, str(use_gpu)))
        return engine

    def executor_for(
        name: str, loaded: PiperEngine, batch_size: int | None, voice: str | None
    ) -> DeviceExecutor:
        asked.append(("executor", name, str(batch_size), str(voice)))
        return executor.in_process_executor(loaded, batch_size)

    monkeypatch.setattr(synthesis_plan, "get_engine", get_engine)
    monkeypatch.setattr(synthesis_plan, "executor_for", executor_for)

    plan = plan_synthesis(JobSettings(engine="piper", voice=SLOW, use_gpu=True, batch_size=2))

    assert asked == [("engine", "piper", "True"), ("executor", "piper", "2", SLOW)]
    assert plan.sample_rate == 16_000 and plan.limits == BatchLimits(2)


def test_an_unknown_voice_starts_no_executor(
    engine: PiperEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(synthesis_plan, "get_engine", lambda name, use_gpu: engine)
    monkeypatch.setattr(synthesis_plan, "executor_for", lambda *args: pytest.fail("started"))

    with pytest.raises(EngineUnavailable, match="Unknown piper voice 'nobody'"):
        plan_synthesis(JobSettings(voice="nobody"))


def test_the_factory_handed_in_makes_the_executor(
    engine: PiperEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever runs jobs hands in the factory of their executors (a Ray cluster's): it makes
    the job's executor, not this machine's `executor_for`."""
    made: list[tuple[str, int | None, str | None]] = []

    def elsewhere(
        name: str, loaded: PiperEngine, batch_size: int | None = None, voice: str | None = None
    ) -> DeviceExecutor:
        made.append((name, batch_size, voice))
        return executor.in_process_executor(loaded, batch_size)

    monkeypatch.setattr(synthesis_plan, "get_engine", lambda name, use_gpu: engine)
    monkeypatch.setattr(synthesis_plan, "executor_for", lambda *args: pytest.fail("here"))

    plan = plan_synthesis(
        JobSettings(engine="piper", voice=SLOW, batch_size=2), executors=elsewhere
    )

    assert made == [("piper", 2, SLOW)] and plan.limits == BatchLimits(2)


def test_a_chunk_is_spoken_in_its_own_voice_else_the_narrators(
    engine: PiperEngine, tmp_path: Path
) -> None:
    plan = plan_synthesis(JobSettings(voice=SLOW, speed=0.8), engine)

    def chunk(voice: str) -> ChunkRow:
        return ChunkRow(
            "job", 0, 0, "Call me Ishmael.", False, "k" + voice, ChunkState.PENDING,
            None, None, None, None, None, 0, None, spoken="Call me Ishmael.", voice=voice,
        )  # fmt: skip

    narrated, voiced = plan.task(chunk(""), tmp_path), plan.task(chunk("other"), tmp_path)

    assert narrated.voice == SLOW and voiced.voice == "other"
    assert narrated.text == "Call me Ishmael." and narrated.options == plan.options
    assert voiced.out_path == chunk_path(tmp_path, "kother")
