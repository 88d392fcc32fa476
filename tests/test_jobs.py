"""The durable job machinery on the real Piper voice: resume, redo, order, cancel."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from epub_factory import build_epub

from audiopub.atomic import TEMP_MARK
from audiopub.audio.ffmpeg import probe
from audiopub.book.epub.reader import read_epub
from audiopub.figures import ENGINE_START
from audiopub.jobs import executor, pipeline
from audiopub.jobs.events import EventBus, JobEvent
from audiopub.jobs.models import ChunkState, Job, JobSettings, JobState, chunk_cache_key
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.worker import Worker, become_runner, execute_job, runner_lock
from audiopub.tts.engine import Engine
from audiopub.tts.registry import get_engine


@pytest.fixture(scope="module")
def engine() -> Engine:
    return get_engine("piper")


@pytest.fixture
def store(data_dir: Path) -> JobStore:
    with JobStore.open_default() as opened:
        yield opened


def submit(store: JobStore, epub: Path, output: Path, settings: JobSettings, engine: Engine) -> Job:
    return submit_job(store, epub, read_epub(epub), output, settings, engine)


def _long_epub(path: Path, chapters: int = 2, paragraphs: int = 2) -> Path:
    """Every paragraph is one short sentence, so every paragraph is its own chunk. The jobs
    pause at a known chunk (`_pause_after`), so a chapter of a heading and two paragraphs is
    long enough to stop inside it: every chunk more is one more to speak."""
    return build_epub(
        path,
        [
            (
                f"Part {c + 1}",
                [
                    f"This is sentence {p + 1} of part {c + 1}, read aloud."
                    for p in range(paragraphs)
                ],
            )
            for c in range(chapters)
        ],
    )


def _pause_after(store: JobStore, chunks: int) -> Callable[[JobEvent], None]:
    """A listener that pauses the job once `chunks` chunks are done (as a user would)."""

    def publish(event: JobEvent) -> None:
        if event.state is JobState.RUNNING and event.chunks_done >= chunks:
            job = store.queue.get_job(event.job_id)
            if job.state is JobState.RUNNING:
                store.queue.set_state(event.job_id, JobState.PAUSED)

    return publish


def _start(store: JobStore, job_id: str) -> None:
    store.queue.set_state(job_id, JobState.RUNNING)


def _run(
    store: JobStore, job_id: str, engine: Engine, publish: Callable[[JobEvent], None] | None = None
) -> JobState:
    _start(store, job_id)
    return execute_job(store, job_id, publish, engine)


def test_pause_then_resume_reuses_every_finished_chunk(store, engine, tmp_path) -> None:
    job = submit(store, _long_epub(tmp_path / "b.epub"), tmp_path / "b.m4b", JobSettings(), engine)
    # Paused inside the first chapter, after its heading and first paragraph.
    assert _run(store, job.id, engine, _pause_after(store, 2)) is JobState.PAUSED
    done_before = {c.cache_key for c in store.ledger.done_chunks(job.id)}
    assert len(done_before) == 2

    store.queue.set_state(job.id, JobState.QUEUED)
    assert _run(store, job.id, engine) is JobState.DONE
    chunks = store.ledger.all_chunks(job.id)
    assert all(c.state is ChunkState.DONE for c in chunks)
    assert all(c.attempts == 1 for c in chunks)  # nothing was synthesised twice
    assert [c.title for c in probe(tmp_path / "b.m4b").chapters] == ["Part 1", "Part 2"]


def test_telemetry_per_chapter_and_stage_survives_a_pause(store, engine, tmp_path) -> None:
    job = submit(store, _long_epub(tmp_path / "b.epub"), tmp_path / "b.m4b", JobSettings(), engine)
    # Paused inside the first chapter: its first chunks are timed in one run, the rest in the next.
    assert _run(store, job.id, engine, _pause_after(store, 2)) is JobState.PAUSED
    store.queue.set_state(job.id, JobState.QUEUED)
    assert _run(store, job.id, engine) is JobState.DONE

    for chapter in store.ledger.chapters(job.id):
        chunks = store.ledger.chapter_chunks(job.id, chapter.idx)
        times = chapter.stage_times
        stages = {"synthesis", "stitch", "level", "engine.phonemes", "engine.model"}
        assert stages <= set(times) <= stages | {"engine.load"}  # loading: once per process
        # Every chunk's engine stages count, those made before the pause too.
        assert times["engine.model"] == pytest.approx(sum(c.stage_times["model"] for c in chunks))
        assert all(c.stage_times["model"] > 0 for c in chunks)  # the engine's own stage names
        assert 0 < times["engine.phonemes"] + times["engine.model"] <= times["synthesis"]
        assert chapter.chars_per_s == pytest.approx(chapter.chars / times["synthesis"])
        assert chapter.rtf == pytest.approx(times["synthesis"] / chapter.duration_s)
    job_times = store.queue.get_job(job.id).stage_times
    assert set(job_times) == {"prepare", ENGINE_START, "encode"}
    assert all(v > 0 for v in job_times.values())


def test_speaking_time_leaves_out_what_a_chapter_does_after_it_is_spoken(
    store, engine, tmp_path, monkeypatch
) -> None:
    """The job's wall time "speaking only" sums its chunks': stitching a chapter (here a minute
    on the pipeline's clock, which the stitch moves on) is not the next chapter's speaking."""
    offset = [0.0]
    clock = SimpleNamespace(perf_counter=lambda: time.perf_counter() + offset[0])
    real_stitch = pipeline.stitch_chapter

    def slow_stitch(*args, **kwargs):
        offset[0] += 60.0
        return real_stitch(*args, **kwargs)

    monkeypatch.setattr(pipeline, "time", clock)
    monkeypatch.setattr(pipeline, "stitch_chapter", slow_stitch)
    job = submit(
        store,
        _long_epub(tmp_path / "b.epub", chapters=3, paragraphs=1),
        tmp_path / "b.m4b",
        JobSettings(),
        engine,
    )
    assert _run(store, job.id, engine) is JobState.DONE
    assert offset[0] == 180.0  # three chapters stitched
    assert 0 < store.ledger.progress(job.id).wall_s < 60.0


def test_engine_processes_stop_once_the_audio_is_spoken(
    store, engine, tmp_path, monkeypatch
) -> None:
    """They hold hundreds of MB each: a conversion that runs no other job (the command line's)
    does not carry them through encoding. The web app's worker keeps them for its next job:
    tests/test_job_figures.py."""
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "2")
    closed: list[executor.ProcessExecutor] = []
    real_shutdown = executor.ProcessExecutor.shutdown

    def shutdown(pool: executor.ProcessExecutor) -> None:
        closed.append(pool)
        real_shutdown(pool)

    pools_while_encoding: list[list[executor.ProcessExecutor]] = []
    real_mux = pipeline.mux_m4b

    def mux(*args, **kwargs):
        pools_while_encoding.append(executor.warm_pools())
        return real_mux(*args, **kwargs)

    monkeypatch.setattr(executor.ProcessExecutor, "shutdown", shutdown)
    monkeypatch.setattr(pipeline, "mux_m4b", mux)
    job = submit(
        store,
        _long_epub(tmp_path / "b.epub", chapters=1, paragraphs=2),
        tmp_path / "b.m4b",
        JobSettings(),
        engine,
    )
    _start(store, job.id)
    assert execute_job(store, job.id) is JobState.DONE  # no engine given: the real executor
    (pool,) = closed
    assert len(pools_while_encoding) == 1 and pool not in pools_while_encoding[0]
    assert pool._pool._processes is None  # shut down, not merely idle


def test_truncated_chunk_file_is_detected_and_redone(store, engine, tmp_path, monkeypatch) -> None:
    job = submit(
        store, _long_epub(tmp_path / "b.epub", 1, 2), tmp_path / "b.m4b", JobSettings(), engine
    )
    _run(store, job.id, engine, _pause_after(store, 2))  # one chunk of three left to speak
    victim = store.ledger.done_chunks(job.id)[1]
    path = store.job_dir(job.id) / victim.audio_path
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # a torn write

    store.queue.set_state(job.id, JobState.QUEUED)
    assert _run(store, job.id, engine) is JobState.DONE
    attempts = {c.cache_key: c.attempts for c in store.ledger.all_chunks(job.id)}
    assert attempts.pop(victim.cache_key) == 2
    assert set(attempts.values()) == {1}


@pytest.mark.parametrize("change", [{"speed": 1.25}, {"seed": 7}])
def test_changed_settings_on_resume_redo_the_affected_chunks(
    store, engine, tmp_path, change
) -> None:
    job = submit(
        store, _long_epub(tmp_path / "b.epub", 1, 2), tmp_path / "b.m4b", JobSettings(), engine
    )
    _run(store, job.id, engine, _pause_after(store, 2))  # one chunk of three left to speak
    old_keys = {c.cache_key for c in store.ledger.done_chunks(job.id)}
    changed = JobSettings.from_dict({**store.queue.get_job(job.id).settings.to_dict(), **change})
    store.queue.update_settings(job.id, changed)

    store.queue.set_state(job.id, JobState.QUEUED)
    assert _run(store, job.id, engine) is JobState.DONE
    chunks = store.ledger.all_chunks(job.id)
    assert all(c.state is ChunkState.DONE for c in chunks)
    assert {c.cache_key for c in chunks}.isdisjoint(old_keys)  # every one made again


def test_characters_done_end_at_the_total_when_chunks_share_their_audio(
    store, engine, tmp_path
) -> None:
    """ "Doctor" and "Dr." are said alike: one audio file for both chunks, each counted with its
    own characters (the bar once ended at 10,942/10,941 chars)."""
    epub = build_epub(
        tmp_path / "b.epub", [("One", ["Doctor Watson came in.", "Dr. Watson came in."])]
    )
    job = submit(store, epub, tmp_path / "b.m4b", JobSettings(), engine)
    events: list[JobEvent] = []
    assert _run(store, job.id, engine, events.append) is JobState.DONE
    counted = [e for e in events if e.chars_total]
    assert all(e.chars_done <= e.chars_total for e in counted)
    assert counted[-1].chars_done == counted[-1].chars_total == read_epub(epub).char_count


def test_two_queued_jobs_run_one_after_the_other(store, engine, tmp_path) -> None:
    first = submit(
        store, _long_epub(tmp_path / "a.epub", 1, 2), tmp_path / "a.m4b", JobSettings(), engine
    )
    second = submit(
        store, _long_epub(tmp_path / "b.epub", 1, 2), tmp_path / "b.m4b", JobSettings(), engine
    )
    bus = EventBus()
    events = bus.subscribe()
    worker = Worker(store, bus, engine)
    worker.start()
    try:
        finished: list[str] = []
        while len(finished) < 2:
            event = events.get(timeout=60)
            if event.state is JobState.DONE and event.job_id not in finished:
                finished.append(event.job_id)
            assert event.state is not JobState.FAILED, event.message
    finally:
        worker.stop()
    assert finished == [first.id, second.id]
    a, b = store.queue.get_job(first.id), store.queue.get_job(second.id)
    assert a.finished_at <= b.started_at
    assert (tmp_path / "a.m4b").is_file() and (tmp_path / "b.m4b").is_file()


class _HeldEngine:
    """The real engine, whose speaking waits until `release` is set."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.speaking = threading.Event()
        self.release = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def speak(self, *args: Any, **kwargs: Any) -> Any:
        self.speaking.set()
        assert self.release.wait(60)
        return self._engine.speak(*args, **kwargs)


def test_a_store_closed_under_a_running_job_stops_the_worker_quietly(
    data_dir, engine, tmp_path
) -> None:
    """A server that stops while a job's chunk outlasts the worker's stop timeout closes the
    store under that job: the worker thread ends without an error (an unhandled one fails this
    test), and the job, still `running` in the store, is queued again by the next runner."""
    held = _HeldEngine(engine)
    store = JobStore.open_default()
    job = submit(
        store, _long_epub(tmp_path / "b.epub", 1, 2), tmp_path / "b.m4b", JobSettings(), engine
    )
    worker = Worker(store, EventBus(), held)  # type: ignore[arg-type]  # an engine, held
    worker.start()
    assert held.speaking.wait(60)
    worker.stop(timeout=0.1)  # the chunk outlasts it
    assert worker.current_job == job.id
    store.close()
    held.release.set()
    deadline = time.monotonic() + 60
    while worker.current_job is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert worker.current_job is None
    with JobStore.open_default() as again:
        assert again.queue.get_job(job.id).state is JobState.RUNNING
        lock = runner_lock(again)
        assert become_runner(lock, again)
        lock.release()
        assert again.queue.get_job(job.id).state is JobState.QUEUED


def test_cancel_takes_effect_within_one_chunk(store, engine, tmp_path) -> None:
    job = submit(
        store, _long_epub(tmp_path / "b.epub", 2, 8), tmp_path / "b.m4b", JobSettings(), engine
    )
    done_at_cancel: list[int] = []
    cancelled = threading.Event()

    def publish(event: JobEvent) -> None:
        # Cancel from another thread, as the UI does, once two chunks exist.
        if event.chunks_done >= 2 and not cancelled.is_set():
            cancelled.set()
            done_at_cancel.append(event.chunks_done)
            threading.Thread(
                target=store.queue.set_state, args=(job.id, JobState.CANCELLED)
            ).start()

    assert _run(store, job.id, engine, publish) is JobState.CANCELLED
    assert len(store.ledger.done_chunks(job.id)) <= done_at_cancel[0] + 1
    assert not (tmp_path / "b.m4b").exists()


def test_engine_failure_fails_the_job_with_the_text(store, engine, tmp_path, monkeypatch) -> None:
    job = submit(
        store, _long_epub(tmp_path / "b.epub", 1, 2), tmp_path / "b.m4b", JobSettings(), engine
    )

    calls: list[str] = []

    def broken(prepared, *args, **kwargs):
        calls.extend(item.text for item in prepared)
        raise RuntimeError("onnx exploded")

    monkeypatch.setattr(engine, "speak", broken)
    assert _run(store, job.id, engine) is JobState.FAILED
    error = store.queue.get_job(job.id).error
    # The heading is the first chunk; the engine was given its spoken form.
    assert "onnx exploded" in error and "'Part one'" in error
    # Tried, then retried once; the device may have gone on to the next batch meanwhile.
    assert calls[:2] == ["Part one", "Part one"] and calls.count("Part one") == 2
    (first, *_) = store.ledger.all_chunks(job.id)
    assert first.state is ChunkState.FAILED and first.error == error


def test_shutdown_puts_the_running_job_back_in_the_queue(store, engine, tmp_path) -> None:
    job = submit(
        store, _long_epub(tmp_path / "b.epub", 2, 8), tmp_path / "b.m4b", JobSettings(), engine
    )
    _start(store, job.id)
    stop = threading.Event()

    def publish(event: JobEvent) -> None:
        if event.chunks_done >= 2:
            stop.set()

    assert execute_job(store, job.id, publish, engine, stop.is_set) is JobState.QUEUED


def test_pause_and_resume_between_two_checks_never_kills_the_worker(
    store, engine, tmp_path
) -> None:
    job = submit(
        store, _long_epub(tmp_path / "b.epub", 1, 2), tmp_path / "b.m4b", JobSettings(), engine
    )
    flipped = threading.Event()

    def publish(event: JobEvent) -> None:
        if event.chunks_done >= 2 and not flipped.is_set():
            flipped.set()  # a user clicks pause, then resume, before the worker looks again
            store.queue.set_state(job.id, JobState.PAUSED)
            store.queue.set_state(job.id, JobState.QUEUED)

    assert _run(store, job.id, engine, publish) is JobState.QUEUED
    assert _run(store, job.id, engine) is JobState.DONE  # the queued job simply runs again


def test_cancel_during_encoding_stops_ffmpeg_and_leaves_no_book(
    store, engine, tmp_path, monkeypatch
) -> None:
    job = submit(
        store, _long_epub(tmp_path / "b.epub", 1, 2), tmp_path / "b.m4b", JobSettings(), engine
    )

    def publish(event: JobEvent) -> None:
        if event.message == "Encoding the audiobook":
            store.queue.set_state(job.id, JobState.CANCELLED)

    assert _run(store, job.id, engine, publish) is JobState.CANCELLED
    assert not (tmp_path / "b.m4b").exists()
    assert not list(tmp_path.glob(f"*{TEMP_MARK}*"))


def test_a_job_needing_more_disk_than_is_free_is_refused(
    store, engine, tmp_path, monkeypatch
) -> None:
    from collections import namedtuple

    from audiopub.errors import DiskFull
    from audiopub.jobs import submission

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(submission.shutil, "disk_usage", lambda path: usage(10**9, 10**9, 1000))
    with pytest.raises(DiskFull, match="needs about .* GB free"):
        submit(store, _long_epub(tmp_path / "b.epub"), tmp_path / "b.m4b", JobSettings(), engine)
    assert store.queue.list_jobs() == []


def test_disk_estimate_covers_what_a_job_really_writes() -> None:
    from audiopub.jobs.submission import disk_needed

    # 20,001 chars of Wells made 1,060 s of speech with the joe voice (22.05 kHz, 16-bit):
    # chunk WAVs + chapter WAVs = 2 x 46.7 MB.
    assert disk_needed(20_001, 22_050, 1.0) >= 2 * 1_060 * 22_050 * 2


def test_too_many_active_jobs_are_refused(store, engine, tmp_path, monkeypatch) -> None:
    from audiopub import settings
    from audiopub.errors import AudiopubError

    monkeypatch.setattr(settings, "MAX_ACTIVE_JOBS", 1)
    submit(store, _long_epub(tmp_path / "a.epub", 1, 1), tmp_path / "a.m4b", JobSettings(), engine)
    with pytest.raises(AudiopubError, match="already waiting or running"):
        submit(
            store, _long_epub(tmp_path / "b.epub", 1, 1), tmp_path / "b.m4b", JobSettings(), engine
        )


def test_a_book_the_voice_cannot_read_is_refused_before_synthesis(store, engine, tmp_path) -> None:
    from audiopub.errors import BadEpub

    epub = build_epub(
        tmp_path / "ar.epub", [("فصل", ["هذا نص عربي طويل بما يكفي للاختبار."] * 3)], language="ar"
    )
    with pytest.raises(BadEpub, match="Arabic script.*en_US-joe-medium can't read it"):
        submit(store, epub, tmp_path / "ar.m4b", JobSettings(), engine)
    assert store.queue.list_jobs() == []


def test_disk_full_mid_job_pauses_it_and_resume_continues(
    store, engine, tmp_path, monkeypatch
) -> None:
    import errno

    from audiopub.jobs import chunk_work

    job = submit(
        store, _long_epub(tmp_path / "b.epub", 1, 2), tmp_path / "b.m4b", JobSettings(), engine
    )
    real_write = chunk_work.write_chunk
    writes: list[Path] = []

    def write_until_full(path, samples, sample_rate):
        if len(writes) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        writes.append(path)
        return real_write(path, samples, sample_rate)

    monkeypatch.setattr(chunk_work, "write_chunk", write_until_full)
    assert _run(store, job.id, engine) is JobState.PAUSED
    assert "The disk is full" in store.queue.get_job(job.id).error
    assert len(store.ledger.done_chunks(job.id)) == 2

    monkeypatch.setattr(chunk_work, "write_chunk", real_write)  # space was freed
    store.queue.set_state(job.id, JobState.QUEUED)
    assert _run(store, job.id, engine) is JobState.DONE
    assert all(c.attempts == 1 for c in store.ledger.all_chunks(job.id))


def test_ctrl_c_reaching_the_engine_processes_leaves_the_pool_working(tmp_path: Path) -> None:
    """Ctrl-C in a terminal signals every process of the group: the parent pauses the job,
    and the engine processes must neither die nor wedge the pool's queue (which hung the
    command at exit)."""
    import os
    import signal

    from audiopub import settings
    from audiopub.jobs.chunk_work import ChunkTask
    from audiopub.jobs.process_pool import ProcessExecutor
    from audiopub.tts.engine import SynthesisOptions

    pool = ProcessExecutor(
        "piper", tmp_path / "no-extra-voices", workers=1, options=settings.current()
    )
    try:

        def task(name: str) -> ChunkTask:
            return ChunkTask(
                name,
                "A short line.",
                "en_US-joe-medium",
                SynthesisOptions(seed=1),
                tmp_path / f"{name}.wav",
            )

        assert [r.error for r in pool.map([task("before")])] == [None]
        for process in list(pool._pool._processes.values()):
            os.kill(process.pid, signal.SIGINT)
        assert [r.error for r in pool.map([task("after")])] == [None]
    finally:
        pool.close()


def test_the_engine_is_given_the_spoken_form_and_the_book_keeps_its_spelling(
    store, engine, tmp_path, monkeypatch
) -> None:
    epub = build_epub(
        tmp_path / "b.epub",
        [
            ("CHAPTER IX", ["In 1850 Dr. Watson paid £5 for 3 lb. of tea."]),
        ],
        language="en",
    )
    job = submit(store, epub, tmp_path / "b.m4b", JobSettings(), engine)
    given: list[str] = []
    real = engine.prepare

    def spy(texts, *args, **kwargs):  # type: ignore[no-untyped-def]
        given.extend(texts)
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(engine, "prepare", spy)
    assert _run(store, job.id, engine) is JobState.DONE
    assert given == [
        "Chapter nine",
        "In eighteen fifty Doctor Watson paid five pounds for three pounds of tea.",
    ]
    heading, sentence = store.ledger.all_chunks(job.id)
    assert (heading.text, sentence.text) == (
        "CHAPTER IX",
        "In 1850 Dr. Watson paid £5 for 3 lb. of tea.",
    )
    settings = store.queue.get_job(job.id).settings
    assert sentence.cache_key == chunk_cache_key(given[1], settings)  # keyed on what is said
    assert [c.title for c in store.ledger.chapters(job.id)] == ["CHAPTER IX"]
