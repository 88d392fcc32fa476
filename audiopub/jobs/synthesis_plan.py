"""What a job speaks with, decided once per run before any audio: the engine, the voice (and so
the sample rate), the synthesis options (speed, steps, seed), and the executor that runs them
(its devices and batch limits).

Every step of a run reads this one plan, instead of asking the engine registry, the executor
factory and the engine's voice list again at each step.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from audiopub.errors import AudiopubError
from audiopub.jobs.chunk_cache import chunk_path
from audiopub.jobs.chunk_executor import ChunkExecutor, ExecutorFactory, ExecutorInfo
from audiopub.jobs.chunk_work import ChunkTask
from audiopub.jobs.executor import executor_for, in_process_executor
from audiopub.jobs.models import ChunkRow, JobSettings, reading_voice
from audiopub.tts.batching import BatchLimits
from audiopub.tts.engine import Engine, SynthesisOptions, Voice, voice_of
from audiopub.tts.registry import get_engine
from audiopub.voices.casting import check_voicing

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SynthesisPlan:
    engine: Engine  # loaded in this process: the voice list, the text limits, the device report
    voice: Voice
    options: SynthesisOptions
    executor: ChunkExecutor
    info: ExecutorInfo  # what speaks: where, on which devices, how many engines at once
    limits: BatchLimits  # at the start: an out-of-memory error halves them on the way

    @property
    def sample_rate(self) -> int:
        return self.voice.sample_rate

    @property
    def speed(self) -> float:
        return self.options.speed

    def task(self, chunk: ChunkRow, job_dir: Path) -> ChunkTask:
        """What speaks `chunk` into its audio file in the job's folder: its spoken form, in
        the voice that reads it, with the job's options. Retakes vary this task."""
        return ChunkTask(
            chunk.cache_key,
            chunk.spoken,
            reading_voice(chunk.voice, self.voice.id),
            self.options,
            chunk_path(job_dir, chunk.cache_key),
        )

    def describe(self) -> str:
        """One line for the job's log: voice, rate, speed, where it runs and in what batches."""
        return (
            f"{self.voice.id} at {self.sample_rate} Hz, speed {self.speed:g}, on "
            f"{' + '.join(self.info.devices)}, batches of up to {self.limits.max_items} chunks"
        )


def plan_synthesis(
    settings: JobSettings, engine: Engine | None = None, executors: ExecutorFactory | None = None
) -> SynthesisPlan:
    """The plan for a job's settings: its engine from the registry (on the GPU if asked) with
    the executor `executors` makes (None: this machine's, `executor_for`), or `engine` as given
    (tests, benchmarks) in this process.

    The voice (and a cast's voices) are looked up before any executor starts, so an unknown
    voice starts no engine processes."""
    assert settings.voice is not None  # resolved when the job was submitted
    given = engine is not None
    engine = engine or get_engine(settings.engine, use_gpu=settings.use_gpu)
    voice = voice_of(engine, settings.voice)
    if settings.cast is not None:
        check_voicing(settings.cast, engine, voice)
    if given:
        executor = in_process_executor(engine, settings.batch_size)
    else:
        executor = (executors or executor_for)(
            settings.engine, engine, settings.batch_size, settings.voice
        )
    return SynthesisPlan(
        engine, voice, settings.synthesis_options(), executor, executor.describe(), executor.limits
    )


def prepare_engine(settings: JobSettings, executors: ExecutorFactory | None = None) -> None:
    """Load the engine a queued job will speak with (start its processes, load its voice) and
    keep it warm for it: run while the job before it stitches and encodes. A problem with its
    settings is the job's to report when it runs; here it only means nothing was prepared."""
    try:
        plan = plan_synthesis(settings, executors=executors)
    except AudiopubError as exc:
        log.info("the next job's engine was not loaded ahead: %s", exc)
        return
    try:
        plan.executor.start(plan.voice.id)
    except AudiopubError as exc:
        log.info("the next job's engine did not start ahead: %s", exc)
    finally:
        plan.executor.close(keep_warm=True)
