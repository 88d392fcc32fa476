"""The engine contract: the seam between the pipeline and every TTS engine.

An engine declares what it can do (sample rate, voices, the longest chunk it reads well,
whether it uses steps) and which execution provider it is *actually* running on, then turns a
batch of text chunks into float32 waveforms.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from audiopub import settings


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


@dataclass(frozen=True)
class Voice:
    id: str  # what the user passes as --voice
    name: str  # what a person reads in a list
    language: str  # BCP 47-ish tag, e.g. "en-US"; "multi" for multilingual voices


@dataclass(frozen=True)
class DeviceReport:
    """Which execution provider a session really uses, and why it differs from the request."""

    requested_gpu: bool
    provider: str  # e.g. "CUDAExecutionProvider" or "CPUExecutionProvider"
    fallback_reason: str | None = None  # set when a GPU was asked for but the CPU runs

    @property
    def on_gpu(self) -> bool:
        return self.provider != "CPUExecutionProvider"

    def describe(self) -> str:
        """One line for people: what runs, and why not the GPU if one was asked for."""
        where = "GPU (CUDA)" if self.on_gpu else "CPU"
        if self.requested_gpu and not self.on_gpu:
            return f"{where} — GPU requested but unavailable: {self.fallback_reason or 'unknown reason'}"
        return where


@runtime_checkable
class Engine(Protocol):
    """What the pipeline needs from a TTS engine."""

    name: str
    sample_rate: int
    max_chunk_chars: int  # the longest chunk the engine reads well
    uses_steps: bool
    batch_size: int  # chunks worth passing in one synthesize() call (1: it loops anyway)
    # Seconds spent per stage ("phonemes", "model", "step_loop", ...) since the engine was made;
    # a benchmark reads the difference around a call. Only ever added to, never reset; a stage
    # may appear late (Piper's "load", when its first call makes the session).
    stage_seconds: dict[str, float]

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

    def synthesize(
        self, texts: Sequence[str], voice: str, options: SynthesisOptions
    ) -> list[np.ndarray]:
        """Speak a batch of chunks; returns one mono float32 array per text, in order."""
        ...


def lap(stage_seconds: dict[str, float], stage: str, since: float) -> float:
    """Add the time since `since` (a perf_counter reading) to `stage`; returns the reading
    taken now, so consecutive stages chain: `t = lap(s, "a", t); t = lap(s, "b", t)`."""
    now = time.perf_counter()
    stage_seconds[stage] = stage_seconds.get(stage, 0.0) + (now - since)
    return now
