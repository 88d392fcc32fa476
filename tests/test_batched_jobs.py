"""Jobs spoken in padded batches: the same audio as one chunk at a time, the same bookkeeping,
resumable mid-batch, and a device that runs out of memory halves its batches instead of failing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from epub_factory import build_epub
from voices import add_still_voice

from audiopub.book.epub.reader import read_epub
from audiopub.jobs.events import JobEvent
from audiopub.jobs.models import ChunkState, JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.worker import execute_job
from audiopub.tts.piper.engine import PiperEngine

STILL = "en_US-still-medium"
# Batched and solo chunks differ by float rounding at their ends (1.1e-4 measured), and
# chunk files are 16-bit.
TOLERANCE = 5e-4 + 2 / 32768
OUT_OF_MEMORY = (
    "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned "
    "while running Conv node. Status Message: BFCArena::AllocateRawInternal "
    "Failed to allocate memory for requested buffer of size 4487905280"
)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> PiperEngine:
    folder = tmp_path_factory.mktemp("voices")
    add_still_voice(folder, STILL)
    return PiperEngine(voices_dir=folder)


@pytest.fixture(scope="module")
def epub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Short and long sentences taking turns, so batches by length differ from reading order."""
    short = [
        "The night was dark.",
        "The wind was cold.",
        "The rain fell hard.",
        "The lamps burned low.",
    ]
    long = [
        "The rain fell in torrents, except at occasional intervals.",
        "It was a dark and stormy night, and the wind swept the streets.",
        "For it is in London that our scene lies, rattling along.",
        "The scanty flame of the lamps struggled against the darkness.",
    ]
    sentences = [sentence for pair in zip(short, long, strict=True) for sentence in pair]
    return build_epub(
        tmp_path_factory.mktemp("book") / "b.epub",
        [("Part one", sentences[:5]), ("Part two", sentences[5:])],
    )


def _convert(
    folder: Path,
    epub: Path,
    engine: PiperEngine,
    batch_size: int | None,
    publish: Callable[[JobEvent], None] | None = None,
    store: JobStore | None = None,
    job_id: str | None = None,
) -> tuple[JobStore, str, JobState]:
    """A job in its own store (no audio shared with other jobs), run once."""
    if store is None:
        store = JobStore(folder / "jobs.sqlite3")
        settings = JobSettings(voice=STILL, batch_size=batch_size)
        job_id = submit_job(store, epub, read_epub(epub), folder / "b.m4b", settings, engine).id
    assert job_id is not None
    store.queue.set_state(job_id, JobState.RUNNING)
    return store, job_id, execute_job(store, job_id, publish, engine)


def _chunk_audio(store: JobStore, job_id: str) -> dict[str, np.ndarray]:
    folder = store.job_dir(job_id)
    return {
        chunk.cache_key: sf.read(str(folder / chunk.audio_path), dtype="float32")[0]
        for chunk in store.ledger.all_chunks(job_id)
    }


@pytest.fixture(scope="module")
def one_at_a_time(
    tmp_path_factory: pytest.TempPathFactory, epub: Path, engine: PiperEngine
) -> dict[str, np.ndarray]:
    store, job_id, state = _convert(tmp_path_factory.mktemp("solo"), epub, engine, 1)
    assert state is JobState.DONE
    return _chunk_audio(store, job_id)


