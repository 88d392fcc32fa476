"""Engines kept warm between jobs, and let go: after the idle time (on the keeper's clock, given
here), when memory runs short, when another engine needs the room. On the CPU they are real
engine processes speaking the embedded Piper voice; on a GPU the real registry, executor and
session factory run, and only ONNX Runtime's providers are faked (sessions that claim CUDA and
run on the CPU), counting the sessions alive: a session destroyed is VRAM given back."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import psutil
import pytest
import shared_sessions
from epub_factory import build_epub
from voices import add_still_voice

from audiopub import settings
from audiopub.book.epub.reader import read_epub
from audiopub.jobs import executor, pipeline
from audiopub.jobs.chunk_executor import Placement
from audiopub.jobs.events import EventBus, JobEvent
from audiopub.jobs.models import JobSettings, JobState
from audiopub.jobs.process_pool import ProcessExecutor
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.synthesis_plan import plan_synthesis
from audiopub.jobs.warm_engines import KEEP_ROOM_BYTES, WarmEngines
from audiopub.jobs.worker import Worker
from audiopub.tts import onnx_runtime, registry

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")

VOICE = settings.DEFAULT_PIPER_VOICE
STILL = "en_US-still-medium"
IDLE_S = 120.0
PLENTY = 64 << 30
SHORT = KEEP_ROOM_BYTES - 1


class Clock:
    """The keeper's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Room:
    """The memory available, as psutil would say it, set by the test."""

    def __init__(self) -> None:
        self.bytes = PLENTY

    def __call__(self) -> int:
        return self.bytes


@pytest.fixture
def idle_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIOPUB_ENGINE_IDLE_S", str(IDLE_S))


def _pool_key() -> tuple[str, Path, int, str]:
    return ("piper", registry.default_model_dir("piper"), 1, "CPU")


def _gone(pids: list[int]) -> bool:
    return not any(psutil.pid_exists(pid) for pid in pids)


@pytest.mark.usefixtures("idle_time")
def test_engine_processes_stop_after_the_idle_time_or_when_memory_runs_short() -> None:
    clock, room = Clock(), Room()
    keeper = WarmEngines(room, clock)
    made: list[ProcessExecutor] = []

    def make() -> ProcessExecutor:
        made.append(
            ProcessExecutor(
                "piper", _pool_key()[1], 1, 1, "CPU", keeper=keeper, options=settings.current()
            )
        )
        return made[-1]

    pool = keeper.take(_pool_key(), None, make)
    assert pool is not None
    pool.start(VOICE)
    pids = pool.process_ids()
    pool.close(keep_warm=True)
    clock.now += IDLE_S - 1
    keeper.reap()
    assert keeper.pools() == [pool] and not _gone(pids)  # warm for the next job

    # The next job takes the same processes; the idle time counts from its end.
    assert keeper.take(_pool_key(), None, make) is pool and len(made) == 1
    clock.now += 10 * IDLE_S
    keeper.reap()
    assert keeper.pools() == [pool]  # in use: never let go
    pool.close(keep_warm=True)
    clock.now += IDLE_S - 1
    keeper.reap()
    assert keeper.pools() == [pool]
    clock.now += 1
    keeper.reap()
    assert keeper.pools() == [] and pool._pool._processes is None and _gone(pids)

    # Kept again, then the machine runs short of memory before the idle time is up.
    pool = keeper.take(_pool_key(), None, make)
    assert pool is not None and len(made) == 2
    pool.start(VOICE)
    pids = pool.process_ids()
    pool.close(keep_warm=True)
    assert keeper.pools() == [pool]
    room.bytes = SHORT
    keeper.reap()
    assert keeper.pools() == [] and _gone(pids)


# The ORT session state (its native session among it) of each CPU session built under a fake
# GPU session, by model and options, for the module (`gpu_sessions_built_once`).
_BUILT_ON_CPU: dict[tuple[Any, ...], dict[str, Any]] = {}


@pytest.fixture(scope="module")
def gpu_sessions_built_once() -> Iterator[None]:
    yield
    _BUILT_ON_CPU.clear()


