"""What proof-listening keeps in the job store: hearings that always describe the audio on
disk, the counts and the list of chunks still flagged, with their place in the book."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from audiopub.book.models import Book, Chapter, Chunk
from audiopub.jobs.db import SCHEMA_V1, UPGRADES
from audiopub.jobs.hearings import Hearing
from audiopub.jobs.models import JobSettings
from audiopub.jobs.store import JobStore

SETTINGS = JobSettings(
    engine="piper", voice="en_US-joe-medium", model_id="piper:abc123", proof_listen=True
)
RATE = 1000


@pytest.fixture
def store(tmp_path: Path) -> Iterator[JobStore]:
    with JobStore(tmp_path / "data" / "jobs.sqlite3") as opened:
        yield opened


@pytest.fixture
def job_id(store: JobStore, tmp_path: Path) -> str:
    epub = tmp_path / "book.epub"
    epub.write_bytes(b"PK not read here")
    book = Book("T", ("A",), "en", (Chapter(0, "One", ("Hi.",)), Chapter(1, "Two", ("Hi.",))))
    job = store.queue.create_job(epub, tmp_path / "book.m4b", SETTINGS, book=book)
    store.ledger.write_plan(
        job.id,
        [
            (
                f"Chapter {c + 1}",
                [
                    Chunk(chapter_index=c, index=i, text=f"Words {i} of {c}.", ends_paragraph=False)
                    for i in range(3)
                ],
            )
            for c in range(2)
        ],
    )
    for row in store.ledger.pending_chunks(job.id):
        store.ledger.mark_chunk_done(
            job.id,
            row.cache_key,
            audio_path=f"chunks/{row.cache_key}.flac",
            frames=2 * RATE,
            sample_rate=RATE,
            synth_s=0.5,
            provider="CPU",
            word_starts=(0, 500),
        )
    return job.id


def hearing(key: str, flagged: bool, takes: int = 1, first: bool | None = None) -> Hearing:
    return Hearing(
        key,
        "heard words",
        0.5 if flagged else 0.0,
        4 if flagged else 0,
        flagged,
        "4 words missing in a row" if flagged else "",
        first_flagged=flagged if first is None else first,
        takes=takes,
        model="base",
    )


def key(store: JobStore, job_id: str, chapter: int, idx: int) -> str:
    return store.ledger.chapter_chunks(job_id, chapter)[idx].cache_key


def test_a_hearing_is_kept_only_for_audio_that_is_done(store: JobStore, job_id: str) -> None:
    first = key(store, job_id, 0, 0)
    assert store.hearings.record_hearing(job_id, hearing(first, False))
    assert not store.hearings.record_hearing(job_id, hearing("not-a-key", False))
    store.ledger.reset_chunks(job_id, [first])  # its file was found missing
    assert store.hearings.by_key(job_id) == {}
    assert not store.hearings.record_hearing(job_id, hearing(first, False))


def test_audio_made_again_forgets_what_was_heard_in_the_old(store: JobStore, job_id: str) -> None:
    first = key(store, job_id, 0, 1)
    store.hearings.record_hearing(job_id, hearing(first, True))
    assert [c.idx for c in store.hearings.unheard_chunks(job_id, 0)] == [0, 2]
    store.ledger.mark_chunk_done(
        job_id,
        first,
        audio_path=f"chunks/{first}.flac",
        frames=3 * RATE,
        sample_rate=RATE,
        synth_s=0.5,
        provider="CPU",
    )
    assert first not in store.hearings.by_key(job_id)
    assert [c.idx for c in store.hearings.unheard_chunks(job_id, 0)] == [0, 1, 2]


def test_flagged_chunks_are_repaired_once(store: JobStore, job_id: str) -> None:
    flagged, fine = key(store, job_id, 1, 2), key(store, job_id, 1, 0)
    store.hearings.record_hearing(job_id, hearing(flagged, True))
    store.hearings.record_hearing(job_id, hearing(fine, False))
    assert [(c.idx, h.flagged) for c, h in store.hearings.chunks_to_repair(job_id, 1)] == [
        (2, True)
    ]
    # Spoken again, still wrong.
    store.hearings.record_hearing(job_id, hearing(flagged, True, takes=4))
    assert store.hearings.chunks_to_repair(job_id, 1) == []


def test_a_kept_take_replaces_the_chunks_record(store: JobStore, job_id: str) -> None:
    flagged = key(store, job_id, 0, 2)
    store.hearings.record_hearing(job_id, hearing(flagged, True))
    marked = store.hearings.keep_take(
        job_id,
        hearing(flagged, False, takes=2, first=True),
        audio_path=f"chunks/{flagged}.flac",
        frames=2500,
        sample_rate=RATE,
        word_starts=(0, 300, 1400),
        synth_s=1.25,
    )
    chunk = store.ledger.chapter_chunks(job_id, 0)[2]
    assert marked == 1
    assert (chunk.frames, chunk.duration_s, chunk.word_starts, chunk.synth_s) == (
        2500,
        2.5,
        (0, 300, 1400),
        1.25,
    )
    kept = store.hearings.by_key(job_id)[flagged]
    assert dataclasses.replace(kept, heard_at=0.0) == hearing(flagged, False, takes=2, first=True)


def test_the_summary_and_the_list_of_chunks_still_flagged(store: JobStore, job_id: str) -> None:
    keys = [key(store, job_id, c, i) for c in range(2) for i in range(3)]
    for k in keys:
        store.hearings.record_hearing(job_id, hearing(k, False))
    store.hearings.record_hearing(job_id, hearing(keys[1], False, takes=2, first=True))  # fixed
    store.hearings.record_hearing(job_id, hearing(keys[4], True, takes=4))  # still wrong
    summary = store.hearings.listening_summary(job_id)
    assert summary.describe() == (
        "proof-listening: 2 of 6 chunks flagged (2 spoken again, 1 still flagged)"
    )
    (before,) = store.hearings.still_flagged(job_id)
    assert (before.chapter_title, before.chunk_idx, before.book_s) == ("Chapter 2", 1, None)
    # Once both chapters are stitched, its place in the book: chapter 1's length, then its clip.
    for chapter in range(2):
        assert store.ledger.mark_chapter_done(
            job_id,
            chapter,
            audio_path=f"chapters/{chapter}.wav",
            duration_s=6.5,
            synth_s=1.0,
            frames=6500,
            sample_rate=RATE,
            clips=[(0, 2000), (2250, 2000), (4500, 2000)],
        )
    (after,) = store.hearings.still_flagged(job_id)
    assert after.book_s == pytest.approx(6.5 + 2.25)
    assert (after.text, after.heard, after.takes) == ("Words 1 of 1.", "heard words", 4)


def test_deleting_a_job_deletes_its_hearings(store: JobStore, job_id: str) -> None:
    store.hearings.record_hearing(job_id, hearing(key(store, job_id, 0, 0), False))
    store.queue.delete_job(job_id)
    rows = store.db.connection().execute("SELECT count(*) FROM chunk_hearings").fetchone()
    assert rows == (0,)


def test_a_version_8_store_gains_the_hearings_table(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    for statement in (*SCHEMA_V1, *(s for upgrade in UPGRADES[:7] for s in upgrade)):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 8")
    conn.commit()
    conn.close()
    with JobStore(path) as store:
        assert store.hearings.by_key("none") == {}
