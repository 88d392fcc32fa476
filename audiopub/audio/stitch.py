"""Chunk audio in, one chapter WAV out, written as it goes so memory stays flat.

    with ChapterWriter(path, sample_rate) as chapter:
        chapter.add_silence(CHAPTER_HEAD_S)
        for chunk, audio in spoken_chunks:
            chapter.add(audio, pause_after(chunk.ends_paragraph))
        chapter.add_silence(CHAPTER_PAUSE_S)

or, from chunk files, `stitch_chapter`.

The WAV is written under a temporary name beside `path` (`atomic.atomic_write`) and renamed to
`path` only when the `with` block ends without an exception, so a file at `path` is always a
complete chapter.

The room tone at a chapter's head and tail is digital silence, like every pause: synthetic
speech has no room to record, and ACX's noise-floor limit (at most -60 dB) is met by silence,
which `audio.levels` measures as no noise floor at all.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Final

import numpy as np
import soundfile as sf

from audiopub.atomic import atomic_write, remove_stale_temp_files
from audiopub.errors import AudiopubError, DiskFull
from audiopub.settings import (
    CHAPTER_HEAD_S,
    CHAPTER_PAUSE_S,
    PARAGRAPH_PAUSE_S,
    SENTENCE_PAUSE_S,
)

# Engines leave varying amounts of near-silence around a chunk; cutting it back to a fixed
# margin makes the pauses we insert the only pauses the listener hears.
SILENCE_THRESHOLD_DBFS: Final = -50.0
KEEP_SILENCE_S: Final = 0.02
# A few milliseconds of fade hides the click where a trimmed chunk meets digital silence.
FADE_S: Final = 0.005
# libsndfile reports a failed write as "System error", without its errno: a filesystem left
# with less free than this is taken to be full, which is what nearly always causes it.
NO_ROOM_BYTES: Final = 1 << 20


def pause_after(ends_paragraph: bool) -> float:
    """Seconds of silence to follow a chunk: longer at the end of a paragraph."""
    return PARAGRAPH_PAUSE_S if ends_paragraph else SENTENCE_PAUSE_S


@dataclass(frozen=True)
class StitchedChapter:
    frames: int  # the whole chapter file's, pauses included
    sample_rate: int
    clips: tuple[tuple[int, int], ...]  # each chunk's speech in it: (first frame, frames)
    # Each chunk's frames cut before its clip (its leading near-silence): a sample at `n` in a
    # chunk's own audio is at `clip start + n - lead` in the chapter's.
    leads: tuple[int, ...] = ()

    @property
    def duration_s(self) -> float:
        return self.frames / self.sample_rate


def head_frames(sample_rate: int) -> int:
    """Frames of room tone before a chapter's first words, as chapters are made now."""
    return round(CHAPTER_HEAD_S * sample_rate)


def stitch_chapter(
    chunks: Sequence[tuple[Path, bool]], sample_rate: int, path: Path, head: int | None = None
) -> StitchedChapter:
    """Write a chapter WAV at `path` from its chunk audio files in order, each with whether it
    ends a paragraph: room tone at the head (`head` frames; None: `head_frames`), each chunk
    trimmed and paused, and the chapter pause at the end. The same chunks and head give the
    same chapter, to the sample, so a chapter can be made again from kept chunk audio."""
    clips, leads = [], []
    with ChapterWriter(path, sample_rate) as writer:
        writer.add_silence_frames(head_frames(sample_rate) if head is None else head)
        for chunk_path, ends_paragraph in chunks:
            samples, rate = sf.read(chunk_path, dtype="float32")
            if rate != sample_rate:  # one voice per job: only damaged files get here
                raise AudiopubError(
                    f"{chunk_path.name} is at {rate} Hz, the rest of its "
                    f"chapter at {sample_rate} Hz"
                )
            clips.append(writer.add(samples, pause_after(ends_paragraph)))
            leads.append(writer.last_lead)
        writer.add_silence(CHAPTER_PAUSE_S)
    return StitchedChapter(writer.frames, sample_rate, tuple(clips), tuple(leads))


def trim_silence(
    samples: np.ndarray,
    sample_rate: int,
    threshold_dbfs: float = SILENCE_THRESHOLD_DBFS,
    keep_s: float = KEEP_SILENCE_S,
) -> np.ndarray:
    """Cut leading and trailing near-silence, keeping `keep_s` seconds of it on each side.

    Audio that never rises above the threshold comes back empty.
    """
    start, end = speech_bounds(samples, sample_rate, threshold_dbfs, keep_s)
    return np.asarray(samples)[start:end]


def speech_bounds(
    samples: np.ndarray,
    sample_rate: int,
    threshold_dbfs: float = SILENCE_THRESHOLD_DBFS,
    keep_s: float = KEEP_SILENCE_S,
) -> tuple[int, int]:
    """Where `trim_silence` cuts: (first frame kept, frame after the last kept); (0, 0) for
    audio that never rises above the threshold."""
    samples = np.asarray(samples)
    threshold = 10.0 ** (threshold_dbfs / 20.0)
    loud = np.flatnonzero(np.abs(samples) > threshold)
    if loud.size == 0:
        return 0, 0
    keep = round(keep_s * sample_rate)
    return max(0, int(loud[0]) - keep), min(len(samples), int(loud[-1]) + 1 + keep)


