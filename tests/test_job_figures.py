"""What a job's figures measure: the engine's start-up is a stage of its own and in no speed;
the first estimate of the time left comes from the machine's recorded speed; a second job of
the same voice in the same worker finds its engine processes warm."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import psutil
import pytest
from epub_factory import build_epub

from audiopub import settings
from audiopub.bench import saved
from audiopub.bench.machine import device_facts
from audiopub.bench.results import BenchResult, EngineFacts, RunSettings, SynthesisCell, Timing
from audiopub.book.epub.reader import read_epub
from audiopub.figures import ENGINE_START
from audiopub.jobs import executor, pipeline, recorded_speed, report
from audiopub.jobs.events import EventBus, JobEvent
from audiopub.jobs.models import JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.worker import Worker, execute_job
from audiopub.tts.engine import Engine
from audiopub.tts.piper import engine as piper
from audiopub.tts.registry import get_engine, load_engine
from audiopub.ui import jobview

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")

ROOT = Path(__file__).resolve().parent.parent
VOICE = settings.DEFAULT_PIPER_VOICE
LOADING_S = 60.0  # what loading the voice takes on the pipeline's clock in the first test


@pytest.fixture
def store(data_dir: Path) -> JobStore:
    with JobStore.open_default() as opened:
        yield opened


def _book(path: Path, words: str = "rain") -> Path:
    return build_epub(
        path,
        [
            (
                "One",
                [
                    f"The {words} had stopped by the time the train reached the coast.",
                    f"She counted the {words} as they passed.",
                ],
            ),
            ("Two", [f"Nobody on the platform expected any {words} at all."]),
        ],
        title=f"A Book of {words}",
    )


def _run(store: JobStore, engine: Engine, epub: Path) -> tuple[str, list[JobEvent]]:
    job = submit_job(store, epub, read_epub(epub), epub.with_suffix(".m4b"), JobSettings(), engine)
    store.queue.set_state(job.id, JobState.RUNNING)
    events: list[JobEvent] = []
    assert execute_job(store, job.id, events.append, engine) is JobState.DONE
    return job.id, events


def test_the_engine_start_up_is_a_stage_of_its_own_and_in_no_speed(
    store: JobStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading the voice (a minute here, on the pipeline's clock, which the real load moves
    on) is the job's "engine start-up": the CLI summary and the card say how long it took,
    and the speeds of speaking, on the wall clock and on engine time, leave it out."""
    epub = _book(tmp_path / "b.epub")
    job_id = submit_job(
        store, epub, read_epub(epub), tmp_path / "b.m4b", JobSettings(), get_engine("piper")
    ).id
    store.queue.set_state(job_id, JobState.RUNNING)
    offset = [0.0]
    monkeypatch.setattr(
        pipeline,
        "time",
        SimpleNamespace(perf_counter=lambda: time.perf_counter() + offset[0], time=time.time),
    )
    real_load = piper._LoadedVoice.load

    def slow_load(voice: piper._LoadedVoice) -> object:
        if not voice.has_session:
            offset[0] += LOADING_S
        return real_load(voice)

    monkeypatch.setattr(piper._LoadedVoice, "load", slow_load)
    events: list[JobEvent] = []
    # An engine of its own, with no voice loaded yet, as a job's engine process starts.
    assert execute_job(store, job_id, events.append, load_engine("piper")) is JobState.DONE
    assert offset[0] == LOADING_S  # loaded once

    job, progress = store.queue.get_job(job_id), store.ledger.progress(job_id)
    assert job.stage_times[ENGINE_START] >= LOADING_S
    assert 0 < progress.wall_s < LOADING_S  # the job's speed: speaking only
    assert all(e.run.seconds < LOADING_S for e in events if e.run is not None)  # live, too
    for chapter in store.ledger.chapters(job_id):  # engine time: no chunk waited for the load
        assert "engine.load" not in chapter.stage_times
        assert chapter.synth_s is not None and chapter.synth_s < LOADING_S

    summary = report.run_summary(store, job, 70.0, 0.0)
    (startup,) = [line.strip() for line in summary if line.strip().startswith(ENGINE_START)]
    assert float(startup.split(": ")[1].split(" s ")[0]) >= LOADING_S
    assert startup.endswith(
        "(before the first chunk: in this run's time, not in any speed of speaking)"
    )
    (speaking,) = [line.strip() for line in summary if line.strip().startswith("speaking: ")]
    assert float(speaking.split(" in ")[1].split(" s ")[0]) < LOADING_S
    assert speaking.endswith("(wall clock, speaking only)")

    metrics = jobview.metrics(job, progress, None, time.time())
    assert metrics.startup_s == job.stage_times[ENGINE_START]
    assert metrics.speed.seconds < LOADING_S
    chapter = store.ledger.chapters(job_id)[0]
    assert "(engine time: each engine process's seconds added up)" in jobview.chapter_figures(
        chapter.chars_per_s, chapter.rtf, chapter.stage_times
    )


