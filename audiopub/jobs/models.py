"""Plain data for durable jobs: states, settings, the rows the job store keeps, and cache keys.

A chunk's audio is keyed by `chunk_cache_key(text, settings)`: a hash over the text and every
setting that changes how it sounds. Same key → the finished audio can be reused; any change →
a new key, so stale audio is never picked up.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any

from audiopub import settings as defaults
from audiopub.book.lexicons.lexicon import Entry, entries_from_data, entries_to_data
from audiopub.book.models import chunk_chars
from audiopub.book.voicing import Voicing
from audiopub.tts.engine import SynthesisOptions


class JobState(str, Enum):
    """queued → running → done | failed | cancelled; `paused` holds a job out of the queue."""

    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def is_resumable(self) -> bool:
        """The job can be put back in the queue; finished chunks will be reused."""
        return self in (JobState.PAUSED, JobState.FAILED, JobState.CANCELLED)

    def can_become(self, new: JobState) -> bool:
        return new in _TRANSITIONS[self]


_TRANSITIONS: dict[JobState, frozenset[JobState]] = {
    JobState.QUEUED: frozenset({JobState.RUNNING, JobState.PAUSED, JobState.CANCELLED}),
    # running → queued is how an interrupted job (crash, restart) goes back in the queue.
    JobState.RUNNING: frozenset(
        {JobState.QUEUED, JobState.PAUSED, JobState.DONE, JobState.FAILED, JobState.CANCELLED}
    ),
    # Resuming always goes through the queue, so only the worker ever sets `running`.
    JobState.PAUSED: frozenset({JobState.QUEUED, JobState.CANCELLED}),
    JobState.FAILED: frozenset({JobState.QUEUED}),
    JobState.CANCELLED: frozenset({JobState.QUEUED}),
    # A finished book is final; start a new job to redo it. Only a deleted audiobook brings
    # its job back to the queue, to be made again from its saved audio (`JobQueue.remake`).
    JobState.DONE: frozenset(),
}


class ChunkState(str, Enum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"  # the last attempt raised; it is retried when the job runs again


class ChapterState(str, Enum):
    PENDING = "pending"
    DONE = "done"  # the chapter's audio file is written (its chunks are stitched)


@dataclass(frozen=True)
class Narration(SynthesisOptions):
    """What a person chooses to narrate with: an engine, its voice, the GPU or not, and how it
    sounds (speed, steps, seed, language: the engine contract's `SynthesisOptions`, validated
    there). Declared once, for a job's settings and the web UI's remembered choices."""

    engine: str = defaults.DEFAULT_ENGINE
    # A job's must be resolved (not None) before chunks are planned: "the first voice" can
    # change.
    voice: str | None = None
    use_gpu: bool = False

    def synthesis_options(self) -> SynthesisOptions:
        """The engine contract's part of these settings."""
        return SynthesisOptions(
            **{option.name: getattr(self, option.name) for option in fields(SynthesisOptions)}
        )


