"""Tests for audiopub.jobs.chunk_cache: atomic chunk files and the trust rule on restart."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from audiopub.book.models import Chunk
from audiopub.jobs import chunk_cache
from audiopub.jobs.chunk_cache import (
    chunk_is_valid,
    chunk_path,
    chunk_relpath,
    remove_stale_temp_files,
    remove_unused_chunk_files,
    reuse_other_jobs_audio,
    verify_done_chapters,
    verify_done_chunks,
    write_chunk,
)
from audiopub.jobs.models import ChapterState, ChunkState, JobSettings
from audiopub.jobs.store import JobStore

RATE = 24_000
SETTINGS = JobSettings(engine="piper", voice="joe", model_id="piper:1")


def tone(frames: int = 2400) -> np.ndarray:
    return (0.5 * np.sin(np.linspace(0, 200, frames))).astype(np.float32)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[JobStore]:
    with JobStore(tmp_path / "jobs.sqlite3") as opened:
        yield opened


# --- writing --------------------------------------------------------------------------------


def test_write_chunk_round_trips_as_pcm16_mono(tmp_path: Path) -> None:
    path = tmp_path / "chunks" / "abc.wav"
    samples = tone()
    assert write_chunk(path, samples, RATE) == len(samples)

    info = sf.info(str(path))
    assert (info.samplerate, info.channels, info.subtype, info.frames) == (
        RATE,
        1,
        "PCM_16",
        len(samples),
    )
    back, _ = sf.read(str(path), dtype="float32")
    np.testing.assert_allclose(back, samples, atol=1 / 32768)
    assert [p.name for p in path.parent.iterdir()] == ["abc.wav"]  # no temp file left


def test_loud_samples_are_clipped_not_wrapped(tmp_path: Path) -> None:
    path = tmp_path / "loud.wav"
    write_chunk(path, np.array([1.5, -1.5, 0.0], dtype=np.float32), RATE)
    back, _ = sf.read(str(path), dtype="int16")
    assert back.tolist() == [32767, -32768, 0]


def test_stereo_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="mono"):
        write_chunk(tmp_path / "x.wav", np.zeros((10, 2), dtype=np.float32), RATE)


def test_failed_rename_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_replace(*_: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_chunk(tmp_path / "x.wav", tone(), RATE)
    assert list(tmp_path.iterdir()) == []


def test_write_failing_midway_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.wav"
    write_chunk(path, tone(100), RATE)
    real_write = sf.write

    def half_write(file: Any, data: np.ndarray, *args: Any, **kwargs: Any) -> None:
        real_write(file, data[: len(data) // 2], *args, **kwargs)
        raise RuntimeError("killed mid-write")

    monkeypatch.setattr(chunk_cache.sf, "write", half_write)
    with pytest.raises(RuntimeError, match="mid-write"):
        write_chunk(path, tone(5000), RATE)
    assert [p.name for p in tmp_path.iterdir()] == ["x.wav"]
    assert chunk_is_valid(path, 100)  # the earlier, complete file is untouched


# --- validity -------------------------------------------------------------------------------


def test_chunk_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "x.wav"
    assert not chunk_is_valid(path, 2400)  # missing
    write_chunk(path, tone(2400), RATE)
    assert chunk_is_valid(path, 2400)
    assert not chunk_is_valid(path, 2401)  # the store recorded another length
    assert not chunk_is_valid(path, None)  # no recorded length: nothing to trust


def test_truncated_and_garbage_files_are_invalid(tmp_path: Path) -> None:
    path = tmp_path / "x.wav"
    write_chunk(path, tone(2400), RATE)
    data = path.read_bytes()

    path.write_bytes(data[:-200])  # a crash cut the end off
    assert not chunk_is_valid(path, 2400)
    path.write_bytes(data[:20])  # not even a whole header
    assert not chunk_is_valid(path, 2400)
    path.write_bytes(b"\0" * len(data))
    assert not chunk_is_valid(path, 2400)


def test_remove_stale_temp_files(tmp_path: Path) -> None:
    write_chunk(tmp_path / "keep.wav", tone(10), RATE)
    stale = tmp_path / "lost.wav.tmp-123-abcd"
    stale.write_bytes(b"partial")
    assert remove_stale_temp_files(tmp_path) == [stale]
    assert [p.name for p in tmp_path.iterdir()] == ["keep.wav"]
    assert remove_stale_temp_files(tmp_path / "missing") == []


# --- the trust rule on restart --------------------------------------------------------------


def synthesise_all(store: JobStore, job_id: str) -> Path:
    """Write and mark every chunk as the worker would; returns the job's folder."""
    job_dir = store.job_dir(job_id)
    for row in store.ledger.pending_chunks(job_id):
        frames = write_chunk(chunk_path(job_dir, row.cache_key), tone(240 + row.idx), RATE)
        store.ledger.mark_chunk_done(
            job_id,
            row.cache_key,
            audio_path=chunk_relpath(row.cache_key),
            frames=frames,
            sample_rate=RATE,
            synth_s=0.01,
            provider="CPU",
            word_starts=(0, 100 + row.idx),
        )
    return job_dir