def _bench_result(
    engine: Engine, voice: str, chars: int, seconds: float, requested_gpu: bool = False
) -> dict:
    """A result as `audiopub bench` writes it, with one table cell at `chars / seconds`."""
    cell = SynthesisCell.of(None, "long", chars, 4, [Timing(seconds, chars / 15.0)])
    result = BenchResult(
        created="2026-11-27T10:00:00+00:00",
        label="here",
        audiopub_version="test",
        command=["bench"],
        engine=EngineFacts("piper", voice, "piper:joe", 22050, False, 200, 1),
        device=device_facts(engine, requested_gpu, None, 1),
        settings=RunSettings(1, 0, None, ["long"], 1.0, 0, False),
        synthesis=[cell],
    )
    data = result.to_dict()
    schema = jsonschema.Draft202012Validator(
        __import__("json").loads((ROOT / "audiopub" / "bench" / "schema.json").read_text())
    )
    assert not list(schema.iter_errors(data))
    return data


def test_the_first_estimate_comes_from_the_machines_recorded_speed(
    store: JobStore, tmp_path: Path
) -> None:
    engine = get_engine("piper")
    # Before any benchmark: nothing to go by until the first chunk is spoken.
    _, events = _run(store, engine, _book(tmp_path / "a.epub", "rain"))
    first = next(e for e in events if e.chars_total)
    assert first.chars_done == 0 and first.eta_s is None

    saved.save(_bench_result(engine, VOICE, 500, 10.0))  # 50 chars/s
    saved.save(_bench_result(engine, VOICE, 500, 1.0, requested_gpu=True))  # not this device
    saved.save(_bench_result(engine, "en_US-other-medium", 500, 1.0))  # nor this voice
    assert recorded_speed.machine_speed("piper", VOICE, on_gpu=False) == pytest.approx(50.0)

    _, events = _run(store, engine, _book(tmp_path / "b.epub", "snow"))
    first = next(e for e in events if e.chars_total)  # before any chunk is spoken
    assert first.stage == pipeline.STARTING_ENGINE and first.run.chars == 0
    # (The chapter titles' audio, "One" and "Two", is the first book's: done already.)
    assert first.eta_s == pytest.approx((first.chars_total - first.chars_done) / 50.0)
    # Once chunks are spoken, the run's own speed counts too: the estimate moves from there.
    spoken = [
        e for e in events if e.run is not None and e.run.chars and e.chars_done < e.chars_total
    ]
    assert spoken and all(
        e.eta_s != pytest.approx((e.chars_total - e.chars_done) / 50.0) for e in spoken
    )


def _engine_processes() -> set[int]:
    """This process's engine processes (the spawned pool workers, not the resource tracker)."""
    return {
        child.pid
        for child in psutil.Process().children()
        if "spawn_main" in " ".join(child.cmdline())
    }


@pytest.mark.engine_processes
def test_a_second_job_of_the_same_voice_finds_its_engine_processes_warm(
    store: JobStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the web app's worker the engine processes of a job stay for the next one, with its
    voice loaded: the second job loads no engine anywhere."""
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "2")
    engine = get_engine("piper")
    jobs = [
        submit_job(store, epub, read_epub(epub), epub.with_suffix(".m4b"), JobSettings(), engine)
        for epub in (_book(tmp_path / "a.epub", "rain"), _book(tmp_path / "b.epub", "snow"))
    ]
    bus = EventBus()
    inbox = bus.subscribe()
    worker = Worker(store, bus)
    seen: list[set[int]] = []
    worker.start()
    try:
        for job in jobs:
            while (
                not (event := inbox.get(timeout=300)).job_id == job.id
                or event.state is JobState.RUNNING
            ):
                pass
            assert event.state is JobState.DONE, event.message
            seen.append(_engine_processes())
            # The engine processes loaded the voice before the first chunk, as a stage of its
            # own: no chunk's time holds the loading.
            assert store.queue.get_job(job.id).stage_times[ENGINE_START] > 0
            assert not any(
                "engine.load" in chapter.stage_times for chapter in store.ledger.chapters(job.id)
            )
        (pool,) = executor.warm_pools()
        # Each engine process: how many engines it ever loaded.
        loads = pool.start(VOICE)
    finally:
        worker.stop()
    assert len(seen[0]) == 2 and seen[1] == seen[0]  # the same processes spoke both jobs
    assert loads == dict.fromkeys(seen[0], 1)
    assert _engine_processes() == set()  # a stopped worker lets them go
