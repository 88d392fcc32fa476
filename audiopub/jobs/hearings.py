"""What proof-listening heard, kept in the job store: one hearing per chunk audio of a job.

A hearing is keyed like the audio it describes, by the chunk's cache key, and holds the verdict
on the take that was kept (what was heard, its word error rate, its longest run of missing
words), whether the first take was wrong and how many takes were heard. Whenever a key's
audio is made again (`JobLedger.mark_chunk_done`, `JobLedger.reset_chunks`) its hearing is
deleted, so a hearing always describes the audio on disk, and a resumed job hears only what it
has not.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from audiopub.jobs.db import StoreDatabase
from audiopub.jobs.job_rows import touch as touch_job
from audiopub.jobs.ledger import JobLedger
from audiopub.jobs.ledger_rows import SELECT_CHUNKS, chunk_from_row
from audiopub.jobs.models import ChunkRow
from audiopub.jobs.store_json import words_json

_COLUMNS = (
    "cache_key, heard, wer, missing_run, flagged, reason, first_flagged, takes, model, heard_at"
)


@dataclass(frozen=True)
class Hearing:
    """The verdict on a chunk's kept take."""

    cache_key: str
    heard: str  # what the listening model heard in it
    wer: float
    missing_run: int
    flagged: bool  # the kept take is still wrong
    reason: str = ""
    first_flagged: bool = False  # its first take was wrong
    takes: int = 1  # takes heard; more than one: it was spoken again
    model: str = ""  # the listening model, e.g. "base"
    heard_at: float = 0.0

    @property
    def spoken_again(self) -> bool:
        return self.takes > 1


@dataclass(frozen=True)
class ListeningSummary:
    """Counted over the job's chunks (a text said twice in a book counts twice)."""

    heard: int  # chunks heard
    flagged: int  # chunks whose first take was wrong
    spoken_again: int
    still_flagged: int

    def describe(self) -> str:
        """The line `convert` ends with."""
        return (
            f"proof-listening: {self.flagged:,} of {self.heard:,} chunks flagged "
            f"({self.spoken_again:,} spoken again, {self.still_flagged:,} still flagged)"
        )


@dataclass(frozen=True)
class FlaggedChunk:
    """A chunk still wrong after its repairs: what it says, what was heard, where it is."""

    chapter_idx: int
    chapter_title: str
    chunk_idx: int
    text: str
    heard: str
    reason: str
    wer: float
    missing_run: int
    takes: int
    # Seconds into the finished book where its speech starts; None before its chapter is
    # stitched (the chapters of a book are back to back, as the muxer joins them).
    book_s: float | None


def _hearing(row: Sequence[Any]) -> Hearing:
    key, heard, wer, run, flagged, reason, first, takes, model, heard_at = row
    return Hearing(key, heard, wer, run, bool(flagged), reason, bool(first), takes, model, heard_at)