def _assert_same_audio(audio: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    assert audio.keys() == expected.keys()
    for key, wave in audio.items():
        assert len(wave) == len(expected[key])  # each chunk cut at its exact length
        np.testing.assert_allclose(wave, expected[key], atol=TOLERANCE, rtol=0)


def test_a_batched_job_sounds_like_one_spoken_chunk_by_chunk(
    tmp_path: Path, epub: Path, engine: PiperEngine, one_at_a_time: dict[str, np.ndarray]
) -> None:
    events: list[JobEvent] = []
    store, job_id, state = _convert(tmp_path, epub, engine, 4, events.append)
    assert state is JobState.DONE
    _assert_same_audio(_chunk_audio(store, job_id), one_at_a_time)
    # Progress still counts up chunk by chunk, in reading order.
    done = [e.chunks_done for e in events if e.state is JobState.RUNNING and not e.message]
    assert done == sorted(done) and done[-1] == len(one_at_a_time)


def test_a_job_stopped_mid_batch_resumes_to_the_same_audio(
    tmp_path: Path, epub: Path, engine: PiperEngine, one_at_a_time: dict[str, np.ndarray]
) -> None:
    store: JobStore | None = None

    def pause_after_three(event: JobEvent) -> None:
        assert store is not None
        if event.state is JobState.RUNNING and event.chunks_done == 3:
            store.queue.set_state(event.job_id, JobState.PAUSED)

    store = JobStore(tmp_path / "jobs.sqlite3")
    settings = JobSettings(voice=STILL, batch_size=4)
    job_id = submit_job(store, epub, read_epub(epub), tmp_path / "b.m4b", settings, engine).id
    _, _, state = _convert(tmp_path, epub, engine, 4, pause_after_three, store, job_id)
    assert state is JobState.PAUSED
    states = [chunk.state for chunk in store.ledger.all_chunks(job_id)]
    assert states.count(ChunkState.DONE) == 3  # the rest of the batch is not marked done

    store.queue.set_state(job_id, JobState.QUEUED)
    _, _, state = _convert(tmp_path, epub, engine, 4, None, store, job_id)
    assert state is JobState.DONE
    _assert_same_audio(_chunk_audio(store, job_id), one_at_a_time)


def test_running_out_of_memory_halves_the_batch_and_says_so(
    tmp_path: Path,
    epub: Path,
    engine: PiperEngine,
    monkeypatch: pytest.MonkeyPatch,
    one_at_a_time: dict[str, np.ndarray],
) -> None:
    real_speak = engine.speak
    sizes: list[int] = []

    def speak(prepared, voice, options):  # type: ignore[no-untyped-def]
        sizes.append(len(prepared))
        if len(prepared) > 2:  # the device fits two chunks at a time
            raise RuntimeError(OUT_OF_MEMORY)
        return real_speak(prepared, voice, options)

    monkeypatch.setattr(engine, "speak", speak)
    events: list[JobEvent] = []
    store, job_id, state = _convert(tmp_path, epub, engine, 8, events.append)

    assert state is JobState.DONE
    _assert_same_audio(_chunk_audio(store, job_id), one_at_a_time)
    notes = [e.message for e in events if "ran out of memory" in e.message]
    assert notes and "batches are at most" in notes[0]
    assert max(sizes[sizes.index(max(sizes)) + 1 :]) <= 4  # halved, and never that big again


def test_out_of_memory_for_one_chunk_alone_fails_the_job_clearly(
    tmp_path: Path, epub: Path, engine: PiperEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    def speak(prepared, voice, options):  # type: ignore[no-untyped-def]
        raise RuntimeError(OUT_OF_MEMORY)

    monkeypatch.setattr(engine, "speak", speak)
    store, job_id, state = _convert(tmp_path, epub, engine, 2)
    assert state is JobState.FAILED
    error = store.queue.get_job(job_id).error or ""
    assert "Out of GPU memory for this chunk alone" in error and "'Part one'" in error
    assert not (tmp_path / "b.m4b").exists()


def test_engine_processes_take_batches_and_hand_results_back_in_order(
    tmp_path: Path, engine: PiperEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a CPU with several cores, batches by length go to engine processes and come back
    out of order; the caller still gets them in task order, with each chunk's own audio."""
    from audiopub.jobs.chunk_executor import ExecutorInfo, Placement
    from audiopub.jobs.chunk_work import ChunkTask
    from audiopub.jobs.executor import executor_for
    from audiopub.jobs.process_pool import ProcessExecutor
    from audiopub.tts.engine import SynthesisOptions

    add_still_voice(tmp_path / "models" / "piper", STILL)
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "2")
    texts = [
        "Yes.",
        "The rain fell in torrents, except at occasional intervals.",
        "No.",
        "It was a dark and stormy night.",
        "Maybe.",
        "The wind was cold and wet.",
        "So.",
        "For it is in London that our scene lies, rattling along the housetops.",
    ]
    tasks = [
        ChunkTask(f"k{i}", text, STILL, SynthesisOptions(), tmp_path / f"k{i}.flac")
        for i, text in enumerate(texts)
    ]
    pool = executor_for("piper", engine, batch_size=3)
    assert isinstance(pool, ProcessExecutor)
    assert pool.describe() == ExecutorInfo(
        Placement.ENGINE_PROCESSES, "CPU", ("CPU × 2 processes",), 2
    )
    try:
        results = list(pool.map(tasks))
    finally:
        pool.close()
    assert [r.key for r in results] == [t.key for t in tasks]
    alone = [engine.synthesize([t.text], STILL, SynthesisOptions())[0] for t in tasks]
    assert [r.frames for r in results] == [a.frames for a in alone]
    assert max(pool.batch_sizes) > 1  # some chunks really went together


def test_a_chunk_write_that_fails_mid_batch_resumes_to_the_same_audio(
    tmp_path: Path,
    epub: Path,
    engine: PiperEngine,
    monkeypatch: pytest.MonkeyPatch,
    one_at_a_time: dict[str, np.ndarray],
) -> None:
    """The disk fills while a writer flushes the fourth chunk: the job pauses with the chunks
    before it done and that one not, and resumes to the same audio."""
    import errno

    from audiopub import atomic

    real_fsync = atomic._fsync_file
    flushed: list[Path] = []

    def fsync_file(path: Path) -> None:
        if path.parent.name == "chunks":
            flushed.append(path)
            if len(flushed) == 4:
                raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(path)

    monkeypatch.setattr(atomic, "_fsync_file", fsync_file)
    store, job_id, state = _convert(tmp_path, epub, engine, 4)
    assert state is JobState.PAUSED
    folder = store.job_dir(job_id) / "chunks"
    failed = folder / flushed[3].name.split(atomic.TEMP_MARK)[0]
    assert not failed.exists() and not list(folder.glob(f"*{atomic.TEMP_MARK}*"))
    done = [c for c in store.ledger.all_chunks(job_id) if c.state is ChunkState.DONE]
    assert failed.stem not in {c.cache_key for c in done}

    monkeypatch.setattr(atomic, "_fsync_file", real_fsync)
    store.queue.set_state(job_id, JobState.QUEUED)
    _, _, state = _convert(tmp_path, epub, engine, 4, None, store, job_id)
    assert state is JobState.DONE
    _assert_same_audio(_chunk_audio(store, job_id), one_at_a_time)