def fade_edges(samples: np.ndarray, sample_rate: int, fade_s: float = FADE_S) -> np.ndarray:
    """Linear fade-in and fade-out of `fade_s` seconds (returns a copy)."""
    out = np.array(samples, dtype=np.float32)
    n = round(fade_s * sample_rate)
    if n < 1 or len(out) < 2 * n:
        return out
    ramp = np.linspace(0.0, 1.0, n, endpoint=False, dtype=np.float32)
    out[:n] *= ramp
    out[-n:] *= ramp[::-1]
    return out


def _as_mono_float32(samples: np.ndarray) -> np.ndarray:
    """Engine output as a 1-D float32 array in [-1, 1]; NaN/inf would otherwise become noise."""
    audio = np.asarray(samples, dtype=np.float32)
    if audio.ndim > 1:
        audio = audio.squeeze()
    if audio.ndim != 1:
        raise ValueError(f"expected mono audio (1-D samples), got shape {np.shape(samples)}")
    audio = np.nan_to_num(audio, nan=0.0, posinf=1.0, neginf=-1.0)
    return np.clip(audio, -1.0, 1.0)


class ChapterWriter:
    """Writes one chapter as 16-bit mono PCM WAV, chunk by chunk. Use it as a context manager.

    `trim=True` (the default) trims each chunk's edge silence and fades its edges, so the
    pauses given to `add` are what the listener hears; `trim=False` writes samples as given
    (still clipped to [-1, 1]).
    """

    def __init__(self, path: Path, sample_rate: int, *, trim: bool = True) -> None:
        if sample_rate <= 0:
            raise ValueError(f"sample rate must be positive, got {sample_rate}")
        self.path = Path(path)
        self.temp_path: Path | None = None  # where the WAV is written inside the `with` block
        self.sample_rate = sample_rate
        self.trim = trim
        self._frames = 0
        self.last_lead = 0  # frames `add` cut from the head of the last chunk
        self._file: sf.SoundFile | None = None
        self._closing: ExitStack | None = None  # closes the WAV, then renames or removes it

    @property
    def frames(self) -> int:
        """Samples written so far (chunks and silence)."""
        return self._frames

    @property
    def duration_s(self) -> float:
        """Exact length written so far, from the sample count."""
        return self._frames / self.sample_rate

    def __enter__(self) -> ChapterWriter:
        # An attempt cut short by a crash may have left its temp file; this writer replaces it.
        remove_stale_temp_files(self.path.parent, self.path.name)
        with ExitStack() as stack:
            self.temp_path = stack.enter_context(atomic_write(self.path))
            self._file = sf.SoundFile(
                self.temp_path,
                mode="w",
                samplerate=self.sample_rate,
                channels=1,
                subtype="PCM_16",
                format="WAV",
            )
            stack.callback(self._close_file)
            self._closing = stack.pop_all()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        closing, self._closing = self._closing, None
        if closing is not None:
            closing.__exit__(exc_type, exc, tb)

    def _close_file(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            file.close()

    def add(self, samples: np.ndarray, pause_after_s: float = 0.0) -> tuple[int, int]:
        """Append one chunk of audio, then `pause_after_s` seconds of silence; returns where
        the chunk's audio lies in the chapter, exactly: (first frame, frames), silence
        trimmed and pause excluded."""
        audio = _as_mono_float32(samples)
        self.last_lead = 0
        if self.trim:
            self.last_lead, end = speech_bounds(audio, self.sample_rate)
            audio = fade_edges(audio[self.last_lead : end], self.sample_rate)
        start = self._frames
        self._write(audio)
        self.add_silence(pause_after_s)
        return start, len(audio)

    def add_silence(self, seconds: float) -> None:
        """Append `seconds` of digital silence (rounded to the nearest sample)."""
        if seconds < 0:
            raise ValueError(f"silence can't be negative, got {seconds}")
        self.add_silence_frames(round(seconds * self.sample_rate))

    def add_silence_frames(self, frames: int) -> None:
        """Append exactly `frames` samples of digital silence."""
        if frames < 0:
            raise ValueError(f"silence can't be negative, got {frames} frames")
        self._write(np.zeros(frames, dtype=np.float32))

    def _write(self, audio: np.ndarray) -> None:
        if self._file is None:
            raise RuntimeError("ChapterWriter must be used inside a `with` block")
        if len(audio):
            try:
                self._file.write(audio)
            except sf.LibsndfileError as error:
                folder = self.path.parent
                if shutil.disk_usage(folder).free < NO_ROOM_BYTES:
                    raise DiskFull(
                        f"The disk filled up while writing {self.path.name}.", folder
                    ) from error
                raise
            self._frames += len(audio)