def planned_job(store: JobStore, tmp_path: Path) -> str:
    epub = tmp_path / "in.epub"
    epub.write_bytes(b"epub")
    job_id = store.queue.create_job(epub, tmp_path / "out.m4b", SETTINGS).id
    store.ledger.write_plan(
        job_id,
        [
            (f"Chapter {c}", [Chunk(c, i, f"Line {i} of {c}.", i == 2) for i in range(3)])
            for c in range(2)
        ],
    )
    return job_id


def test_verify_resets_chunks_whose_file_is_missing_or_truncated(
    store: JobStore, tmp_path: Path
) -> None:
    job_id = planned_job(store, tmp_path)
    job_dir = synthesise_all(store, job_id)
    store.ledger.mark_chapter_done(job_id, 1, audio_path="ch1.wav", duration_s=1.0, synth_s=1.0)
    truncated = store.ledger.chapter_chunks(job_id, 1)[0]
    missing = store.ledger.chapter_chunks(job_id, 0)[2]
    path = job_dir / truncated.audio_path  # type: ignore[operator]
    path.write_bytes(path.read_bytes()[:-100])
    (job_dir / missing.audio_path).unlink()  # type: ignore[operator]

    reset = verify_done_chunks(store, job_id, job_dir)

    assert {(r.chapter_idx, r.idx) for r in reset} == {(1, 0), (0, 2)}
    assert [(r.chapter_idx, r.idx) for r in store.ledger.pending_chunks(job_id)] == [(0, 2), (1, 0)]
    # Its audio used a bad chunk.
    assert store.ledger.chapters(job_id)[1].state is ChapterState.PENDING
    assert verify_done_chunks(store, job_id, job_dir) == []  # the rest is sound


def test_a_file_without_a_done_mark_is_redone(store: JobStore, tmp_path: Path) -> None:
    """Crash between writing the file and marking it: the chunk stays pending."""
    job_id = planned_job(store, tmp_path)
    row = store.ledger.pending_chunks(job_id)[0]
    write_chunk(chunk_path(store.job_dir(job_id), row.cache_key), tone(), RATE)

    assert verify_done_chunks(store, job_id, store.job_dir(job_id)) == []
    assert store.ledger.pending_chunks(job_id)[0] == row
    assert row.state is ChunkState.PENDING


def test_verify_done_chapters(store: JobStore, tmp_path: Path) -> None:
    job_id = planned_job(store, tmp_path)
    job_dir = synthesise_all(store, job_id)
    for idx in (0, 1):
        sf.write(job_dir / f"chapter-{idx}.wav", tone(RATE), RATE, subtype="PCM_16")
        store.ledger.mark_chapter_done(
            job_id, idx, audio_path=f"chapter-{idx}.wav", duration_s=1.0, synth_s=0.5
        )
    chapter_file = job_dir / "chapter-1.wav"
    chapter_file.write_bytes(chapter_file.read_bytes()[:RATE])  # half the audio is gone

    assert [c.idx for c in verify_done_chapters(store, job_id, job_dir)] == [1]
    assert [c.state for c in store.ledger.chapters(job_id)] == [
        ChapterState.DONE,
        ChapterState.PENDING,
    ]
    assert store.ledger.progress(job_id).chunks_done == 6  # chunks are untouched


