"""The engine contract: the seam between the pipeline and every TTS engine.

An engine declares what it can do (voices and their sample rates, the longest chunk it reads
well, whether it uses steps) and which execution provider it is *actually* running on, then
turns a batch of text chunks into one `SynthesisResult` each: the audio, its own sample rate and
the engine's seconds per stage for that chunk. An engine keeps no per-call state, so one engine
object can serve a preview and a job at the same time.

Synthesis is two calls, so the text front end (CPU) of the next batch can run while the model
speaks this one (on a GPU): `prepare` turns texts into the model's input, `speak` runs one
padded batch of prepared texts. `synthesize` does both, grouping its texts by length.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, runtime_checkable

import numpy as np

from audiopub import settings
from audiopub.errors import EngineUnavailable
from audiopub.tts.batching import BatchLimits, plan_batches

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SynthesisOptions:
    """Everything that changes how a chunk sounds, besides the text and the voice."""

    speed: float = settings.DEFAULT_SPEED
    steps: int = settings.DEFAULT_STEPS  # ignored by engines whose `uses_steps` is False
    seed: int | None = None  # fixes the noise so a chunk can be reproduced
    language: str | None = None  # BCP 47 tag of the book, e.g. "fr-FR", for multilingual models

    def __post_init__(self) -> None:
        if not settings.MIN_SPEED <= self.speed <= settings.MAX_SPEED:
            raise ValueError(
                f"speed must be between {settings.MIN_SPEED} and {settings.MAX_SPEED}, "
                f"not {self.speed}"
            )
        if not settings.MIN_STEPS <= self.steps <= settings.MAX_STEPS:
            raise ValueError(
                f"steps must be between {settings.MIN_STEPS} and {settings.MAX_STEPS}, "
                f"not {self.steps}"
            )


# A voice's gender as its engine knows it (the cast gives characters voices of their own).
VoiceGender = Literal["female", "male"]


# Between a multi-speaker model's name and its speaker's in a voice id: en_GB-vctk-medium#p239.
# Piper's voice and speaker names never hold it (letters, digits, "_" and "-"). It needs no
# quoting as a shell argument ("#" starts a comment only at the start of a word), in JSON, the
# job store or an HTML select's value, and the chunk cache hashes the id, so it never reaches a
# file name; ":" means an engine in the catalogue ("piper:KEY") and "/" a path.
SPEAKER_SEPARATOR: Final = "#"


@dataclass(frozen=True)
class Voice:
    id: str  # what the user passes as --voice
    name: str  # what a person reads in a list
    language: str  # BCP 47-ish tag, e.g. "en-US"; "multi" for multilingual voices
    sample_rate: int  # of the audio this voice speaks (Piper voices differ: 16 or 22.05 kHz)
    # What a multilingual voice reads, as primary subtags ("en", "ko"); empty: `language` only.
    languages: tuple[str, ...] = ()
    speaker: str | None = None  # one speaker of a multi-speaker model: id is MODEL#SPEAKER
    gender: VoiceGender | None = None  # as its engine knows it; None: unknown (Piper's, a mix)
    from_recording: bool = False  # made from a reference recording of a person, not trained in

    def speaks(self, tag: str) -> bool:
        """Whether it reads the language of this tag ("fr-CA", "pt_BR", "de")."""
        code = _primary_subtag(tag)
        if self.languages:
            return code in self.languages
        return code == _primary_subtag(self.language)

    def describe_languages(self) -> str:
        """ "en-US", or a multilingual voice's list: "en, ko, es, pt, fr"."""
        return ", ".join(self.languages) if self.languages else self.language

    @property
    def model(self) -> str:
        """The model's name: the id without its speaker."""
        return split_speaker(self.id)[0]


def _primary_subtag(tag: str) -> str:
    return tag.strip().replace("_", "-").split("-", 1)[0].lower()


def speaker_voice_id(model: str, speaker: str) -> str:
    """The voice id of one speaker of a multi-speaker model."""
    return f"{model}{SPEAKER_SEPARATOR}{speaker}"


def split_speaker(voice_id: str) -> tuple[str, str | None]:
    """(model, speaker) of a voice id; the speaker is None for a single-speaker voice."""
    model, separator, speaker = voice_id.partition(SPEAKER_SEPARATOR)
    return model, speaker if separator else None


@dataclass(frozen=True)
class SynthesisResult:
    """One chunk as an engine spoke it."""

    audio: np.ndarray  # mono float32, cut at the chunk's exact length
    sample_rate: int
    # Engine seconds per stage ("load", "phonemes", "model", "step_loop", ...) spent on this
    # chunk; a batch's shared stages are shared out by text length. Stages in the engine's order.
    stage_seconds: dict[str, float] = field(default_factory=dict)
    # The sample in `audio` where each word of the text starts, as the engine's text front end
    # split it into words (espeak's words, for Piper: "I am" may be one, "forty-two" is one),
    # in order. Exact where known: the model's own durations, not an estimate. None where the
    # engine does not say (Supertonic, a Piper graph that does not expose its durations).
    word_starts: tuple[int, ...] | None = None

    @property
    def frames(self) -> int:
        return len(self.audio)

    @property
    def duration_s(self) -> float:
        return len(self.audio) / self.sample_rate

    @property
    def engine_s(self) -> float:
        """All the engine time this chunk cost."""
        return sum(self.stage_seconds.values())


@dataclass(frozen=True)
class PreparedText:
    """One text as the model takes it, made by `Engine.prepare`."""

    text: str
    length: int  # the model's input length (phoneme ids, characters): what a batch pads
    data: Any  # the engine's own input for this text
    seconds: float  # front-end time spent on it


