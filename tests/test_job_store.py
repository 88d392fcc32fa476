"""Tests for audiopub.jobs.store and audiopub.jobs.models: the durable job store."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from audiopub.book.models import Book, Chapter, Chunk, Cover
from audiopub.errors import InvalidTransition, JobNotFound, JobStoreError
from audiopub.jobs import report
from audiopub.jobs.db import SCHEMA_V1, SCHEMA_VERSION, UPGRADES
from audiopub.jobs.models import (
    ChapterState,
    ChunkState,
    JobSettings,
    JobState,
    chunk_cache_key,
)
from audiopub.jobs.store import JobStore

SETTINGS = JobSettings(engine="piper", voice="en_US-joe-medium", model_id="piper:abc123")

PlanInput = list[tuple[str, list[Chunk]]]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "jobs.sqlite3"


@pytest.fixture
def store(db_path: Path) -> Iterator[JobStore]:
    with JobStore(db_path) as opened:
        yield opened


@pytest.fixture
def epub(tmp_path: Path) -> Path:
    path = tmp_path / "upload.epub"
    path.write_bytes(b"PK fake epub bytes")
    return path


def make_plan(chapters: int, chunks: int, prefix: str = "") -> PlanInput:
    return [
        (
            f"Chapter {c + 1}",
            [
                Chunk(
                    chapter_index=c,
                    index=i,
                    text=f"{prefix}Sentence {i} of chapter {c}.",
                    ends_paragraph=i % 3 == 2,
                )
                for i in range(chunks)
            ],
        )
        for c in range(chapters)
    ]


def make_book(title: str = "T", author: str = "A") -> Book:
    return Book(title, (author,), "en", (Chapter(0, "One", ("Hello.",)),))


def new_job(store: JobStore, epub: Path, settings: JobSettings = SETTINGS) -> str:
    return store.queue.create_job(epub, epub.with_suffix(".m4b"), settings, book=make_book()).id


def finish_all(store: JobStore, job_id: str) -> None:
    for row in store.ledger.pending_chunks(job_id):
        store.ledger.mark_chunk_done(
            job_id,
            row.cache_key,
            audio_path=f"chunks/{row.cache_key}.wav",
            frames=100,
            sample_rate=1000,
            synth_s=0.01,
            provider="CPU",
            stage_times={"model": 0.5},
        )


# --- jobs -----------------------------------------------------------------------------------


def test_create_get_and_list(store: JobStore, epub: Path) -> None:
    book = Book(
        "Emma",
        ("Austen",),
        "en",
        (Chapter(0, "I", ("Emma Woodhouse.",)),),
        Cover(b"\x89PNG\r\n\x1a\n", "image/png"),
    )
    job = store.queue.create_job(epub, Path("/out/book.m4b"), SETTINGS, book=book)

    assert job.state is JobState.QUEUED
    assert len(job.id) == 32
    assert (job.title, job.author, job.settings) == ("Emma", "Austen", SETTINGS)
    assert job.output_path == Path("/out/book.m4b")
    # The EPUB is copied into the job's folder, so the upload may be deleted.
    assert job.epub_path == store.job_dir(job.id) / "book.epub"
    assert job.epub_path.read_bytes() == epub.read_bytes()
    assert job.started_at is None and job.finished_at is None
    assert store.queue.get_job(job.id) == job
    # The book as it was read at submission is kept with the job, cover and all.
    assert store.queue.book(job.id) == book

    second = new_job(store, epub)
    assert [j.id for j in store.queue.list_jobs()] == [job.id, second]
    store.queue.set_state(second, JobState.PAUSED)
    assert [j.id for j in store.queue.list_jobs([JobState.PAUSED])] == [second]


def test_unknown_job_is_reported(store: JobStore) -> None:
    with pytest.raises(JobNotFound):
        store.queue.get_job("nope")
    with pytest.raises(JobNotFound):
        store.queue.set_state("nope", JobState.RUNNING)


def test_settings_round_trip_through_json() -> None:
    settings = JobSettings(
        engine="supertonic",
        voice="F1",
        speed=1.25,
        steps=8,
        seed=7,
        use_gpu=True,
        chapters=(1, 3),
        model_id="st:1",
    )
    assert JobSettings.from_dict(settings.to_dict()) == settings
    # Old or newer rows: unknown keys are ignored, missing ones take defaults.
    # A row from before proof-listening: its job never listened.
    assert JobSettings.from_dict({"voice": "F1", "future": 1}) == JobSettings(
        voice="F1", proof_listen=False
    )


def test_forms_to_make_travel_with_the_job_but_not_into_the_cache_key() -> None:
    """What to make besides the .m4b is made from the audio: choosing it changes no chunk."""
    plain = JobSettings(voice="F1")
    forms = {"audio_format": "mp3", "split": "chapters", "subtitles": ["srt"], "read_along": True}
    chosen = JobSettings(voice="F1", forms=forms)
    assert JobSettings.from_dict(json.loads(json.dumps(chosen.to_dict()))).forms == forms
    assert chunk_cache_key("Call me Ishmael.", chosen) == chunk_cache_key("Call me Ishmael.", plain)
    assert JobSettings.from_dict(plain.to_dict()).forms is None


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="speed"):
        JobSettings(speed=9.0)
    with pytest.raises(ValueError, match="steps"):
        JobSettings(steps=1)


def test_set_job_info(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    store.queue.set_job_info(job_id, device="GPU (CUDA)")
    job = store.queue.get_job(job_id)
    assert (job.title, job.device) == ("T", "GPU (CUDA)")


def test_schema_version_is_set_and_reopening_keeps_data(db_path: Path, epub: Path) -> None:
    with JobStore(db_path) as store:
        job_id = new_job(store, epub)
    with JobStore(db_path) as store:
        assert store.queue.get_job(job_id).id == job_id
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 9
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def _write_as_version(
    db_path: Path, version: int, statements: list[str | tuple[str, tuple[object, ...]]]
) -> None:
    """Run `statements` (SQL, or SQL with its parameters) on the database at `db_path` and mark
    it as schema `version`, as an older Audiopub left it."""
    conn = sqlite3.connect(db_path)
    for statement in statements:
        sql, parameters = statement if isinstance(statement, tuple) else (statement, ())
        conn.execute(sql, parameters)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()


def test_a_version_1_store_is_upgraded_in_place(db_path: Path, epub: Path) -> None:
    """A store written before stage times were kept opens with its jobs intact."""
    db_path.parent.mkdir(parents=True)
    _write_as_version(
        db_path,
        1,
        [
            *SCHEMA_V1,
            (
                "INSERT INTO jobs (id, state, created_at, updated_at, title, epub_path, "
                "output_path, settings_json) "
                "VALUES ('old', 'paused', 1, 1, 'Old', 'b.epub', 'b.m4b', ?)",
                (json.dumps(SETTINGS.to_dict()),),
            ),
        ],
    )

    with JobStore(db_path) as store:
        job = store.queue.get_job("old")
        assert (job.title, job.state, job.stage_times) == ("Old", JobState.PAUSED, {})
        store.ledger.write_plan("old", make_plan(1, 2))
        finish_all(store, "old")
        store.queue.set_job_stage_times("old", {"encode": 1.0})
        assert store.queue.get_job("old").stage_times == {"encode": 1.0}
        assert [c.stage_times for c in store.ledger.all_chunks("old")] == [{"model": 0.5}] * 2
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_a_version_5_store_keeps_its_jobs_and_gains_peak_vram(db_path: Path, epub: Path) -> None:
    db_path.parent.mkdir(parents=True)
    _write_as_version(
        db_path,
        5,
        [
            *SCHEMA_V1,
            *(s for upgrade in UPGRADES[:4] for s in upgrade),
            (
                "INSERT INTO jobs (id, state, created_at, updated_at, title, epub_path, "
                "output_path, settings_json, device, stage_times_json) "
                "VALUES ('old', 'done', 1, 2, 'Old', 'b.epub', 'b.m4b', ?, 'GPU (CUDA)', "
                "'{\"encode\": 1.5}')",
                (json.dumps(SETTINGS.to_dict()),),
            ),
        ],
    )

    with JobStore(db_path) as store:
        job = store.queue.get_job("old")
        assert (job.title, job.state, job.device) == ("Old", JobState.DONE, "GPU (CUDA)")
        assert (job.stage_times, job.peak_vram_mb) == ({"encode": 1.5}, {})
        store.queue.record_peak_vram("old", {0: 812.5})
        assert store.queue.get_job("old").peak_vram_mb == {0: 812.5}
        assert new_job(store, epub) in [j.id for j in store.queue.list_jobs()]


def test_a_version_7_store_keeps_its_chunks_without_word_starts(db_path: Path, epub: Path) -> None:
    with JobStore(db_path) as store:
        job_id = new_job(store, epub)
        store.ledger.write_plan(job_id, make_plan(1, 2))
        finish_all(store, job_id)
        store.ledger.mark_chapter_done(
            job_id,
            0,
            audio_path="c.wav",
            duration_s=1.0,
            synth_s=0.1,
            frames=1000,
            sample_rate=1000,
            clips=[(0, 90), (95, 90)],
        )
    _write_as_version(
        db_path,
        7,
        [  # back to how version 7 wrote it
            "ALTER TABLE chunks DROP COLUMN word_starts_json",
            "ALTER TABLE chunks DROP COLUMN clip_lead",
            "DROP TABLE chunk_hearings",
            "ALTER TABLE chunks DROP COLUMN voice",
        ],
    )

    with JobStore(db_path) as store:
        chunks = store.ledger.chapter_chunks(job_id, 0)
        assert [
            (c.state, c.clip_start, c.word_starts, c.clip_word_starts, c.voice) for c in chunks
        ] == [
            (ChunkState.DONE, 0, None, None, ""),  # read by the job's voice, as they were
            (ChunkState.DONE, 95, None, None, ""),
        ]


def test_word_starts_are_kept_with_the_chunk_and_placed_in_its_clip(
    store: JobStore, epub: Path
) -> None:
    job_id = new_job(store, epub)
    store.ledger.write_plan(job_id, make_plan(1, 2))
    first, second = store.ledger.pending_chunks(job_id)
    for row, words in ((first, (40, 60, 95)), (second, None)):
        store.ledger.mark_chunk_done(
            job_id,
            row.cache_key,
            audio_path="a.wav",
            frames=100,
            sample_rate=1000,
            synth_s=0.1,
            provider="CPU",
            word_starts=words,
        )
    assert [c.clip_word_starts for c in store.ledger.chapter_chunks(job_id, 0)] == [None, None]
    # The stitcher cut 50 frames of silence before the first chunk's clip of 45 frames.
    store.ledger.mark_chapter_done(
        job_id,
        0,
        audio_path="c.wav",
        duration_s=1.0,
        synth_s=0.2,
        frames=1000,
        sample_rate=1000,
        clips=[(750, 45), (900, 100)],
        leads=[50, 0],
    )
    chunks = store.ledger.chapter_chunks(job_id, 0)
    assert chunks[0].word_starts == (40, 60, 95)
    assert chunks[0].clip_word_starts == (0, 10, 45)  # in the cut silence: the clip's start
    assert (chunks[1].word_starts, chunks[1].clip_word_starts) == (None, None)
    # A new plan of the same text keeps the audio, its words and the chapter's clips.
    store.ledger.write_plan(job_id, make_plan(1, 2))
    assert store.ledger.chapter_chunks(job_id, 0)[0].clip_word_starts == (0, 10, 45)
    store.ledger.reset_chunks(job_id, [first.cache_key])  # its audio is gone: so are its words
    assert store.ledger.chapter_chunks(job_id, 0)[0].word_starts is None


def test_peak_vram_keeps_the_maximum_per_device(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    assert store.queue.get_job(job_id).peak_vram_mb == {}
    store.queue.record_peak_vram(job_id, {0: 1000.0, 1: 300.0})
    store.queue.record_peak_vram(job_id, {0: 800.0, 1: 450.5, 2: 10.0})  # e.g. a resumed run
    job = store.queue.get_job(job_id)
    assert job.peak_vram_mb == {0: 1000.0, 1: 450.5, 2: 10.0}
    store.queue.record_peak_vram(job_id, {})
    store.queue.record_peak_vram(job_id, {0: 900})  # no new peak: nothing written
    assert store.queue.get_job(job_id) == job
    with sqlite3.connect(store.path) as conn:
        (stored,) = conn.execute(
            "SELECT peak_vram_json FROM jobs WHERE id = ?", (job_id,)
        ).fetchone()
    conn.close()
    assert json.loads(stored) == {"0": 1000.0, "1": 450.5, "2": 10.0}
    with pytest.raises(JobNotFound):
        store.queue.record_peak_vram("missing", {0: 1.0})
    with pytest.raises(ValueError, match="GPU 0"):
        store.queue.record_peak_vram(job_id, {0: float("nan")})


def test_job_details_state_peak_vram_only_when_known(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)

    def details() -> list[str]:
        return report.job_details(store, store.queue.get_job(job_id), store.ledger.progress(job_id))

    assert not [line for line in details() if "VRAM" in line]
    store.queue.record_peak_vram(job_id, {1: 512.0, 0: 1234.4})
    assert "peak VRAM: GPU 0 1,234 MiB, GPU 1 512 MiB" in details()


def test_stage_times_of_chunks_and_jobs(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    assert store.queue.get_job(job_id).stage_times == {}
    store.queue.set_job_stage_times(job_id, {"prepare": 0.25})
    store.queue.set_job_stage_times(job_id, {"encode": 3.0})
    store.queue.set_job_stage_times(job_id, {"encode": 2.0})  # measured again after a resume
    assert store.queue.get_job(job_id).stage_times == {"prepare": 0.25, "encode": 2.0}
    with pytest.raises(JobNotFound):
        store.queue.set_job_stage_times("missing", {"encode": 1.0})

    store.ledger.write_plan(job_id, make_plan(1, 2))
    first, second = store.ledger.pending_chunks(job_id)
    assert first.stage_times == {}
    store.ledger.mark_chunk_done(
        job_id,
        first.cache_key,
        audio_path="chunks/a.wav",
        frames=1,
        sample_rate=10,
        synth_s=0.2,
        provider="CPU",
        stage_times={"phonemes": 0.01, "model": 0.19},
    )
    # A new plan keeps the finished chunk's figures with its audio.
    store.ledger.write_plan(job_id, make_plan(1, 3))
    kept = {c.cache_key: c for c in store.ledger.all_chunks(job_id)}
    assert kept[first.cache_key].stage_times == {"phonemes": 0.01, "model": 0.19}
    store.ledger.reset_chunks(job_id, [first.cache_key])  # its audio is gone: so are its figures
    assert store.ledger.chapter_chunks(job_id, 0)[0].stage_times == {}


def test_newer_schema_is_refused(db_path: Path) -> None:
    JobStore(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(JobStoreError, match="newer"):
        JobStore(db_path)


def test_closed_store_refuses_work(db_path: Path) -> None:
    store = JobStore(db_path)
    store.close()
    with pytest.raises(JobStoreError, match="closed"):
        store.queue.list_jobs()


# --- state transitions ----------------------------------------------------------------------

Q, R, P, D, F, C = (
    JobState.QUEUED,
    JobState.RUNNING,
    JobState.PAUSED,
    JobState.DONE,
    JobState.FAILED,
    JobState.CANCELLED,
)
ALLOWED = {
    Q: {R, P, C},
    R: {Q, P, D, F, C},
    P: {Q, C},
    F: {Q},
    C: {Q},
    D: set(),
}
# How to bring a fresh (queued) job into each state.
PATHS = {Q: [], R: [R], P: [P], D: [R, D], F: [R, F], C: [C]}


@pytest.mark.parametrize("start", list(JobState))
@pytest.mark.parametrize("target", list(JobState))
def test_transitions(store: JobStore, epub: Path, start: JobState, target: JobState) -> None:
    job_id = new_job(store, epub)
    for step in PATHS[start]:
        store.queue.set_state(job_id, step)
    if target in ALLOWED[start]:
        assert store.queue.set_state(job_id, target).state is target
    else:
        with pytest.raises(InvalidTransition, match=f"{start.value} job cannot"):
            store.queue.set_state(job_id, target)
        assert store.queue.get_job(job_id).state is start


def test_state_helpers() -> None:
    assert {s for s in JobState if s.is_resumable} == {P, F, C}


def test_timestamps_and_error_follow_the_state(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    running = store.queue.set_state(job_id, JobState.RUNNING)
    assert running.started_at is not None and running.finished_at is None

    failed = store.queue.set_state(job_id, JobState.FAILED, error="engine exploded")
    assert failed.error == "engine exploded"
    assert failed.finished_at is not None

    store.queue.set_state(job_id, JobState.QUEUED)
    again = store.queue.set_state(job_id, JobState.RUNNING)
    assert again.error is None and again.finished_at is None
    assert again.started_at == running.started_at  # the first start is kept


def test_claim_next_job_is_oldest_first(store: JobStore, epub: Path) -> None:
    ids = [new_job(store, epub) for _ in range(3)]
    store.queue.set_state(ids[0], JobState.PAUSED)
    claimed = store.queue.claim_next_job()
    assert claimed is not None and claimed.id == ids[1] and claimed.state is JobState.RUNNING
    assert store.queue.claim_next_job().id == ids[2]  # type: ignore[union-attr]
    assert store.queue.claim_next_job() is None


def test_concurrent_claims_never_share_a_job(db_path: Path, epub: Path) -> None:
    with JobStore(db_path) as store:
        ids = {new_job(store, epub, settings=SETTINGS) for _ in range(40)}
        claims: list[str] = []
        errors: list[BaseException] = []
        lock = threading.Lock()
        start = threading.Barrier(6)

        def worker(own_store: bool) -> None:
            target = JobStore(db_path) if own_store else store
            try:
                start.wait()
                while (job := target.queue.claim_next_job()) is not None:
                    with lock:
                        claims.append(job.id)
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                errors.append(exc)
            finally:
                if own_store:
                    target.close()

        threads = [threading.Thread(target=worker, args=(n % 2 == 0,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    assert not errors
    assert sorted(claims) == sorted(ids)  # each job once, none lost


def test_requeue_interrupted(store: JobStore, epub: Path) -> None:
    running = [new_job(store, epub) for _ in range(2)]
    paused = new_job(store, epub)
    for job_id in running:
        store.queue.set_state(job_id, JobState.RUNNING)
    store.queue.set_state(paused, JobState.PAUSED)

    assert store.queue.requeue_interrupted() == running
    assert [store.queue.get_job(j).state for j in running] == [JobState.QUEUED] * 2
    assert store.queue.get_job(paused).state is JobState.PAUSED
    assert store.queue.requeue_interrupted() == []


def test_delete_job(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    store.ledger.write_plan(job_id, make_plan(2, 3))
    store.queue.set_state(job_id, JobState.RUNNING)
    with pytest.raises(InvalidTransition, match="before deleting"):
        store.queue.delete_job(job_id)

    store.queue.set_state(job_id, JobState.CANCELLED)
    store.queue.delete_job(job_id)
    with pytest.raises(JobNotFound):
        store.queue.get_job(job_id)
    assert not store.job_dir(job_id).exists()
    assert store.ledger.chapters(job_id) == [] and store.ledger.all_chunks(job_id) == []


# --- plan -----------------------------------------------------------------------------------


def test_write_plan_records_chapters_and_chunks(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    assert store.ledger.chapters(job_id) == []
    store.ledger.write_plan(job_id, make_plan(3, 4))

    chapters = store.ledger.chapters(job_id)
    assert [c.title for c in chapters] == ["Chapter 1", "Chapter 2", "Chapter 3"]
    assert [c.book_index for c in chapters] == [0, 1, 2]
    assert all(c.state is ChapterState.PENDING for c in chapters)

    chunks = store.ledger.chapter_chunks(job_id, 1)
    assert [c.idx for c in chunks] == [0, 1, 2, 3]
    assert chunks[2].ends_paragraph and not chunks[0].ends_paragraph
    assert chunks[0].cache_key == chunk_cache_key(chunks[0].text, SETTINGS)
    assert chapters[1].chars == sum(c.char_count for c in chunks)

    progress = store.ledger.progress(job_id)
    assert (progress.chunks_done, progress.chunks_total) == (0, 12)
    assert progress.chars_total == sum(c.chars for c in chapters)


def test_plan_needs_a_resolved_voice(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub, dataclasses.replace(SETTINGS, voice=None))
    with pytest.raises(ValueError, match="voice"):
        store.ledger.write_plan(job_id, make_plan(1, 1))
    assert store.ledger.chapters(job_id) == []  # the failed write left nothing behind


def test_done_job_cannot_be_replanned(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    store.queue.set_state(job_id, JobState.RUNNING)
    store.ledger.write_plan(job_id, make_plan(1, 1))  # the worker plans the job it claimed
    store.queue.set_state(job_id, JobState.DONE)
    with pytest.raises(InvalidTransition):
        store.ledger.write_plan(job_id, make_plan(1, 2))


@pytest.mark.parametrize("replan", [False, True], ids=["first plan", "replacing a plan"])
def test_readers_never_see_a_partial_plan(db_path: Path, epub: Path, replan: bool) -> None:
    with JobStore(db_path) as writer:
        job_id = new_job(writer, epub)
        if replan:
            writer.ledger.write_plan(job_id, make_plan(10, 10))
        before = writer.ledger.progress(job_id).chunks_total
        plan = make_plan(100, 100, prefix="new ")
        seen: set[tuple[int, int]] = set()
        writing = threading.Event()
        written = threading.Event()

        def poll() -> None:
            with JobStore(db_path) as reader:
                writing.set()
                while not written.is_set():
                    progress = reader.ledger.progress(job_id)
                    seen.add((len(progress.chapters), progress.chunks_total))

        reader_thread = threading.Thread(target=poll)
        reader_thread.start()
        writing.wait()
        writer.ledger.write_plan(job_id, plan)
        written.set()
        reader_thread.join()

    old = (10, before) if replan else (0, 0)
    assert seen <= {old, (100, 10_000)}
    assert old in seen


# --- cache keys -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"engine": "supertonic"},
        {"model_id": "piper:def456"},
        {"voice": "en_GB-alan-medium"},
        {"steps": 32},
        {"speed": 1.1},
        {"seed": 1},
    ],
)
def test_cache_key_changes_with_every_sound_setting(change: dict[str, object]) -> None:
    text = "It was a dark and stormy night."
    changed = dataclasses.replace(SETTINGS, **change)  # type: ignore[arg-type]
    assert chunk_cache_key(text, changed) != chunk_cache_key(text, SETTINGS)


@pytest.mark.parametrize("change", [{"use_gpu": True}, {"chapters": (2,)}, {"speed": 1}])
def test_cache_key_ignores_settings_that_do_not_change_the_sound(
    change: dict[str, object],
) -> None:
    text = "It was a dark and stormy night."
    same = dataclasses.replace(SETTINGS, **change)  # type: ignore[arg-type]
    assert chunk_cache_key(text, same) == chunk_cache_key(text, SETTINGS)


def test_cache_key_depends_on_the_text() -> None:
    key = chunk_cache_key("Hello.", SETTINGS)
    assert key == chunk_cache_key("Hello.", SETTINGS)
    assert key != chunk_cache_key("Hello!", SETTINGS)
    assert key != chunk_cache_key("Hello. ", SETTINGS)
    assert len(key) == 32 and int(key, 16) >= 0


# --- done marks -----------------------------------------------------------------------------


def test_mark_chunk_done_and_failed(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    store.ledger.write_plan(job_id, make_plan(1, 3))
    first, second, _ = store.ledger.pending_chunks(job_id)

    assert store.ledger.mark_chunk_done(
        job_id,
        first.cache_key,
        audio_path="chunks/a.wav",
        frames=480,
        sample_rate=24000,
        synth_s=0.5,
        provider="CPU",
    ) == (1, first.char_count)
    assert store.ledger.mark_chunk_failed(job_id, second.cache_key, "boom") == 1

    rows = store.ledger.chapter_chunks(job_id, 0)
    assert rows[0].state is ChunkState.DONE
    assert (rows[0].frames, rows[0].provider, rows[0].attempts) == (480, "CPU", 1)
    assert (rows[1].state, rows[1].error, rows[1].attempts) == (ChunkState.FAILED, "boom", 1)
    # Failed chunks are retried: they are still pending work.
    assert [r.idx for r in store.ledger.pending_chunks(job_id)] == [1, 2]
    progress = store.ledger.progress(job_id)
    assert (progress.chunks_done, progress.chars_done) == (1, first.char_count)
    assert progress.audio_s == pytest.approx(0.02)


def test_identical_texts_share_one_audio_file(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    same = [Chunk(0, 0, "* * *", True), Chunk(0, 1, "Other.", True), Chunk(0, 2, "* * *", True)]
    store.ledger.write_plan(job_id, [("One", same)])

    pending = store.ledger.pending_chunks(job_id)
    assert [r.idx for r in pending] == [0, 1]  # listed once per cache key
    assert store.ledger.mark_chunk_done(
        job_id,
        pending[0].cache_key,
        audio_path="chunks/x.wav",
        frames=1,
        sample_rate=10,
        synth_s=0.1,
        provider="CPU",
    ) == (2, 10)
    assert [r.idx for r in store.ledger.pending_chunks(job_id)] == [1]


def test_chapter_done_only_after_all_its_chunks(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    store.ledger.write_plan(job_id, make_plan(2, 2))
    done_kwargs = dict(audio_path="chapters/0.wav", duration_s=3.0, synth_s=1.5)
    assert not store.ledger.mark_chapter_done(job_id, 0, **done_kwargs)  # type: ignore[arg-type]

    finish_all(store, job_id)
    assert store.ledger.mark_chapter_done(
        job_id,
        0,
        chars_per_s=100.0,
        rtf=0.5,
        stage_times={"synth": 1.5, "stitch": 0.1},
        **done_kwargs,
    )  # type: ignore[arg-type]
    chapter = store.ledger.chapters(job_id)[0]
    assert chapter.state is ChapterState.DONE
    assert (chapter.rtf, chapter.stage_times) == (0.5, {"synth": 1.5, "stitch": 0.1})
    progress = store.ledger.progress(job_id).chapters
    assert progress[0].state is ChapterState.DONE
    assert (progress[0].chars_per_s, progress[0].rtf, progress[0].stage_times) == (
        100.0,
        0.5,
        {"synth": 1.5, "stitch": 0.1},
    )
    assert (progress[1].chars_per_s, progress[1].stage_times) == (None, {})


def test_a_chapter_keeps_its_timings_while_its_audio_stands(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    store.ledger.write_plan(job_id, make_plan(2, 2))
    finish_all(store, job_id)
    for idx in (0, 1):
        assert store.ledger.mark_chapter_done(
            job_id,
            idx,
            audio_path=f"chapters/{idx}.wav",
            duration_s=0.5,
            synth_s=0.1,
            frames=500,
            sample_rate=1000,
            clips=[(0, 90), (300, 95)],
        )

    changed = make_plan(2, 2)
    changed[1] = (changed[1][0], [*changed[1][1][:1], Chunk(1, 1, "Another line.", False)])
    store.ledger.write_plan(job_id, changed)  # the first chapter is as it was, the second is not

    first, second = store.ledger.chapters(job_id)
    assert (first.state, first.frames, first.sample_rate) == (ChapterState.DONE, 500, 1000)
    assert [(c.clip_start, c.clip_frames) for c in store.ledger.chapter_chunks(job_id, 0)] == [
        (0, 90),
        (300, 95),
    ]
    assert (second.state, second.frames) == (ChapterState.PENDING, None)
    assert [c.clip_start for c in store.ledger.chapter_chunks(job_id, 1)] == [None, None]


def test_replanning_keeps_finished_chunks_with_unchanged_keys(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    plan = make_plan(2, 3)
    store.ledger.write_plan(job_id, plan)
    finish_all(store, job_id)
    for idx in (0, 1):
        store.ledger.mark_chapter_done(
            job_id, idx, audio_path=f"ch{idx}.wav", duration_s=1.0, synth_s=1.0
        )

    edited = make_plan(2, 3)
    edited[1][1][1] = Chunk(1, 1, "An edited sentence.", False)
    store.ledger.write_plan(job_id, edited)

    assert [(r.chapter_idx, r.idx) for r in store.ledger.pending_chunks(job_id)] == [(1, 1)]
    kept = store.ledger.chapter_chunks(job_id, 0)[0]
    assert (kept.state, kept.audio_path, kept.frames) == (
        ChunkState.DONE,
        f"chunks/{kept.cache_key}.wav",
        100,
    )
    assert [c.state for c in store.ledger.chapters(job_id)] == [
        ChapterState.DONE,
        ChapterState.PENDING,
    ]
    assert store.ledger.chapters(job_id)[0].audio_path == "ch0.wav"


def test_a_new_voice_makes_every_chunk_pending_at_the_next_plan(
    store: JobStore, epub: Path
) -> None:
    job_id = new_job(store, epub)
    store.ledger.write_plan(job_id, make_plan(2, 3))
    finish_all(store, job_id)
    store.ledger.mark_chapter_done(job_id, 0, audio_path="ch0.wav", duration_s=1.0, synth_s=1.0)
    store.queue.set_state(job_id, JobState.PAUSED)

    new_voice = dataclasses.replace(SETTINGS, voice="en_GB-alan-medium")
    store.queue.update_settings(job_id, new_voice)
    assert store.queue.get_job(job_id).settings == new_voice
    store.ledger.write_plan(job_id, make_plan(2, 3))  # what the worker does when it claims the job

    rows = store.ledger.all_chunks(job_id)
    assert all(r.state is ChunkState.PENDING and r.audio_path is None for r in rows)
    assert all(r.cache_key == chunk_cache_key(r.text, new_voice) for r in rows)
    assert store.ledger.chapters(job_id)[0].state is ChapterState.PENDING


def test_settings_that_dont_change_the_sound_keep_every_chunk(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    store.ledger.write_plan(job_id, make_plan(2, 3))
    finish_all(store, job_id)
    store.queue.set_state(job_id, JobState.CANCELLED)

    # The GPU and the chapter selection do not change how a chunk sounds.
    store.queue.update_settings(
        job_id, dataclasses.replace(SETTINGS, use_gpu=True, chapters=(1, 2))
    )
    store.ledger.write_plan(job_id, make_plan(2, 3))
    assert store.ledger.progress(job_id).chunks_done == 6


def test_update_settings_is_refused_while_running(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    store.queue.set_state(job_id, JobState.RUNNING)
    with pytest.raises(InvalidTransition, match="pause it first"):
        store.queue.update_settings(job_id, dataclasses.replace(SETTINGS, speed=1.2))


@pytest.mark.parametrize(
    "states",
    [
        (JobState.RUNNING,),
        (JobState.PAUSED,),
        (JobState.RUNNING, JobState.FAILED),
        (JobState.CANCELLED,),
        (),
    ],
)
def test_requeue_with_settings_from_any_unfinished_state(
    store: JobStore, epub: Path, states: tuple[JobState, ...]
) -> None:
    job_id = new_job(store, epub)
    for state in states:
        store.queue.set_state(job_id, state, error="Interrupted")
    wanted = dataclasses.replace(SETTINGS, chapters=(2,))
    job = store.queue.requeue_with(job_id, wanted)
    assert (job.state, job.settings, job.error) == (JobState.QUEUED, wanted, None)


def test_requeue_with_settings_refuses_a_finished_job(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    store.queue.set_state(job_id, JobState.RUNNING)
    store.queue.set_state(job_id, JobState.DONE)
    with pytest.raises(InvalidTransition, match="finished meanwhile"):
        store.queue.requeue_with(job_id, dataclasses.replace(SETTINGS, chapters=(2,)))
    assert store.queue.get_job(job_id).settings == SETTINGS


def test_audio_made_under_old_settings_is_never_used(store: JobStore, epub: Path) -> None:
    """The worker finishes a chunk after the user paused and changed the voice: whether its
    mark lands before the job is planned again or after, the new plan never counts it."""
    job_id = new_job(store, epub)
    store.ledger.write_plan(job_id, make_plan(1, 2))
    first, second = store.ledger.pending_chunks(job_id)
    store.queue.set_state(job_id, JobState.PAUSED)
    store.queue.update_settings(job_id, dataclasses.replace(SETTINGS, voice="other"))

    done = {
        "audio_path": "chunks/old.wav",
        "frames": 10,
        "sample_rate": 100,
        "synth_s": 0.1,
        "provider": "CPU",
    }
    marked = store.ledger.mark_chunk_done(job_id, first.cache_key, **done)
    assert marked.chunks == 1  # the old plan's row
    store.ledger.write_plan(job_id, make_plan(1, 2))
    marked = store.ledger.mark_chunk_done(job_id, second.cache_key, **done)
    assert marked == (0, 0)  # no such key now
    assert store.ledger.progress(job_id).chunks_done == 0


def test_reset_chunks_also_resets_their_chapter(store: JobStore, epub: Path) -> None:
    job_id = new_job(store, epub)
    store.ledger.write_plan(job_id, make_plan(2, 2))
    finish_all(store, job_id)
    for idx in (0, 1):
        store.ledger.mark_chapter_done(job_id, idx, audio_path="c.wav", duration_s=1.0, synth_s=1.0)

    store.ledger.reset_chunks(job_id, [store.ledger.chapter_chunks(job_id, 1)[0].cache_key])

    assert [c.state for c in store.ledger.chapters(job_id)] == [
        ChapterState.DONE,
        ChapterState.PENDING,
    ]
    assert [(r.chapter_idx, r.idx) for r in store.ledger.pending_chunks(job_id)] == [(1, 0)]


# --- concurrency ----------------------------------------------------------------------------


def wait_for_fresh_reads(counts: dict[bool, list[int]], timeout_s: float = 5.0) -> None:
    """Block until every reader has read again (or the timeout passes)."""
    before = {k: len(v) for k, v in counts.items()}
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(len(counts[k]) <= before[k] for k in counts):
        time.sleep(0.001)


def test_readers_see_steady_progress_while_the_worker_writes(db_path: Path, epub: Path) -> None:
    with JobStore(db_path) as writer:
        job_id = new_job(writer, epub)
        writer.ledger.write_plan(job_id, make_plan(5, 100))
        keys = [r.cache_key for r in writer.ledger.pending_chunks(job_id)]
        assert len(keys) == 500
        counts: dict[bool, list[int]] = {True: [], False: []}
        errors: list[BaseException] = []
        finished = threading.Event()

        def read(shared: bool) -> None:
            reader = writer if shared else JobStore(db_path)
            try:
                while not finished.is_set():
                    counts[shared].append(reader.ledger.progress(job_id).chunks_done)
                    reader.queue.get_job(job_id)
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                errors.append(exc)
            finally:
                if not shared:
                    reader.close()

        # One reader shares the writer's store object (as the UI thread does), one opens its own
        # (as another process would).
        readers = [threading.Thread(target=read, args=(shared,)) for shared in (True, False)]
        for t in readers:
            t.start()
        for n, key in enumerate(keys):
            if n % 100 == 0:
                wait_for_fresh_reads(counts)  # so the readers see the count move
            writer.ledger.mark_chunk_done(
                job_id,
                key,
                audio_path=f"chunks/{key}.wav",
                frames=1,
                sample_rate=10,
                synth_s=0.1,
                provider="CPU",
            )
        finished.set()
        for t in readers:
            t.join()
        final = writer.ledger.progress(job_id).chunks_done

    assert not errors  # in particular no "database is locked"
    assert final == 500
    for seen in counts.values():
        assert seen == sorted(seen)  # never goes backwards
        assert len(set(seen)) > 1  # the reader saw the count move while the writer wrote
        assert seen[-1] <= 500


def test_closing_the_store_waits_for_a_statement_another_thread_runs(db_path: Path) -> None:
    # A page's job list still reading (run.io_bound) while the app closes the store: SQLite
    # crashed the process when the connection was closed under the running statement.
    store = JobStore(db_path)
    started = threading.Event()
    outcome: list[object] = []
    count = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) "
        "SELECT count(*) FROM n"
    )

    def read() -> None:
        conn = store.db.connection()
        started.set()
        try:
            outcome.append(conn.execute(count).fetchone()[0])
        except sqlite3.ProgrammingError as error:  # closed between the statement and its row
            outcome.append(error)

    thread = threading.Thread(target=read)
    thread.start()
    started.wait()
    time.sleep(0.05)
    store.close()
    thread.join()
    assert outcome == [3_000_000] or isinstance(outcome[0], sqlite3.ProgrammingError)
