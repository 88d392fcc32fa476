"""The ledger's rows: its columns, reading rows into `ChapterRow`/`ChunkRow`, and the rows of a
new plan, which keep what the old plan had finished (see `JobLedger.write_plan`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from audiopub.book.models import Chunk
from audiopub.jobs.models import ChapterRow, ChapterState, ChunkRow, ChunkState
from audiopub.jobs.store_json import times_json, times_of, words_json, words_of

CHAPTER_COLUMNS = (
    "job_id, idx, book_index, title, chars, state, audio_path, duration_s, synth_s, "
    "chars_per_s, rtf, stage_times_json, frames, sample_rate, levels_json"
)
CHUNK_COLUMNS = (
    "job_id, chapter_idx, idx, text, ends_paragraph, cache_key, state, audio_path, frames, "
    "duration_s, synth_s, provider, attempts, error, stage_times_json, sample_rate, wall_s, "
    "done_at, spoken, reused_from, clip_start, clip_frames, word_starts_json, clip_lead, voice"
)
INSERT_CHAPTER = (
    f"INSERT INTO chapters ({CHAPTER_COLUMNS}) "
    f"VALUES ({', '.join('?' * len(CHAPTER_COLUMNS.split(',')))})"
)
INSERT_CHUNK = (
    f"INSERT INTO chunks ({CHUNK_COLUMNS}) "
    f"VALUES ({', '.join('?' * len(CHUNK_COLUMNS.split(',')))})"
)
SELECT_CHUNKS = f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE job_id = ?"
SELECT_CHAPTERS = f"SELECT {CHAPTER_COLUMNS} FROM chapters WHERE job_id = ?"
# What a chapter's figures and audio are when it is not (or no longer) stitched.
CHAPTER_NOT_DONE = (
    "state = 'pending', audio_path = NULL, duration_s = NULL, synth_s = NULL, "
    "chars_per_s = NULL, rtf = NULL, stage_times_json = NULL, frames = NULL, "
    "sample_rate = NULL, levels_json = NULL"
)


def chapter_from_row(row: Sequence[Any]) -> ChapterRow:
    (
        job_id,
        idx,
        book_index,
        title,
        chars,
        state,
        audio_path,
        duration_s,
        synth_s,
        chars_per_s,
        rtf,
        stage_times_json,
        frames,
        sample_rate,
        levels_json,
    ) = row
    return ChapterRow(
        job_id=job_id,
        idx=idx,
        book_index=book_index,
        title=title,
        chars=chars,
        state=ChapterState(state),
        audio_path=audio_path,
        duration_s=duration_s,
        synth_s=synth_s,
        chars_per_s=chars_per_s,
        rtf=rtf,
        stage_times=times_of(stage_times_json),
        frames=frames,
        sample_rate=sample_rate,
        levels=json.loads(levels_json) if levels_json else {},
    )


def chunk_from_row(row: Sequence[Any]) -> ChunkRow:
    (
        job_id,
        chapter_idx,
        idx,
        text,
        ends_paragraph,
        cache_key,
        state,
        audio_path,
        frames,
        duration_s,
        synth_s,
        provider,
        attempts,
        error,
        stage_times_json,
        sample_rate,
        wall_s,
        done_at,
        spoken,
        reused_from,
        clip_start,
        clip_frames,
        word_starts_json,
        clip_lead,
        voice,
    ) = row
    return ChunkRow(
        job_id=job_id,
        chapter_idx=chapter_idx,
        idx=idx,
        text=text,
        ends_paragraph=bool(ends_paragraph),
        cache_key=cache_key,
        state=ChunkState(state),
        audio_path=audio_path,
        frames=frames,
        duration_s=duration_s,
        synth_s=synth_s,
        provider=provider,
        attempts=attempts,
        error=error,
        stage_times=times_of(stage_times_json),
        sample_rate=sample_rate,
        wall_s=wall_s,
        done_at=done_at,
        spoken=spoken or text,
        reused_from=reused_from,
        clip_start=clip_start,
        clip_frames=clip_frames,
        word_starts=words_of(word_starts_json),
        clip_lead=clip_lead,
        voice=voice or "",
    )


# --- a new plan, keeping what the old one finished -------------------------------------------

_Signature = tuple[str, tuple[tuple[str, bool], ...]]


def signature(title: str, keys: Sequence[str], chunks: Sequence[Chunk | ChunkRow]) -> _Signature:
    """What a chapter's audio depends on: its title, chunk audio and pauses, in order."""
    return title, tuple(zip(keys, (bool(c.ends_paragraph) for c in chunks)))