@dataclass(frozen=True)
class DeviceReport:
    """Which execution provider a session really uses, and why it differs from the request."""

    requested_gpu: bool
    provider: str  # e.g. "CUDAExecutionProvider" or "CPUExecutionProvider"
    fallback_reason: str | None = None  # set when a GPU was asked for but the CPU runs
    device_id: int | None = None  # the CUDA device index when on a GPU; None on the CPU

    @property
    def on_gpu(self) -> bool:
        return self.provider != "CPUExecutionProvider"

    def describe(self) -> str:
        """One line for people: what runs, and why not the GPU if one was asked for."""
        where = "CPU"
        if self.on_gpu:
            # Device 0 is the only one most machines have: naming it would only add noise.
            where = f"GPU {self.device_id} (CUDA)" if self.device_id else "GPU (CUDA)"
        if self.requested_gpu and not self.on_gpu:
            why = self.fallback_reason or "unknown reason"
            return f"{where} — GPU requested but unavailable: {why}"
        return where


@runtime_checkable
class Engine(Protocol):
    """What the pipeline needs from a TTS engine."""

    name: str
    max_chunk_chars: int  # the longest chunk the engine reads well
    uses_steps: bool
    batch_size: int  # chunks per padded batch on the CPU, where it is fastest (1: no batching)

    def voices(self) -> list[Voice]:
        """Voices available now (engines may rescan their folder on each call)."""
        ...

    @property
    def device(self) -> DeviceReport:
        """The provider the loaded sessions actually run on."""
        ...

    def model_id(self, voice: str) -> str:
        """Identity of the model files behind `voice`: it changes when the files change, so
        cached audio made by other files is never reused."""
        ...

    def phoneme_symbols(self, voice: str) -> frozenset[str] | None:
        """The phoneme symbols `voice` takes inside a chunk's text (between the marks of
        `book.lexicons.lexicon`), or None when it takes no phonemes."""
        ...

    def prepare(
        self, texts: Sequence[str], voice: str, options: SynthesisOptions
    ) -> list[PreparedText]:
        """The text front end: each text as the model's input (no model runs)."""
        ...

    def speak(
        self, prepared: Sequence[PreparedText], voice: str, options: SynthesisOptions
    ) -> list[SynthesisResult]:
        """Run the model once on these texts, padded to the longest; one result per text, each
        cut at its exact length."""
        ...

    def synthesize(
        self, texts: Sequence[str], voice: str, options: SynthesisOptions
    ) -> list[SynthesisResult]:
        """Speak chunks (prepare, then speak them in batches by length); one result per text,
        in order."""
        ...


def synthesize_in_batches(
    engine: Engine, texts: Sequence[str], voice: str, options: SynthesisOptions, limits: BatchLimits
) -> list[SynthesisResult]:
    """`engine.synthesize` for most engines: prepare every text, then speak them in batches of
    similar length within `limits`."""
    prepared = engine.prepare(texts, voice, options)
    results: list[SynthesisResult | None] = [None] * len(prepared)
    for batch in plan_batches([item.length for item in prepared], limits):
        spoken = engine.speak([prepared[i] for i in batch], voice, options)
        for index, result in zip(batch, spoken, strict=True):
            results[index] = result
    return [result for result in results if result is not None]


def warm_up(engine: Engine, voice: str) -> None:
    """Load what `engine` needs to speak `voice` now, not in a job's first chunk (whose time,
    and every figure made of it, would hold it): Piper makes a voice's session on first use;
    engines that load their graphs when they are made have nothing left to load."""
    load = getattr(engine, "load_voice", None)
    if callable(load):
        load(voice)


def device_for(engine: Engine, voice: str | None) -> DeviceReport:
    """Where `engine` speaks `voice`: asked of the voice itself where the engine can say
    (Piper loads one session per voice, and loading another to tell would put it on the GPU
    for nothing), else the engine's device."""
    probe = getattr(engine, "device_for", None)
    return probe(voice) if voice is not None and callable(probe) else engine.device


def noise_seeds(seed: int | None, count: int) -> list[int]:
    """The noise seed of each of `count` texts: the job's seed for every one, so a chunk sounds
    the same in any batch, or a fresh one each (logged, so a chunk can be reproduced)."""
    if seed is not None:
        return [seed % 2**32] * count
    fresh = [int(value) for value in np.random.default_rng().integers(0, 2**32, size=count)]
    log.debug("noise seeds: %s", fresh)
    return fresh


def voice_of(engine: Engine, voice_id: str) -> Voice:
    """The engine's voice with this id; EngineUnavailable names the ones there are. An engine
    that composes voices (Kokoro's mixes) says what a composed id is with its own `voice`."""
    compose = getattr(engine, "voice", None)
    if callable(compose):
        return compose(voice_id)
    voices = engine.voices()
    for voice in voices:
        if voice.id == voice_id:
            return voice
    raise EngineUnavailable(
        f"Unknown {engine.name} voice {voice_id!r}; available: "
        f"{', '.join(v.id for v in voices) or 'none'}"
    )


class StageClock:
    """Seconds per stage for one call: `t = clock.lap("a", t); t = clock.lap("b", t)`."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def lap(self, stage: str, since: float) -> float:
        """Add the time since `since` (a perf_counter reading) to `stage`; returns the reading
        taken now, so consecutive stages chain."""
        now = time.perf_counter()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + (now - since)
        return now

    def shared(self, weights: Sequence[int]) -> list[dict[str, float]]:
        """These seconds shared out over a batch's items in proportion to `weights` (their text
        lengths): what each item cost, near enough."""
        total = sum(weights) or 1
        return [
            {stage: seconds * weight / total for stage, seconds in self.seconds.items()}
            for weight in weights
        ]