@dataclass(frozen=True)
class JobSettings(Narration):
    """How a job is narrated; stored as JSON with the job. `language` is the book's."""

    # Chunks per padded batch; None: AUDIOPUB_BATCH_SIZE, else the fastest for the device.
    batch_size: int | None = None
    chapters: tuple[int, ...] | None = None  # 1-based selection; None = every chapter
    # Identity of the model files (engine + file digest), computed by the caller: new model
    # files must never reuse audio made by the old ones.
    model_id: str = ""
    # The job's own pronunciation entries (`convert --lexicon`), first of every scope. They
    # change what is said, which the cache key covers; the key needs nothing more from them.
    lexicon: tuple[Entry, ...] = ()
    # Forms to make beside the book once it is finished (`export.forms.ConvertOutputs`
    # as data), from its audio: they change nothing spoken, so the cache key leaves them out.
    forms: Mapping[str, Any] | None = field(default=None, hash=False)
    # Hear every chunk made and speak again what came out wrong (`listen.proof_listening`).
    # None: not decided yet; `submission.resolve_settings` decides it once, at submission,
    # and the job keeps the decision for every run. It changes no audio the cache keeps.
    proof_listen: bool | None = None
    # The cast it speaks with (`convert --cast`): which quotations other voices read. Each
    # chunk's own voice goes into its cache key (`chunk_cache_key`), so the cast itself needs
    # no place in the key. None: the narrator reads everything.
    cast: Voicing | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        super().__post_init__()  # validates speed and steps with the engine contract's rules
        if isinstance(self.cast, Mapping):  # read from JSON
            object.__setattr__(self, "cast", Voicing.from_dict(self.cast))
        if self.batch_size is not None and not 1 <= self.batch_size <= defaults.MAX_BATCH_SIZE:
            raise ValueError(
                f"batch size must be 1-{defaults.MAX_BATCH_SIZE}, not {self.batch_size}"
            )
        if self.chapters is not None:
            object.__setattr__(self, "chapters", tuple(int(c) for c in self.chapters))
        # Read from JSON: a list of dicts.
        object.__setattr__(
            self,
            "lexicon",
            tuple(
                entry if isinstance(entry, Entry) else entries_from_data([entry])[0]
                for entry in self.lexicon
            ),
        )

    @property
    def narrator(self) -> str:
        """Who reads the book, as its tags and library files name the narrator."""
        return f"Audiopub ({self.engine.title()}, {self.voice})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "voice": self.voice,
            "speed": self.speed,
            "steps": self.steps,
            "seed": self.seed,
            "language": self.language,
            "use_gpu": self.use_gpu,
            "batch_size": self.batch_size,
            "chapters": list(self.chapters) if self.chapters is not None else None,
            "model_id": self.model_id,
            "lexicon": entries_to_data(self.lexicon),
            "forms": dict(self.forms) if self.forms is not None else None,
            "proof_listen": self.proof_listen,
            "cast": self.cast.to_dict() if self.cast is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobSettings:
        """Unknown keys are ignored and missing ones take defaults, so old rows still load;
        a job stored before proof-listening existed never listened."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known.setdefault("proof_listen", False)
        return cls(**known)  # __post_init__ turns the JSON list of chapters into a tuple

    def cache_namespace(self) -> dict[str, Any]:
        """The settings part of a chunk's cache key: everything that changes the audio.

        use_gpu, the batch size and the chapter selection are left out: they change where, how
        fast and what is spoken, not how a given chunk sounds (a batched chunk matches its
        solo audio within float rounding).
        """
        return {
            "engine": self.engine,
            "model_id": self.model_id,
            "voice": self.voice,
            "steps": int(self.steps),
            "speed": float(self.speed),  # 1 and 1.0 must give the same key
            "seed": self.seed,
            "language": self.language,
        }


def reading_voice(voice: str, narrator: str) -> str:
    """The voice that reads a chunk: its own, where the cast gives it to a character; no voice
    ("") means the narrator's, the job's own."""
    return voice or narrator


def chunk_cache_key(text: str, settings: JobSettings, voice: str = "") -> str:
    """32 hex chars naming a chunk's audio: sha256 of canonical JSON of text + settings.

    The text is hashed exactly as the engine receives it (the chunk's spoken form); normalising
    it again here could make two different inputs share audio. `voice`: the chunk's own, where
    the cast gives it to a character ("": the job's); its key is the one a job in that voice
    would give the text, so changing one character's voice changes only that character's keys.
    """
    if settings.voice is None:
        raise ValueError("Resolve the voice before computing cache keys: None is ambiguous")
    namespace = settings.cache_namespace()
    voice = reading_voice(voice, settings.voice)
    if voice != settings.voice:
        models = settings.cast.models if settings.cast is not None else {}
        if voice not in models:
            raise ValueError(f"The cast names no model for the voice {voice!r}")
        namespace.update(voice=voice, model_id=models[voice])
    payload = {"text": text, **namespace}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class Job:
    id: str
    state: JobState
    created_at: float  # Unix seconds
    updated_at: float
    started_at: float | None  # the first time it ran
    finished_at: float | None  # when it last reached done, failed or cancelled
    title: str
    author: str
    epub_path: Path  # the copy kept in the job's folder
    output_path: Path
    settings: JobSettings
    error: str | None
    device: str | None  # what the engine really ran on, e.g. "CPU" or "GPU (CUDA)"
    stage_times: dict[str, float] = field(default_factory=dict)  # job-wide stages, seconds
    # The most GPU memory its engine process held, MiB per device index, over all its runs.
    peak_vram_mb: dict[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ChapterRow:
    job_id: str
    idx: int  # 0-based position in the plan (narration order)
    book_index: int | None  # Chapter.index of the book chapter it narrates
    title: str
    chars: int
    state: ChapterState
    audio_path: str | None  # relative to the job's folder
    duration_s: float | None
    synth_s: float | None
    chars_per_s: float | None
    rtf: float | None
    stage_times: dict[str, float] = field(default_factory=dict)
    frames: int | None = None  # of its stitched audio, exactly
    sample_rate: int | None = None
    # Its audio's levels, "before" and "after" it was brought to the audiobook standard
    # (`audio.levels.Levels.to_dict()`); empty until stitched.
    levels: dict[str, dict[str, float | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class ChunkRow:
    job_id: str
    chapter_idx: int
    idx: int  # 0-based position within the chapter
    text: str
    ends_paragraph: bool
    cache_key: str
    state: ChunkState
    audio_path: str | None  # relative to the job's folder, e.g. "chunks/<cache_key>.flac"
    frames: int | None
    duration_s: float | None
    synth_s: float | None
    provider: str | None
    attempts: int
    error: str | None
    stage_times: dict[str, float] = field(default_factory=dict)  # engine seconds per stage
    sample_rate: int | None = None  # of its audio file, as the engine spoke it
    wall_s: float | None = None  # wall seconds its run spent on it (figures.Clock.WALL)
    done_at: float | None = None  # Unix seconds, when its audio was marked done
    spoken: str = ""  # what the engine reads (book.spoken); the cache key is made from it
    reused_from: str | None = None  # the job whose engine made this audio, if not this one
    # Where its speech lies in the chapter's stitched audio (frames at the chapter's rate,
    # silence trimmed, pauses excluded), once the chapter is stitched.
    clip_start: int | None = None
    clip_frames: int | None = None
    # Where each of the engine's words starts in the chunk's own audio (frames; see
    # `SynthesisResult.word_starts`), None where the engine did not say. They describe the
    # audio, so they go wherever it is reused.
    word_starts: tuple[int, ...] | None = None
    clip_lead: int | None = None  # frames of its audio cut before its clip (leading silence)
    voice: str = ""  # the voice that reads it, where the cast says; "": the job's voice

    @property
    def char_count(self) -> int:
        """Its characters as the book counts them (`book.models.Chunk.char_count`)."""
        return chunk_chars(self.text, self.ends_paragraph)

    @property
    def clip_word_starts(self) -> tuple[int, ...] | None:
        """The engine's word starts relative to the clip's first frame in the chapter (a word
        that starts in the trimmed silence starts with the clip), or None where unknown."""
        if self.word_starts is None or self.clip_lead is None or self.clip_frames is None:
            return None
        return tuple(
            min(max(0, start - self.clip_lead), self.clip_frames) for start in self.word_starts
        )


@dataclass(frozen=True)
class ChapterProgress:
    idx: int
    title: str
    state: ChapterState
    chunks_done: int
    chunks_total: int
    chars_done: int
    chars_total: int
    # The chapter's telemetry, once it is stitched (None/empty before).
    chars_per_s: float | None = None
    rtf: float | None = None
    stage_times: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class JobProgress:
    chunks_done: int
    chunks_total: int
    chars_done: int
    chars_total: int
    audio_s: float  # duration of the finished chunks
    synth_s: float  # engine time spent on the finished chunks (figures.Clock.ENGINE)
    chapters: tuple[ChapterProgress, ...]
    # Chunks finished since the moment `JobLedger.progress(since=...)` was asked about.
    made_chars: int = 0
    made_audio_s: float = 0.0
    wall_s: float = 0.0  # wall time the job's runs spent on the finished chunks (Clock.WALL)
    # Finished chunks whose audio another job had made (same text, same settings): they cost
    # this job no synthesis, so its speed counts only the rest (`spoken_chars`).
    reused_chunks: int = 0
    reused_chars: int = 0
    reused_audio_s: float = 0.0

    @property
    def spoken_chars(self) -> int:
        """Characters this job's own runs spoke (what `wall_s` was spent on)."""
        return self.chars_done - self.reused_chars

    @property
    def spoken_audio_s(self) -> float:
        return self.audio_s - self.reused_audio_s

    @property
    def fraction(self) -> float:
        """0..1 by characters, the unit that best tracks synthesis time."""
        return self.chars_done / self.chars_total if self.chars_total else 0.0
