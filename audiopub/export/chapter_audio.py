"""A finished book's chapter audio, lossless, for exports: kept, or made again from its chunks.

A finished job keeps its chunk audio (`jobs.chunk_cache`) and where each chunk lies in its
chapter (`export.timeline`); its chapter WAVs are removed when the book is written, because
`audio.stitch.stitch_chapter` makes exactly the same chapter again from the same chunks in
seconds. Each chapter made again is checked against the frame count recorded when the book was
made, so exported files and exported timings can never disagree.

A chapter is made again with the room tone at its head that it was made with, which is where
its first chunk's speech begins: books made before chapters had a head have none, and their
stored timings say so.
"""

from __future__ import annotations

from pathlib import Path

import soundfile as sf

from audiopub.audio.stitch import stitch_chapter
from audiopub.errors import AudiopubError
from audiopub.jobs.chunk_cache import chunk_is_valid
from audiopub.jobs.models import ChapterRow, ChunkRow, JobState
from audiopub.jobs.store import JobStore
from audiopub.settings import CHAPTER_PAUSE_S


def chapter_wavs(store: JobStore, job_id: str, folder: Path) -> list[Path]:
    """The finished book's chapter WAVs in order: the job's own where it kept them, else made
    again from its chunk audio into `folder`. AudiopubError if the audio is gone."""
    job = store.queue.get_job(job_id)
    if job.state is not JobState.DONE:
        raise AudiopubError(
            f"“{job.title}” is {job.state.value}: only a finished book can be exported"
        )
    job_dir = store.job_dir(job_id)
    wavs = []
    for chapter in store.ledger.chapters(job_id):
        kept = job_dir / chapter.audio_path if chapter.audio_path else None
        if kept is not None and _has_frames(kept, chapter.frames):
            wavs.append(kept)
        else:
            wavs.append(_stitch_again(store, job_id, chapter, folder))
    return wavs


def _stitch_again(store: JobStore, job_id: str, chapter: ChapterRow, folder: Path) -> Path:
    job_dir = store.job_dir(job_id)
    chunks = store.ledger.chapter_chunks(job_id, chapter.idx)
    if (
        chapter.frames is None
        or chapter.sample_rate is None
        or any(c.clip_start is None for c in chunks)
    ):
        raise AudiopubError(
            "This book was made before Audiopub kept its timings: convert it "
            "again (the audio already made is reused)"
        )
    if not all(c.audio_path and chunk_is_valid(job_dir / c.audio_path, c.frames) for c in chunks):
        raise AudiopubError(
            f"The audio of chapter {chapter.idx + 1} (“{chapter.title}”) was not kept "
            "(AUDIOPUB_KEEP_CHUNK_AUDIO=0 removes it when a job finishes): convert the book "
            "again to export it"
        )
    path = Path(folder) / f"{chapter.idx:04d}.wav"
    stitched = stitch_chapter(
        [
            (job_dir / c.audio_path, c.ends_paragraph)  # type: ignore[operator]
            for c in chunks
        ],
        chapter.sample_rate,
        path,
        head=_head_made_with(chapter, chunks),
    )
    if stitched.frames != chapter.frames:
        raise AudiopubError(
            f"Chapter {chapter.idx + 1} came out {stitched.frames} frames long made again, "
            f"not {chapter.frames} as in the book: convert the book again to export it"
        )
    return path


def _head_made_with(chapter: ChapterRow, chunks: list[ChunkRow]) -> int:
    """Frames of room tone the chapter was made with before its first words: where its first
    chunk's speech starts or, in a chapter with no words, what its tail pause leaves."""
    if chunks:
        return chunks[0].clip_start  # type: ignore[return-value]  # checked by the caller
    tail = round(CHAPTER_PAUSE_S * chapter.sample_rate)  # type: ignore[operator]
    return max(0, chapter.frames - tail)  # type: ignore[operator]


def _has_frames(path: Path, frames: int | None) -> bool:
    try:
        return frames is not None and sf.info(str(path)).frames == frames
    except (OSError, RuntimeError):
        return False
