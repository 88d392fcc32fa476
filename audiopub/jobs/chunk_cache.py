"""Chunk audio on disk: `<job dir>/chunks/<cache key>.wav`, written atomically, checked on trust.

A chunk file is trusted only if the store marks its key done *and* the file reads back with the
recorded number of frames. Files are written with `atomic.atomic_write`, so a crash leaves
either the old state or the complete new file, plus at worst a stray temp file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from audiopub import atomic
from audiopub.jobs.models import ChapterRow, ChapterState, ChunkRow
from audiopub.jobs.store import JobStore

CHUNKS_DIR = "chunks"
# Chapter rows store seconds, not frames: allow rounding, catch truncation.
CHAPTER_DURATION_TOLERANCE_S = 0.01


def chunk_relpath(cache_key: str) -> str:
    """Where a chunk's audio lives, relative to the job's folder (what the store records)."""
    return f"{CHUNKS_DIR}/{cache_key}.wav"


def chunk_path(job_dir: Path, cache_key: str) -> Path:
    return Path(job_dir) / chunk_relpath(cache_key)


def write_chunk(path: Path, samples: np.ndarray, sample_rate: int) -> int:
    """Write mono audio as 16-bit WAV at `path`, atomically; returns the frame count."""
    samples = np.asarray(samples, dtype=np.float32)
    if samples.ndim != 1:
        raise ValueError(f"Chunk audio must be mono (1-D), got shape {samples.shape}")
    # Float samples beyond ±1 would wrap around in PCM; clip them explicitly.
    samples = np.clip(samples, -1.0, 1.0)
    with atomic.atomic_write(Path(path)) as temp:
        sf.write(temp, samples, sample_rate, subtype="PCM_16", format="WAV")
    return len(samples)


def chunk_is_valid(path: Path, expected_frames: int | None) -> bool:
    """The file exists, has a readable WAV header and exactly the expected frames."""
    if expected_frames is None:
        return False
    try:
        info = sf.info(str(path))
    except (OSError, sf.SoundFileError):
        return False
    # libsndfile counts the frames actually present, so a truncated file comes up short.
    return info.frames == expected_frames


def remove_stale_temp_files(folder: Path) -> list[Path]:
    """Delete temp files left by interrupted writes. Call before the worker starts writing."""
    return atomic.remove_stale_temp_files(folder)


def verify_done_chunks(store: JobStore, job_id: str, job_dir: Path) -> list[ChunkRow]:
    """Reset to pending every done chunk whose file is missing or invalid; returns those.

    Run when a job is (re)started, before its pending chunks are listed.
    """
    bad = [
        row for row in store.done_chunks(job_id)
        if row.audio_path is None or not chunk_is_valid(Path(job_dir) / row.audio_path, row.frames)
    ]
    store.reset_chunks(job_id, (row.cache_key for row in bad))
    return bad


def verify_done_chapters(store: JobStore, job_id: str, job_dir: Path) -> list[ChapterRow]:
    """Reset to pending every done chapter whose audio is missing, unreadable or too short."""
    bad = [
        chapter for chapter in store.chapters(job_id)
        if chapter.state is ChapterState.DONE and not _chapter_is_valid(job_dir, chapter)
    ]
    for chapter in bad:
        store.reset_chapter(job_id, chapter.idx)
    return bad


def _chapter_is_valid(job_dir: Path, chapter: ChapterRow) -> bool:
    if chapter.audio_path is None or chapter.duration_s is None:
        return False
    try:
        info = sf.info(str(Path(job_dir) / chapter.audio_path))
    except (OSError, sf.SoundFileError):
        return False
    return abs(info.duration - chapter.duration_s) <= CHAPTER_DURATION_TOLERANCE_S


def remove_unused_chunk_files(store: JobStore, job_id: str, job_dir: Path) -> list[Path]:
    """Delete chunk files no done chunk refers to (left by changed settings or plans).

    Only while no worker is running the job: a file written but not yet marked would go too.
    """
    folder = Path(job_dir) / CHUNKS_DIR
    if not folder.is_dir():
        return []
    used = {(Path(job_dir) / row.audio_path).resolve()
            for row in store.done_chunks(job_id) if row.audio_path}
    unused = [p for p in folder.glob("*.wav") if p.resolve() not in used]
    for p in unused:
        p.unlink(missing_ok=True)
    return unused