class _SessionsOnGpu(onnx_runtime.ort.InferenceSession):
    """ORT's session as on a GPU machine, as far as Audiopub can tell: asked for CUDA, it names
    CUDA first; the work runs on the CPU. Counts the sessions alive (each would hold VRAM)."""

    alive: ClassVar[int] = 0
    made: ClassVar[int] = 0  # ever

    def __init__(
        self, path: Any, sess_options: Any = None, providers: Any = None, **kwargs: Any
    ) -> None:
        cpu = [onnx_runtime.CPU]
        # ORT builds the CPU session underneath once per model and options (2-4 CPU s each,
        # see shared_sessions); every one made here is still a session of its own, counted
        # alive until it is destroyed, which is what the tests follow.
        key = shared_sessions.session_key(path, sess_options, cpu, kwargs)
        if key is not None and key in _BUILT_ON_CPU:
            self.__dict__.update(_BUILT_ON_CPU[key])
        else:
            super().__init__(path, sess_options, providers=cpu, **kwargs)
            if key is not None:
                _BUILT_ON_CPU[key] = dict(self.__dict__)
        type(self).alive += 1
        type(self).made += 1
        weakref.finalize(self, _SessionsOnGpu._destroyed)

    @staticmethod
    def _destroyed() -> None:
        _SessionsOnGpu.alive -= 1

    def get_providers(self) -> list[str]:
        return [onnx_runtime.CUDA, onnx_runtime.CPU]


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch, gpu_sessions_built_once: None) -> None:
    """A machine whose ORT offers CUDA (one device); engines loaded here stay here."""
    from audiopub.gpu import devices

    monkeypatch.setattr(registry, "_cache", {})  # these engines claim CUDA: none kept after
    monkeypatch.setattr(
        onnx_runtime, "available_providers", lambda: [onnx_runtime.CUDA, onnx_runtime.CPU]
    )
    monkeypatch.setattr(onnx_runtime.ort, "InferenceSession", _SessionsOnGpu)
    monkeypatch.setattr(devices, "cuda_device_ids", lambda visible: [0])
    gc.collect()
    _SessionsOnGpu.alive = _SessionsOnGpu.made = 0


@pytest.fixture
def keeper(monkeypatch: pytest.MonkeyPatch) -> tuple[WarmEngines, Clock, Room]:
    clock, room = Clock(), Room()
    kept = WarmEngines(room, clock)
    monkeypatch.setattr(executor, "_warm", kept)
    yield kept, clock, room
    kept.close_all()


def _speak_on_gpu() -> weakref.ref[Any]:
    """Plan a GPU job as a run does, start its voice, and close it as the web app's worker
    does (keeping the engine warm); a weak reference to the engine it spoke with."""
    plan = plan_synthesis(JobSettings(voice=VOICE, use_gpu=True))
    assert plan.info.placement is Placement.IN_PROCESS and "GPU" in plan.info.where, plan.info
    plan.executor.start(VOICE)
    plan.executor.close(keep_warm=True)
    return weakref.ref(plan.engine)


@pytest.mark.usefixtures("gpu", "idle_time")
def test_a_gpu_engine_stays_loaded_for_the_next_job_and_gives_its_vram_back_when_idle(
    keeper: tuple[WarmEngines, Clock, Room],
) -> None:
    kept, clock, _ = keeper
    engine = _speak_on_gpu()
    assert kept.on_gpu() == ["piper"] and _SessionsOnGpu.alive == 1
    loaded = registry.engines_loaded()
    clock.now += IDLE_S - 1
    kept.reap()
    assert _speak_on_gpu()() is engine() and registry.engines_loaded() == loaded  # warm
    assert _SessionsOnGpu.alive == 1

    clock.now += IDLE_S - 1  # counted from the second job's end
    kept.reap()
    assert kept.on_gpu() == ["piper"] and _SessionsOnGpu.alive == 1
    clock.now += 1
    kept.reap()
    assert kept.on_gpu() == [] and engine() is None and _SessionsOnGpu.alive == 0

    _speak_on_gpu()  # the next job loads it again
    assert registry.engines_loaded() == loaded + 1 and _SessionsOnGpu.alive == 1


@pytest.mark.usefixtures("gpu", "idle_time")
def test_a_gpu_engine_goes_when_memory_is_short_or_another_engine_needs_it(
    keeper: tuple[WarmEngines, Clock, Room],
) -> None:
    kept, _, room = keeper
    _speak_on_gpu()
    room.bytes = SHORT
    kept.reap()
    assert kept.on_gpu() == [] and _SessionsOnGpu.alive == 0

    engine = _speak_on_gpu()  # short of memory as the job ends: not kept at all
    assert kept.on_gpu() == [] and engine() is None and _SessionsOnGpu.alive == 0
    assert not kept.room_to_prepare()  # nor is the next job's engine loaded ahead

    room.bytes = PLENTY
    assert kept.room_to_prepare()
    _speak_on_gpu()
    assert kept.on_gpu() == ["piper"]
    # A job of another engine (here one that speaks in this process) takes the memory.
    assert kept.take(("supertonic", Path("elsewhere"), 1, "CPU"), None, lambda: None) is None
    assert kept.on_gpu() == [] and _SessionsOnGpu.alive == 0


