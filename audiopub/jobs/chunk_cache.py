"""Chunk audio on disk: `<job dir>/chunks/<cache key>.flac`, written atomically, checked on trust.

A chunk file is trusted only if the store marks its key done *and* the file reads back with the
recorded number of frames. Files are written with `atomic.atomic_write`, so a crash leaves
either the old state or the complete new file, plus at worst a stray temp file.

Chunk audio outlives its job's run: a finished job keeps it (unless
`settings.keep_chunk_audio()` says otherwise), and a job whose chunk has the key of a done
chunk of another job shares that audio through a hard link instead of speaking it again
(`reuse_other_jobs_audio`): the key covers the words said and every setting that shapes the
sound, so converting a book again after editing one lexicon entry speaks only the chunks with
that word. 16-bit FLAC: lossless, and less than half the size of WAV for speech, which matters
for audio that is kept.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import soundfile as sf

from audiopub import atomic
from audiopub.jobs.models import ChapterRow, ChapterState, ChunkRow
from audiopub.jobs.store import JobStore

CHUNKS_DIR = "chunks"
CHUNK_SUFFIX = ".flac"
# Chapter rows store seconds, not frames: allow rounding, catch truncation.
CHAPTER_DURATION_TOLERANCE_S = 0.01
_TAIL_FRAMES = 64  # decoded at the end of a chunk file to tell it is whole


def chunk_relpath(cache_key: str) -> str:
    """Where a chunk's audio lives, relative to the job's folder (what the store records)."""
    return f"{CHUNKS_DIR}/{cache_key}{CHUNK_SUFFIX}"


def chunk_path(job_dir: Path, cache_key: str) -> Path:
    return Path(job_dir) / chunk_relpath(cache_key)


def chunks_folder(job_dir: Path) -> Path:
    """The job's folder of chunk audio."""
    return Path(job_dir) / CHUNKS_DIR


def take_key(cache_key: str, take: int, piece: int) -> str:
    """What a piece of a chunk's retake (`listen.retakes`) is spoken under: its file is
    `chunk_path(job_dir, take_key(...))`, beside the chunk's own, and is removed once read;
    one a run left behind is no done chunk's, so `remove_unused_chunk_files` removes it."""
    return f"{cache_key}.take{take}.{piece}"


def write_chunk(path: Path, samples: np.ndarray, sample_rate: int) -> int:
    """Write mono audio as 16-bit FLAC at `path`, atomically; returns the frame count."""
    samples = np.asarray(samples, dtype=np.float32)
    if samples.ndim != 1:
        raise ValueError(f"Chunk audio must be mono (1-D), got shape {samples.shape}")
    # Float samples beyond ±1 would wrap around in PCM; clip them explicitly.
    samples = np.clip(samples, -1.0, 1.0)
    # Encoded in memory, then written by Python: a full disk is then an OSError that names
    # its cause (ENOSPC), where libsndfile writing the file says only "System error".
    encoded = io.BytesIO()
    sf.write(encoded, samples, sample_rate, subtype="PCM_16", format="FLAC")
    with atomic.atomic_write(Path(path)) as temp:
        temp.write_bytes(encoded.getbuffer())
    return len(samples)


def chunk_is_valid(path: Path, expected_frames: int | None) -> bool:
    """The file exists, reads as audio and has exactly the expected frames, to its end."""
    if expected_frames is None:
        return False
    try:
        with sf.SoundFile(str(path)) as audio:
            if audio.frames != expected_frames:
                return False
            # A WAV's frame count comes from its size, a FLAC's from its header: a FLAC cut
            # short still claims every frame, and only decoding its last ones tells.
            tail = min(_TAIL_FRAMES, expected_frames)
            audio.seek(expected_frames - tail)
            return len(audio.read(tail)) == tail
    except (OSError, RuntimeError, sf.SoundFileError):
        return False


def remove_stale_temp_files(folder: Path) -> list[Path]:
    """Delete temp files left by interrupted writes. Call before the worker starts writing."""
    return atomic.remove_stale_temp_files(folder)


def verify_done_chunks(store: JobStore, job_id: str, job_dir: Path) -> list[ChunkRow]:
    """Reset to pending every done chunk whose file is missing or invalid; returns those.

    Run when a job is (re)started, before its pending chunks are listed.
    """
    bad = [
        row
        for row in store.ledger.done_chunks(job_id)
        if row.audio_path is None or not chunk_is_valid(Path(job_dir) / row.audio_path, row.frames)
    ]
    store.ledger.reset_chunks(job_id, (row.cache_key for row in bad))
    return bad


def verify_done_chapters(store: JobStore, job_id: str, job_dir: Path) -> list[ChapterRow]:
    """Reset to pending every done chapter whose audio is missing, unreadable or too short."""
    bad = [
        chapter
        for chapter in store.ledger.chapters(job_id)
        if chapter.state is ChapterState.DONE and not _chapter_is_valid(job_dir, chapter)
    ]
    for chapter in bad:
        store.ledger.reset_chapter(job_id, chapter.idx)
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
    folder = chunks_folder(job_dir)
    if not folder.is_dir():
        return []
    used = {
        (Path(job_dir) / row.audio_path).resolve()
        for row in store.ledger.done_chunks(job_id)
        if row.audio_path
    }
    # Any audio file: jobs from before chunks were FLAC recorded WAV files.
    unused = [
        p
        for p in folder.iterdir()
        if p.suffix in (".wav", CHUNK_SUFFIX) and p.resolve() not in used
    ]
    for p in unused:
        p.unlink(missing_ok=True)
    return unused


def reuse_other_jobs_audio(store: JobStore, job_id: str, job_dir: Path) -> int:
    """Mark done every pending chunk whose key another job has made, sharing its audio file
    (a hard link, or a copy across filesystems); returns how many chunks were marked.

    Run when a job starts, after its own done chunks are verified. A file that is gone or
    damaged in the other job is simply not reused.
    """
    pending = store.ledger.pending_chunks(job_id)
    reused = []
    for key, source in store.ledger.done_elsewhere(job_id, (c.cache_key for c in pending)).items():
        assert source.audio_path is not None  # done chunks have audio
        origin = store.job_dir(source.job_id) / source.audio_path
        if not chunk_is_valid(origin, source.frames):
            continue
        # Same name as a chunk this job makes, keeping the origin's format (WAV or FLAC).
        relpath = f"{CHUNKS_DIR}/{key}{origin.suffix}"
        try:
            atomic.link_or_copy(origin, Path(job_dir) / relpath)
        except FileNotFoundError:
            continue  # the other job was deleted meanwhile
        reused.append((source, relpath))
    return store.ledger.mark_chunks_reused(job_id, reused) if reused else 0
