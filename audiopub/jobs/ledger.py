"""The ledger of a job's work: its plan (chapters and chunks), chunk and chapter marks, progress.

Chunk done-ness: a chunk row carries its cache key (text + settings, see `chunk_cache_key`) and
a state. Audio is named by the key, so done marks are set and carried *by key*:
 * `write_plan` rewrites the plan rows from the job's current settings; a new chunk whose key
   was done in the old plan stays done (same text, same settings → same audio), everything
   else starts pending. The worker plans a job every time it claims it, so a changed chapter
   selection or setting is always honoured, and finished audio is never made twice.
 * `mark_chunk_done(job_id, cache_key, ...)` only matches rows that still have that key, so a
   chunk made under settings that were changed meanwhile is never marked done.
The store's mark is half of the trust rule; the other half (the file exists with the recorded
length) is checked by `chunk_cache.verify_done_chunks`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from audiopub.book.models import Chunk
from audiopub.jobs.db import StoreDatabase
from audiopub.jobs.job_rows import EDITABLE_STATES, require_state, settings_of
from audiopub.jobs.job_rows import touch as touch_job
from audiopub.jobs.ledger_rows import (
    CHAPTER_NOT_DONE,
    CHUNK_COLUMNS,
    INSERT_CHAPTER,
    INSERT_CHUNK,
    SELECT_CHAPTERS,
    SELECT_CHUNKS,
    chapter_from_row,
    chunk_from_row,
    done_chapters,
    new_chapter_row,
    new_chunk_row,
    signature,
)
from audiopub.jobs.models import (
    ChapterProgress,
    ChapterRow,
    ChapterState,
    ChunkRow,
    JobProgress,
    JobSettings,
    JobState,
    chunk_cache_key,
)
from audiopub.jobs.store_json import times_json, times_of, words_json

# A chunk's characters in SQL, as `Chunk.char_count` counts them: the same count as the book's.
CHARS = "(length(k.text) + 1 - k.ends_paragraph)"

# The worker plans the job it has claimed; anyone may plan a job no worker runs.
_PLANNABLE_STATES = EDITABLE_STATES | {JobState.RUNNING}

ChapterPlanInput = tuple[str, Sequence[Chunk]]  # (title, chunks) as the chunker makes them
_KEYS_PER_QUERY = 500  # cache keys per IN (...) list, well under SQLite's variable limit


class Marked(NamedTuple):
    """The chunks `mark_chunk_done` marked, and their characters as `progress` counts them."""

    chunks: int
    chars: int


class JobLedger:
    """Plans, marks and progress: the ledger part of `JobStore` (`store.ledger`)."""

    def __init__(self, db: StoreDatabase) -> None:
        self._db = db

    # --- plan ----------------------------------------------------------------------------

    def write_plan(self, job_id: str, chapters: Sequence[ChapterPlanInput]) -> None:
        """Replace the job's chapters and chunks in one transaction, before any audio is made.

        Cache keys come from the job's stored settings. A chunk whose key was done in the old
        plan keeps its audio; a chapter whose title and chunks are unchanged keeps its done mark.
        Allowed while queued, paused, failed, cancelled or running (the worker plans the job
        it has claimed), not once done.
        """
        with self._db.write() as conn:
            require_state(conn, job_id, _PLANNABLE_STATES, "plan")
            settings = settings_of(conn, job_id)
            done_audio = {
                row.cache_key: row
                for row in map(
                    chunk_from_row, conn.execute(f"{SELECT_CHUNKS} AND state = 'done'", (job_id,))
                )
            }
            finished = done_chapters(conn, job_id)
            conn.execute("DELETE FROM chapters WHERE job_id = ?", (job_id,))  # and its chunks
            for idx, (title, chunks) in enumerate(chapters):
                keys = [chunk_cache_key(chunk.spoken, settings, chunk.voice) for chunk in chunks]
                old = finished.get(idx)
                kept = old if old and old.signature == signature(title, keys, chunks) else None
                conn.execute(
                    INSERT_CHAPTER,
                    new_chapter_row(job_id, idx, title, chunks, kept.row if kept else None),
                )
                conn.executemany(
                    INSERT_CHUNK,
                    [
                        new_chunk_row(
                            job_id,
                            idx,
                            position,
                            chunk,
                            key,
                            done_audio.get(key),
                            kept.chunks[position] if kept else None,
                        )
                        for position, (chunk, key) in enumerate(zip(chunks, keys))
                    ],
                )
            touch_job(conn, job_id)

    def chapters(self, job_id: str) -> list[ChapterRow]:
        rows = self._db.connection().execute(f"{SELECT_CHAPTERS} ORDER BY idx", (job_id,))
        return [chapter_from_row(r) for r in rows]

    def chapter_chunks(self, job_id: str, chapter_idx: int) -> list[ChunkRow]:
        """Every chunk of a chapter in order (what the stitcher reads)."""
        rows = self._db.connection().execute(
            f"{SELECT_CHUNKS} AND chapter_idx = ? ORDER BY idx", (job_id, chapter_idx)
        )
        return [chunk_from_row(r) for r in rows]

    def all_chunks(self, job_id: str) -> list[ChunkRow]:
        rows = self._db.connection().execute(
            f"{SELECT_CHUNKS} ORDER BY chapter_idx, idx", (job_id,)
        )
        return [chunk_from_row(r) for r in rows]

    def done_chunks(self, job_id: str) -> list[ChunkRow]:
        rows = self._db.connection().execute(
            f"{SELECT_CHUNKS} AND state = 'done' ORDER BY chapter_idx, idx", (job_id,)
        )
        return [chunk_from_row(r) for r in rows]

    def pending_chunks(self, job_id: str, chapter_idx: int | None = None) -> list[ChunkRow]:
        """Chunks still to synthesise (pending or failed), in order, one per cache key.

        Chunks with the same key share one audio file, and marking the key done marks them
        all, so only the first of each is listed.
        """
        conn = self._db.connection()
        if chapter_idx is None:
            rows = conn.execute(
                f"{SELECT_CHUNKS} AND state != 'done' ORDER BY chapter_idx, idx", (job_id,)
            )
        else:
            rows = conn.execute(
                f"{SELECT_CHUNKS} AND chapter_idx = ? AND state != 'done' ORDER BY idx",
                (job_id, chapter_idx),
            )
        seen: set[str] = set()
        pending = []
        for row in map(chunk_from_row, rows):
            if row.cache_key not in seen:
                seen.add(row.cache_key)
                pending.append(row)
        return pending

    # --- marks ---------------------------------------------------------------------------

    def mark_chunk_done(
        self,
        job_id: str,
        cache_key: str,
        *,
        audio_path: str,
        frames: int,
        sample_rate: int,
        synth_s: float,
        provider: str | None,
        stage_times: Mapping[str, float] | None = None,
        wall_s: float | None = None,
        word_starts: Sequence[int] | None = None,
    ) -> Marked:
        """Record a chunk's finished audio (call after the file is safely written).

        `synth_s` is the engine's time for this chunk and `stage_times` its seconds per stage
        (e.g. phonemes, model); `wall_s` is the wall-clock time the run spent on it (since the
        previous chunk was recorded), whose sum is how long the job took to speak.
        `word_starts` are where the engine's words start in the audio, if it said.

        Marks every chunk of the job with this key; returns how many, and their characters:
        chunks that share a key share their spoken words, not always their count ("He said."
        cut inside a paragraph counts the space after it, ending one does not; "Dr." and
        "Doctor" are said alike). 0 chunks means the plan or the settings changed meanwhile
        and the audio must not be used.
        """
        with self._db.write() as conn:
            chunks, chars = conn.execute(
                f"SELECT count(*), coalesce(sum({CHARS}), 0) FROM chunks k "
                "WHERE k.job_id = ? AND k.cache_key = ?",
                (job_id, cache_key),
            ).fetchone()
            conn.execute(
                """
                UPDATE chunks SET state = 'done', audio_path = ?, frames = ?, sample_rate = ?,
                    duration_s = ?, synth_s = ?, provider = ?, stage_times_json = ?,
                    wall_s = ?, done_at = ?, attempts = attempts + 1, error = NULL,
                    reused_from = NULL, word_starts_json = ?
                WHERE job_id = ? AND cache_key = ?
            """,
                (
                    audio_path,
                    frames,
                    sample_rate,
                    frames / sample_rate,
                    synth_s,
                    provider,
                    times_json(stage_times),
                    wall_s,
                    time.time(),
                    words_json(word_starts),
                    job_id,
                    cache_key,
                ),
            )
            _forget_hearing(conn, job_id, cache_key)  # it heard other audio
            touch_job(conn, job_id)
        return Marked(chunks, chars)

    def done_elsewhere(self, job_id: str, cache_keys: Iterable[str]) -> dict[str, ChunkRow]:
        """key → a done chunk of *another* job with that key: the same words said with the
        same settings, whose audio this job may share (`chunk_cache.reuse_other_jobs_audio`)."""
        conn = self._db.connection()
        found: dict[str, ChunkRow] = {}
        keys = sorted(set(cache_keys))
        for start in range(0, len(keys), _KEYS_PER_QUERY):
            batch = keys[start : start + _KEYS_PER_QUERY]
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE state = 'done' AND job_id != ? "
                f"AND cache_key IN ({', '.join('?' * len(batch))}) ORDER BY done_at DESC",
                (job_id, *batch),
            )
            for row in map(chunk_from_row, rows):
                found.setdefault(row.cache_key, row)  # the latest made, most likely still there
        return found

    def mark_chunks_reused(self, job_id: str, reused: Iterable[tuple[ChunkRow, str]]) -> int:
        """Mark chunks done with audio another job made: (that job's chunk row, where this
        job's copy of the file is). Its engine figures and word starts come along, since they
        describe the audio; wall time does not, since this job spent none. Returns the chunks
        marked."""
        marked = 0
        with self._db.write() as conn:
            for source, audio_path in reused:
                marked += conn.execute(
                    """
                    UPDATE chunks SET state = 'done', audio_path = ?, frames = ?,
                        sample_rate = ?, duration_s = ?, synth_s = ?, provider = ?,
                        stage_times_json = ?, wall_s = NULL, done_at = ?, error = NULL,
                        reused_from = ?, word_starts_json = ?
                    WHERE job_id = ? AND cache_key = ? AND state != 'done'
                """,
                    (
                        audio_path,
                        source.frames,
                        source.sample_rate,
                        source.duration_s,
                        source.synth_s,
                        source.provider,
                        times_json(source.stage_times),
                        time.time(),
                        source.reused_from or source.job_id,
                        words_json(source.word_starts),
                        job_id,
                        source.cache_key,
                    ),
                ).rowcount
            touch_job(conn, job_id)
        return marked

    def mark_chunk_failed(self, job_id: str, cache_key: str, error: str) -> int:
        """Record a failed attempt; the chunk is retried when the job next runs."""
        with self._db.write() as conn:
            cursor = conn.execute(
                """
                UPDATE chunks SET state = 'failed', attempts = attempts + 1, error = ?
                WHERE job_id = ? AND cache_key = ? AND state != 'done'
            """,
                (error, job_id, cache_key),
            )
            touch_job(conn, job_id)
        return cursor.rowcount

    def reset_chunks(self, job_id: str, cache_keys: Iterable[str]) -> None:
        """Forget the audio of these keys (e.g. its file is gone); their chapters too."""
        with self._db.write() as conn:
            for key in set(cache_keys):
                conn.execute(
                    f"""
                    UPDATE chapters SET {CHAPTER_NOT_DONE}
                    WHERE job_id = ? AND idx IN (
                        SELECT chapter_idx FROM chunks WHERE job_id = ? AND cache_key = ?)
                """,
                    (job_id, job_id, key),
                )
                conn.execute(
                    """
                    UPDATE chunks SET state = 'pending', audio_path = NULL, frames = NULL,
                        sample_rate = NULL, duration_s = NULL, synth_s = NULL, provider = NULL,
                        stage_times_json = NULL, wall_s = NULL, done_at = NULL, error = NULL,
                        reused_from = NULL, word_starts_json = NULL
                    WHERE job_id = ? AND cache_key = ?
                """,
                    (job_id, key),
                )
                _forget_hearing(conn, job_id, key)

    def mark_chapter_done(
        self,
        job_id: str,
        idx: int,
        *,
        audio_path: str,
        duration_s: float,
        synth_s: float,
        chars_per_s: float | None = None,
        rtf: float | None = None,
        stage_times: Mapping[str, float] | None = None,
        frames: int | None = None,
        sample_rate: int | None = None,
        clips: Sequence[tuple[int, int]] = (),
        leads: Sequence[int] = (),
        levels: Mapping[str, Mapping[str, float | None]] | None = None,
    ) -> bool:
        """Record a chapter's stitched audio and telemetry (engine figures, see `figures`).

        `frames` and `sample_rate` are the chapter audio's exact length; `clips` gives, for
        each chunk in order, where its speech lies in that audio: (first frame, frames), and
        `leads` the frames of each chunk's own audio cut before that (none given: unknown);
        `levels` its levels before and after leveling ({"before": {...}, "after": {...}}).

        Refused (False) unless every chunk of the chapter is done: if a chunk was reset while
        the chapter was being stitched, the chapter audio is stale.
        """
        with self._db.write() as conn:
            if conn.execute(
                "SELECT 1 FROM chunks WHERE job_id = ? AND chapter_idx = ? "
                "AND state != 'done' LIMIT 1",
                (job_id, idx),
            ).fetchone():
                return False
            cursor = conn.execute(
                """
                UPDATE chapters SET state = 'done', audio_path = ?, duration_s = ?, synth_s = ?,
                    chars_per_s = ?, rtf = ?, stage_times_json = ?, frames = ?, sample_rate = ?,
                    levels_json = ?
                WHERE job_id = ? AND idx = ?
            """,
                (
                    audio_path,
                    duration_s,
                    synth_s,
                    chars_per_s,
                    rtf,
                    times_json(stage_times),
                    frames,
                    sample_rate,
                    json.dumps(levels) if levels else None,
                    job_id,
                    idx,
                ),
            )
            lead_of = list(leads) + [None] * (len(clips) - len(leads))
            conn.executemany(
                "UPDATE chunks SET clip_start = ?, clip_frames = ?, clip_lead = ? "
                "WHERE job_id = ? AND chapter_idx = ? AND idx = ?",
                [
                    (start, length, lead_of[position], job_id, idx, position)
                    for position, (start, length) in enumerate(clips)
                ],
            )
            touch_job(conn, job_id)
        return cursor.rowcount == 1

    def reset_chapter(self, job_id: str, idx: int) -> None:
        """Forget a chapter's audio (e.g. its file is gone); its chunks are kept."""
        with self._db.write() as conn:
            conn.execute(
                f"UPDATE chapters SET {CHAPTER_NOT_DONE} WHERE job_id = ? AND idx = ?",
                (job_id, idx),
            )

    # --- progress ------------------------------------------------------------------------

    def speech_pace(self, engine: str, voice: str) -> float | None:
        """Characters a second of finished audio holds at speed 1.0 with this voice, pauses
        included, measured on every finished book it read; None before its first."""
        chars = seconds = 0.0
        for settings_json, job_chars, audio_s in self._db.connection().execute("""
                SELECT j.settings_json, sum(c.chars), sum(c.duration_s)
                FROM jobs j JOIN chapters c ON c.job_id = j.id
                WHERE j.state = 'done' AND c.state = 'done' AND c.duration_s > 0
                GROUP BY j.id"""):
            settings = JobSettings.from_dict(json.loads(settings_json))
            if (settings.engine, settings.voice) == (engine, voice):
                chars += job_chars
                seconds += audio_s * settings.speed  # at speed 1.0 it would last this long
        return chars / seconds if chars and seconds else None

    def progress(self, job_id: str, since: float | None = None) -> JobProgress:
        """Totals and per-chapter counts from one snapshot; with `since` (Unix seconds) the
        `made_*` figures count only chunks finished from then on, e.g. in this run."""
        rows = (
            self._db.connection()
            .execute(
                f"""
            SELECT c.idx, c.title, c.state,
                   count(k.idx),
                   coalesce(sum(k.state = 'done'), 0),
                   coalesce(sum({CHARS}), 0),
                   coalesce(sum(CASE WHEN k.state = 'done' THEN {CHARS} END), 0),
                   coalesce(sum(CASE WHEN k.state = 'done' THEN k.duration_s END), 0.0),
                   coalesce(sum(CASE WHEN k.state = 'done' THEN k.synth_s END), 0.0),
                   c.chars_per_s, c.rtf, c.stage_times_json,
                   coalesce(sum(CASE WHEN k.done_at >= :since AND k.reused_from IS NULL
                                     THEN {CHARS} END), 0),
                   coalesce(sum(CASE WHEN k.done_at >= :since AND k.reused_from IS NULL
                                     THEN k.duration_s END), 0.0),
                   coalesce(sum(CASE WHEN k.state = 'done' THEN k.wall_s END), 0.0),
                   coalesce(sum(k.state = 'done' AND k.reused_from IS NOT NULL), 0),
                   coalesce(sum(CASE WHEN k.state = 'done' AND k.reused_from IS NOT NULL
                                     THEN {CHARS} END), 0),
                   coalesce(sum(CASE WHEN k.state = 'done' AND k.reused_from IS NOT NULL
                                     THEN k.duration_s END), 0.0)
            FROM chapters c LEFT JOIN chunks k ON k.job_id = c.job_id AND k.chapter_idx = c.idx
            WHERE c.job_id = :job_id
            GROUP BY c.idx ORDER BY c.idx
        """,
                {"job_id": job_id, "since": since},
            )
            .fetchall()
        )
        chapters = tuple(
            ChapterProgress(
                idx=r[0],
                title=r[1],
                state=ChapterState(r[2]),
                chunks_total=r[3],
                chunks_done=r[4],
                chars_total=r[5],
                chars_done=r[6],
                chars_per_s=r[9],
                rtf=r[10],
                stage_times=times_of(r[11]),
            )
            for r in rows
        )
        return JobProgress(
            chunks_done=sum(c.chunks_done for c in chapters),
            chunks_total=sum(c.chunks_total for c in chapters),
            chars_done=sum(c.chars_done for c in chapters),
            chars_total=sum(c.chars_total for c in chapters),
            audio_s=sum(r[7] for r in rows),
            synth_s=sum(r[8] for r in rows),
            chapters=chapters,
            made_chars=sum(r[12] for r in rows),
            made_audio_s=sum(r[13] for r in rows),
            wall_s=sum(r[14] for r in rows),
            reused_chunks=sum(r[15] for r in rows),
            reused_chars=sum(r[16] for r in rows),
            reused_audio_s=sum(r[17] for r in rows),
        )


def _forget_hearing(conn: sqlite3.Connection, job_id: str, cache_key: str) -> None:
    """A key's audio is made again or gone: what proof-listening heard no longer describes it."""
    conn.execute(
        "DELETE FROM chunk_hearings WHERE job_id = ? AND cache_key = ?", (job_id, cache_key)
    )
