"""The unit of work every executor runs: a chunk task (plain data: text, voice, options, where
to write), what became of it, and the steps shared by every executor (speak a batch, write
each chunk atomically, plan batches by length, hand results back in task order).

Plain data, so the same tasks can go to an engine in this process, to engine processes, or to
another machine.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from audiopub.errors import AudiopubError
from audiopub.jobs.chunk_cache import write_chunk
from audiopub.tts.batching import BatchLimits, plan_batches
from audiopub.tts.engine import Engine, SynthesisOptions, SynthesisResult

log = logging.getLogger(__name__)

RETRIES = 1  # a chunk the engine fails on is tried once more before the job fails
WINDOW_BATCHES = 4  # a planning window holds this many batches' worth of upcoming chunks


@dataclass(frozen=True)
class ChunkTask:
    key: str  # the chunk's cache key: the caller matches results by it
    text: str
    voice: str
    options: SynthesisOptions
    out_path: Path


@dataclass(frozen=True)
class ChunkResult:
    """What became of one task: the bookkeeping the job store keeps (the audio is on disk)."""

    key: str
    frames: int
    sample_rate: int
    synth_s: float  # engine time, not counting the file write
    provider: str
    error: str | None = None  # set when every attempt failed; no file was written
    # Engine seconds per stage for this chunk. Plain data, so it crosses process boundaries.
    stages: dict[str, float] = field(default_factory=dict)
    # Where each of the engine's words starts in the chunk's audio (`SynthesisResult`).
    word_starts: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Spoken:
    """A chunk's audio, not yet on disk: what a device thread hands to a writer."""

    task: ChunkTask
    result: SynthesisResult
    synth_s: float  # engine time, not counting the file write
    provider: str


def write_spoken(spoken: Spoken) -> ChunkResult:
    """Write a spoken chunk atomically; its result, which only then may count as done."""
    task, result = spoken.task, spoken.result
    frames = write_chunk(task.out_path, result.audio, result.sample_rate)
    return ChunkResult(
        task.key,
        frames,
        result.sample_rate,
        spoken.synth_s,
        spoken.provider,
        stages=result.stage_seconds,
        word_starts=result.word_starts,
    )


def written(
    engine: Engine, task: ChunkTask, result: SynthesisResult, synth_s: float
) -> ChunkResult:
    return write_spoken(Spoken(task, result, synth_s, engine.device.provider))


def speak_alone(
    engine: Engine, task: ChunkTask, attempts: int = RETRIES + 1
) -> Spoken | ChunkResult:
    """Speak one chunk on its own; engine errors come back as a failed result (text), after
    `attempts` tries (the first one and RETRIES more)."""
    error = ""
    for attempt in range(attempts):
        began = time.perf_counter()
        try:
            (result,) = engine.synthesize([task.text], task.voice, task.options)
        except AudiopubError:
            raise
        except Exception as exc:  # engine internals (ORT, espeak): report with the chunk's text
            error = f"The engine failed on this text: {task.text!r} ({exc})"
            log.warning("attempt %d of %d: %s", attempt + 1, attempts, error)
            continue
        return Spoken(task, result, time.perf_counter() - began, engine.device.provider)
    return ChunkResult(task.key, 0, 0, 0.0, engine.device.provider, error)


def synthesize_to_file(engine: Engine, task: ChunkTask, attempts: int = RETRIES + 1) -> ChunkResult:
    """Speak one chunk and write it atomically (`speak_alone`, then `write_spoken`)."""
    outcome = speak_alone(engine, task, attempts)
    return write_spoken(outcome) if isinstance(outcome, Spoken) else outcome


def synthesize_batch(engine: Engine, tasks: Sequence[ChunkTask]) -> list[ChunkResult]:
    """Speak chunks of one job as one padded batch; if the batch fails, each chunk is tried on
    its own so that a bad chunk names itself and the good ones are kept."""
    if len(tasks) > 1:
        try:
            prepared = engine.prepare([t.text for t in tasks], tasks[0].voice, tasks[0].options)
            results = engine.speak(prepared, tasks[0].voice, tasks[0].options)
        except AudiopubError:
            raise
        except Exception as exc:  # engine internals: fall back to one chunk at a time
            log.warning("a batch of %d chunks failed (%s); trying them one by one", len(tasks), exc)
        else:
            return [
                written(engine, t, result, result.engine_s)
                for t, result in zip(tasks, results, strict=True)
            ]
    return [synthesize_to_file(engine, t) for t in tasks]


def planned_batches(
    tasks: Iterable[ChunkTask], limits: Callable[[], BatchLimits]
) -> Iterator[list[tuple[int, ChunkTask]]]:
    """Batches of (position, task): windows of upcoming tasks grouped by text length within
    the limits of the moment (they shrink after an out-of-memory error). A batch holds one
    voice and one set of options (an engine speaks a padded batch in one voice), so a window's
    tasks are grouped by them first: a cast's voices taking turns still fill whole batches.
    With at most one chunk a batch, tasks stay in order. The padded-characters bound is the
    one for each group's speed."""
    window: list[tuple[int, ChunkTask]] = []
    for position, task in enumerate(tasks):
        window.append((position, task))
        if len(window) >= limits().max_items * WINDOW_BATCHES:
            yield from _plan_window(window, limits())
            window = []
    if window:
        yield from _plan_window(window, limits())


def _plan_window(
    window: list[tuple[int, ChunkTask]], limits: BatchLimits
) -> Iterator[list[tuple[int, ChunkTask]]]:
    groups: dict[tuple[str, SynthesisOptions], list[tuple[int, ChunkTask]]] = {}
    for item in window:
        groups.setdefault((item[1].voice, item[1].options), []).append(item)
    batches = []
    for (_, options), group in groups.items():
        lengths = [len(task.text) for _, task in group]
        for batch in plan_batches(lengths, limits.at_speed(options.speed)):
            batches.append([group[index] for index in batch])
    # In the reading order of their first chunk, so the start of the window is ready first.
    yield from sorted(batches, key=lambda batch: batch[0][0])


def in_task_order(batches: Iterable[list[tuple[int, ChunkResult]]]) -> Iterator[ChunkResult]:
    """Results of batches that finish out of order, handed on in task order."""
    ready: dict[int, ChunkResult] = {}
    next_position = 0
    for batch in batches:
        ready.update(batch)
        while next_position in ready:
            yield ready.pop(next_position)
            next_position += 1