class DoneChapter:
    """A finished chapter of the old plan: its row, and its chunks' rows (with their clips)."""

    def __init__(self, row: ChapterRow, chunks: list[ChunkRow]) -> None:
        self.row = row
        self.chunks = chunks
        self.signature = signature(row.title, [c.cache_key for c in chunks], chunks)


def done_chapters(conn: sqlite3.Connection, job_id: str) -> dict[int, DoneChapter]:
    """idx → the job's done chapters (every chunk of which is done)."""
    chunks: dict[int, list[ChunkRow]] = {}
    for row in map(
        chunk_from_row, conn.execute(f"{SELECT_CHUNKS} ORDER BY chapter_idx, idx", (job_id,))
    ):
        chunks.setdefault(row.chapter_idx, []).append(row)
    return {
        chapter.idx: DoneChapter(chapter, chunks.get(chapter.idx, []))
        for chapter in map(
            chapter_from_row, conn.execute(f"{SELECT_CHAPTERS} AND state = 'done'", (job_id,))
        )
    }


def new_chapter_row(
    job_id: str, idx: int, title: str, chunks: Sequence[Chunk], done: ChapterRow | None
) -> tuple[Any, ...]:
    """A plan row; `done` is the old plan's finished chapter with the same signature, if any."""
    book_index = chunks[0].chapter_index if chunks else None
    chars = sum(c.char_count for c in chunks)
    if done is None:
        return (
            job_id,
            idx,
            book_index,
            title,
            chars,
            ChapterState.PENDING.value,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        )
    return (
        job_id,
        idx,
        book_index,
        title,
        chars,
        ChapterState.DONE.value,
        done.audio_path,
        done.duration_s,
        done.synth_s,
        done.chars_per_s,
        done.rtf,
        times_json(done.stage_times),
        done.frames,
        done.sample_rate,
        json.dumps(done.levels) if done.levels else None,
    )


def new_chunk_row(
    job_id: str,
    chapter_idx: int,
    idx: int,
    chunk: Chunk,
    key: str,
    done: ChunkRow | None,
    clip: ChunkRow | None,
) -> tuple[Any, ...]:
    """A plan row; `done` is a finished chunk of the old plan with the same key, if any, and
    `clip` the same chunk of a kept chapter, whose place in the chapter's audio stands."""
    clip_start, clip_frames, clip_lead = (
        (clip.clip_start, clip.clip_frames, clip.clip_lead) if clip else (None, None, None)
    )
    if done is None:
        return (
            job_id,
            chapter_idx,
            idx,
            chunk.text,
            chunk.ends_paragraph,
            key,
            ChunkState.PENDING.value,
            None,
            None,
            None,
            None,
            None,
            0,
            None,
            None,
            None,
            None,
            None,
            chunk.spoken,
            None,
            None,
            None,
            None,
            None,
            chunk.voice or None,
        )
    return (
        job_id,
        chapter_idx,
        idx,
        chunk.text,
        chunk.ends_paragraph,
        key,
        ChunkState.DONE.value,
        done.audio_path,
        done.frames,
        done.duration_s,
        done.synth_s,
        done.provider,
        done.attempts,
        None,
        times_json(done.stage_times),
        done.sample_rate,
        done.wall_s,
        done.done_at,
        chunk.spoken,
        done.reused_from,
        clip_start,
        clip_frames,
        words_json(done.word_starts),
        clip_lead,
        chunk.voice or None,
    )