@pytest.mark.usefixtures("gpu")
def test_a_one_off_conversion_releases_its_gpu_engine_once_spoken(
    keeper: tuple[WarmEngines, Clock, Room],
) -> None:
    kept, _, _ = keeper
    plan = plan_synthesis(JobSettings(voice=VOICE, use_gpu=True))
    plan.executor.start(VOICE)
    plan.executor.close(keep_warm=False)
    engine = weakref.ref(plan.engine)
    del plan
    gc.collect()
    assert kept.on_gpu() == [] and engine() is None and _SessionsOnGpu.alive == 0


class _SessionsAtStart(EventBus):
    """The worker's bus, noting how many sessions were ever made as each job starts."""

    def __init__(self) -> None:
        super().__init__()
        self.at_start: dict[str, int] = {}

    def publish(self, event: JobEvent) -> None:
        if event.state is JobState.RUNNING and event.message == "Started":
            self.at_start[event.job_id] = _SessionsOnGpu.made
        super().publish(event)


@pytest.mark.usefixtures("gpu")
@pytest.mark.parametrize("memory", ["plenty", "short"])
def test_the_next_jobs_voice_is_loaded_while_this_one_finishes_where_memory_allows(
    memory: str,
    keeper: tuple[WarmEngines, Clock, Room],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two GPU jobs queued, the second with another voice: while the first one encodes, the
    worker loads the second one's voice (its session made before the job starts), unless
    memory is short, where the first one's engine is not even kept."""
    kept, _, room = keeper
    room.bytes = PLENTY if memory == "plenty" else SHORT
    add_still_voice(tmp_path / "models" / "piper", STILL)
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    real_mux = pipeline.mux_m4b

    def mux_once_the_next_engine_is_loaded(*args: Any, **kwargs: Any) -> None:
        # The test waits for the worker's look-ahead: encoding a long book gives it the time.
        for thread in threading.enumerate():
            if thread.name == "audiopub-next-engine":
                thread.join(120)
        real_mux(*args, **kwargs)

    monkeypatch.setattr(pipeline, "mux_m4b", mux_once_the_next_engine_is_loaded)
    with JobStore.open_default() as store:
        jobs = []
        for voice, word in ((VOICE, "rain"), (STILL, "snow")):
            epub = build_epub(
                tmp_path / f"{word}.epub", [("One", [f"The {word} fell on the town."])]
            )
            jobs.append(
                submit_job(
                    store,
                    epub,
                    read_epub(epub),
                    epub.with_suffix(".m4b"),
                    JobSettings(voice=voice, use_gpu=True),
                    registry.get_engine("piper", use_gpu=True),
                )
            )
        loaded = registry.engines_loaded()
        bus = _SessionsAtStart()
        inbox = bus.subscribe()
        worker = Worker(store, bus)
        worker.start()
        try:
            for job in jobs:
                while (event := inbox.get(timeout=300)).job_id != job.id or (
                    event.state is JobState.RUNNING
                ):
                    pass
                assert event.state is JobState.DONE, event.message
        finally:
            worker.stop()
    first, second = (bus.at_start[job.id] for job in jobs)
    if memory == "plenty":
        assert second == first + 2  # the first job's voice, and the second one's made ahead
        assert registry.engines_loaded() == loaded  # one engine, kept for both jobs
    else:
        assert second == first + 1  # the first job's voice only: nothing made ahead
        assert registry.engines_loaded() == loaded + 1  # the first job's was not kept
    assert kept.on_gpu() == [] and _SessionsOnGpu.alive == 0  # a stopped worker lets go


def test_a_warm_pool_serves_only_jobs_asking_for_what_its_processes_loaded(
    tmp_path: Path,
) -> None:
    from audiopub.jobs.executor import pool_key
    from audiopub.tts.kokoro.environment import RUNTIME

    def key_under(runtime: str, engine: str) -> tuple:
        with settings.installed(RUNTIME.given(settings.current(), runtime)):
            return pool_key(engine, tmp_path, 4, "CPU")

    # Kokoro's processes load the runtime in force: ONNX Runtime's never serve PyTorch's.
    assert key_under("onnx", "kokoro") != key_under("torch", "kokoro")
    assert key_under("onnx", "kokoro") == key_under("onnx", "kokoro")
    # Piper has one runtime: the setting changes nothing for it.
    assert key_under("onnx", "piper") == key_under("torch", "piper")
    # New files in the folder (a download, a replaced model) are not what a pool loaded.
    (tmp_path / "config.json").write_text("{}")
    before = key_under("onnx", "kokoro")
    (tmp_path / "tokenizer.json").write_text("{}")
    assert key_under("onnx", "kokoro") != before