class JobHearings:
    """Proof-listening's verdicts: the hearings part of `JobStore` (`store.hearings`)."""

    def __init__(self, db: StoreDatabase, ledger: JobLedger) -> None:
        self._db = db
        self._ledger = ledger  # the plan's chapters and chunks the hearings are about

    def record_hearing(self, job_id: str, hearing: Hearing) -> bool:
        """Keep a verdict on the audio the store has for its key; False (nothing kept) when
        that key is no longer done: its audio was reset or re-planned while it was heard."""
        with self._db.write() as conn:
            if not _done(conn, job_id, hearing.cache_key):
                return False
            _replace(conn, job_id, hearing)
        return True

    def keep_take(
        self,
        job_id: str,
        hearing: Hearing,
        *,
        audio_path: str,
        frames: int,
        sample_rate: int,
        word_starts: Sequence[int] | None,
        synth_s: float,
    ) -> int:
        """A new take replaced the chunk's audio file: record its length, word starts and the
        engine seconds all its takes cost, with its verdict, in one transaction (call after the
        file is in place). Returns the chunks marked; 0 when the key is no longer done."""
        with self._db.write() as conn:
            if not _done(conn, job_id, hearing.cache_key):
                return 0
            marked = conn.execute(
                """
                UPDATE chunks SET audio_path = ?, frames = ?, sample_rate = ?, duration_s = ?,
                    synth_s = ?, word_starts_json = ?, reused_from = NULL
                WHERE job_id = ? AND cache_key = ? AND state = 'done'
            """,
                (
                    audio_path,
                    frames,
                    sample_rate,
                    frames / sample_rate,
                    synth_s,
                    words_json(word_starts),
                    job_id,
                    hearing.cache_key,
                ),
            ).rowcount
            _replace(conn, job_id, hearing)
            touch_job(conn, job_id)
        return marked

    def by_key(self, job_id: str) -> dict[str, Hearing]:
        """cache key → its hearing, for every chunk audio of the job heard so far."""
        rows = self._db.connection().execute(
            f"SELECT {_COLUMNS} FROM chunk_hearings WHERE job_id = ?", (job_id,)
        )
        return {hearing.cache_key: hearing for hearing in map(_hearing, rows)}

    def unheard_chunks(self, job_id: str, chapter_idx: int) -> list[ChunkRow]:
        """The chapter's done chunks whose audio has no hearing yet, one per key, in order."""
        rows = self._db.connection().execute(
            f"{SELECT_CHUNKS} AND chapter_idx = ? AND state = 'done' AND NOT EXISTS ("
            "SELECT 1 FROM chunk_hearings h WHERE h.job_id = chunks.job_id "
            "AND h.cache_key = chunks.cache_key) ORDER BY idx",
            (job_id, chapter_idx),
        )
        return _one_per_key(map(chunk_from_row, rows))

    def chunks_to_repair(self, job_id: str, chapter_idx: int) -> list[tuple[ChunkRow, Hearing]]:
        """The chapter's chunks whose first take was flagged and that were not yet spoken
        again, one per key, in order; not one whose audio is also in a chapter already
        stitched (made before listening was on), whose audio a new take would belie."""
        hearings = self.by_key(job_id)
        stitched = {
            key
            for (key,) in self._db.connection().execute(
                "SELECT k.cache_key FROM chunks k JOIN chapters c ON c.job_id = k.job_id "
                "AND c.idx = k.chapter_idx WHERE k.job_id = ? AND c.state = 'done'",
                (job_id,),
            )
        }
        return [
            (chunk, hearings[chunk.cache_key])
            for chunk in _one_per_key(self._ledger.chapter_chunks(job_id, chapter_idx))
            if chunk.cache_key in hearings
            and hearings[chunk.cache_key].flagged
            and not hearings[chunk.cache_key].spoken_again
            and chunk.cache_key not in stitched
        ]

    def listening_summary(self, job_id: str) -> ListeningSummary:
        heard, flagged, again, still = (
            self._db.connection()
            .execute(
                """
            SELECT count(*), coalesce(sum(h.first_flagged OR h.flagged), 0),
                   coalesce(sum(h.takes > 1), 0), coalesce(sum(h.flagged), 0)
            FROM chunks k JOIN chunk_hearings h
                ON h.job_id = k.job_id AND h.cache_key = k.cache_key
            WHERE k.job_id = ? AND k.state = 'done'
        """,
                (job_id,),
            )
            .fetchone()
        )
        return ListeningSummary(heard, flagged, again, still)

    def still_flagged(self, job_id: str) -> list[FlaggedChunk]:
        """Every chunk whose kept take is still flagged, in book order, with its place in the
        finished book."""
        chapters = self._ledger.chapters(job_id)
        starts, book_s = {}, 0.0
        for chapter in chapters:  # back to back in the book, as the muxer joins them
            starts[chapter.idx] = book_s
            book_s += chapter.duration_s or 0.0
        found = []
        for chunk_row in self._db.connection().execute(
            f"""
                SELECT k.chapter_idx, k.idx, k.text, k.clip_start, {_prefixed("h.")}
                FROM chunks k JOIN chunk_hearings h
                    ON h.job_id = k.job_id AND h.cache_key = k.cache_key
                WHERE k.job_id = ? AND k.state = 'done' AND h.flagged
                ORDER BY k.chapter_idx, k.idx""",
            (job_id,),
        ):
            chapter_idx, idx, text, clip_start = chunk_row[:4]
            hearing = _hearing(chunk_row[4:])
            chapter = chapters[chapter_idx]
            at = None
            if clip_start is not None and chapter.sample_rate:
                at = starts[chapter_idx] + clip_start / chapter.sample_rate
            found.append(
                FlaggedChunk(
                    chapter_idx,
                    chapter.title,
                    idx,
                    text,
                    hearing.heard,
                    hearing.reason,
                    hearing.wer,
                    hearing.missing_run,
                    hearing.takes,
                    at,
                )
            )
        return found


def _prefixed(prefix: str) -> str:
    return ", ".join(prefix + column.strip() for column in _COLUMNS.split(","))


def _done(conn: sqlite3.Connection, job_id: str, cache_key: str) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM chunks WHERE job_id = ? AND cache_key = ? AND state = 'done' LIMIT 1",
            (job_id, cache_key),
        ).fetchone()
        is not None
    )


def _replace(conn: sqlite3.Connection, job_id: str, hearing: Hearing) -> None:
    conn.execute(
        f"INSERT OR REPLACE INTO chunk_hearings (job_id, {_COLUMNS}) "
        f"VALUES (?, {', '.join('?' * 10)})",
        (
            job_id,
            hearing.cache_key,
            hearing.heard,
            hearing.wer,
            hearing.missing_run,
            int(hearing.flagged),
            hearing.reason,
            int(hearing.first_flagged),
            hearing.takes,
            hearing.model,
            hearing.heard_at or time.time(),
        ),
    )


def _one_per_key(chunks: Iterable[ChunkRow]) -> list[ChunkRow]:
    seen: set[str] = set()
    kept = []
    for chunk in chunks:
        if chunk.cache_key not in seen:
            seen.add(chunk.cache_key)
            kept.append(chunk)
    return kept