def test_remove_unused_chunk_files(store: JobStore, tmp_path: Path) -> None:
    job_id = planned_job(store, tmp_path)
    job_dir = synthesise_all(store, job_id)
    stale = write_chunk(chunk_path(job_dir, "0" * 32), tone(10), RATE)
    assert stale == 10
    # A chunk from before chunk audio was FLAC, which no done chunk uses any more.
    sf.write(job_dir / "chunks" / ("1" * 32 + ".wav"), tone(10), RATE, subtype="PCM_16")

    removed = remove_unused_chunk_files(store, job_id, job_dir)

    assert sorted(p.name for p in removed) == ["0" * 32 + ".flac", "1" * 32 + ".wav"]
    assert len(os.listdir(job_dir / "chunks")) == 6
    assert verify_done_chunks(store, job_id, job_dir) == []


# --- audio shared between jobs --------------------------------------------------------------


def test_a_second_job_of_the_same_text_shares_the_audio_and_outlives_the_first(
    store: JobStore, tmp_path: Path
) -> None:
    first = planned_job(store, tmp_path)
    first_dir = synthesise_all(store, first)
    second = planned_job(store, tmp_path)
    second_dir = store.job_dir(second)

    assert reuse_other_jobs_audio(store, second, second_dir) == 6

    assert store.ledger.pending_chunks(second) == []
    assert verify_done_chunks(store, second, second_dir) == []
    made = {r.cache_key: r for r in store.ledger.done_chunks(first)}
    for row in store.ledger.done_chunks(second):
        assert row.reused_from == first
        assert (row.frames, row.synth_s) == (made[row.cache_key].frames, 0.01)
        assert row.word_starts == made[row.cache_key].word_starts == (0, 100 + row.idx)
        assert (second_dir / row.audio_path).samefile(first_dir / row.audio_path)  # a link
    progress = store.ledger.progress(second, since=0)
    assert (progress.reused_chunks, progress.chars_done, progress.reused_chars) == (
        6,
        progress.chars_total,
        progress.chars_total,
    )
    assert (progress.spoken_chars, progress.made_chars, progress.wall_s) == (0, 0, 0.0)

    store.queue.delete_job(first)  # the second job's audio stays whole
    assert verify_done_chunks(store, second, second_dir) == []


def test_missing_or_damaged_audio_of_another_job_is_not_shared(
    store: JobStore, tmp_path: Path
) -> None:
    first = planned_job(store, tmp_path)
    first_dir = synthesise_all(store, first)
    damaged, missing = store.ledger.chapter_chunks(first, 0)[:2]
    path = first_dir / damaged.audio_path  # type: ignore[operator]
    path.write_bytes(path.read_bytes()[:-50])
    (first_dir / missing.audio_path).unlink()  # type: ignore[operator]
    second = planned_job(store, tmp_path)

    assert reuse_other_jobs_audio(store, second, store.job_dir(second)) == 4
    assert [(r.chapter_idx, r.idx) for r in store.ledger.pending_chunks(second)] == [(0, 0), (0, 1)]


def test_other_settings_share_nothing(store: JobStore, tmp_path: Path) -> None:
    synthesise_all(store, planned_job(store, tmp_path))
    second = planned_job(store, tmp_path)
    store.queue.update_settings(second, JobSettings.from_dict({**SETTINGS.to_dict(), "speed": 1.2}))
    store.ledger.write_plan(
        second,
        [
            (
                c.title,
                [
                    Chunk(c.idx, r.idx, r.text, r.ends_paragraph)
                    for r in store.ledger.chapter_chunks(second, c.idx)
                ],
            )
            for c in store.ledger.chapters(second)
        ],
    )

    assert reuse_other_jobs_audio(store, second, store.job_dir(second)) == 0
    assert len(store.ledger.pending_chunks(second)) == 6


def test_audio_is_copied_where_it_cannot_be_linked(
    store: JobStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synthesise_all(store, planned_job(store, tmp_path))
    second = planned_job(store, tmp_path)

    def no_links(source: Any, target: Any) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_links)
    assert reuse_other_jobs_audio(store, second, store.job_dir(second)) == 6
    assert verify_done_chunks(store, second, store.job_dir(second)) == []
