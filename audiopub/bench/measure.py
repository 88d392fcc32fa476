"""Ways to speak a list of chunks, each timed the same way.

inline     Audiopub's in-process path: chunks in padded batches by length, one engine call
           per batch (as the device executor runs them), audio kept in memory. Engine stage
           times are summed from the results, so the tables run here.
plain      the engine's plain loop: one chunk per call, in this process.
executor   the production path without stitching: ChunkTasks through the executor Audiopub
           picks (one single-threaded engine process per core on a CPU), chunk WAVs written.
           Its stages happen in the workers, out of sight.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from audiopub.bench.results import Timing
from audiopub.book.chunks.chunking import chunk_paragraphs
from audiopub.book.models import Chunk
from audiopub.book.spoken import spoken_form
from audiopub.errors import SynthesisFailed
from audiopub.jobs.chunk_executor import ChunkExecutor
from audiopub.jobs.chunk_work import ChunkTask
from audiopub.tts.batching import BatchLimits
from audiopub.tts.engine import Engine, SynthesisOptions, SynthesisResult, synthesize_in_batches


@dataclass(frozen=True)
class Workload:
    name: str  # "short", "mid", "long" or "book"
    chunks: tuple[str, ...]  # chunk texts as the pipeline plans them, in reading order

    @property
    def chars(self) -> int:
        return sum(len(text) for text in self.chunks)


def plan_text(text: str, max_chars: int) -> list[Chunk]:
    """`text` (English, like every benchmark text) chunked as the pipeline does, spoken form
    included: its time is part of text preparation."""
    return chunk_paragraphs([text], max_chars, speak=lambda chunk: spoken_form(chunk, "en"))


def text_workload(name: str, text: str, engine: Engine) -> Workload:
    return Workload(name, tuple(c.spoken for c in plan_text(text, engine.max_chunk_chars)))


def _totals(results: Sequence[SynthesisResult]) -> tuple[float, dict[str, float]]:
    """Seconds of audio and engine seconds per stage over `results`."""
    stages: Counter[str] = Counter()
    for result in results:
        stages.update(result.stage_seconds)
    return sum(r.duration_s for r in results), dict(stages)


def run_inline(
    engine: Engine, text: str, voice: str, options: SynthesisOptions, batch_size: int
) -> Timing:
    """Chunk `text` as the pipeline does and speak it in padded batches of up to `batch_size`
    chunks, in memory."""
    began = time.perf_counter()
    chunks = [c.spoken for c in plan_text(text, engine.max_chunk_chars)]
    prepared = time.perf_counter()
    results = synthesize_in_batches(engine, chunks, voice, options, BatchLimits(batch_size))
    seconds = time.perf_counter() - began
    audio_s, stages = _totals(results)
    return Timing(seconds, audio_s, {"text_prep": prepared - began, **stages})


def run_plain(engine: Engine, workload: Workload, voice: str, options: SynthesisOptions) -> Timing:
    """One chunk per engine call: what a script around the engine's own API would do."""
    began = time.perf_counter()
    results = [engine.synthesize([text], voice, options)[0] for text in workload.chunks]
    seconds = time.perf_counter() - began
    return Timing(seconds, *_totals(results))


def run_executor(
    executor: ChunkExecutor, workload: Workload, voice: str, options: SynthesisOptions, folder: Path
) -> Timing:
    """The chunks through the production executor, each written as a WAV into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    tasks = [
        ChunkTask(f"{i:07d}", text, voice, options, folder / f"{i:07d}.wav")
        for i, text in enumerate(workload.chunks)
    ]
    began = time.perf_counter()
    audio_s = 0.0
    for result in executor.map(tasks):
        if result.error is not None:
            raise SynthesisFailed(result.error)
        audio_s += result.frames / result.sample_rate
    seconds = time.perf_counter() - began
    for task in tasks:  # keep the disk flat over many runs of a big book
        task.out_path.unlink(missing_ok=True)
    return Timing(seconds, audio_s, {"synthesis": seconds})


def interleaved(
    runners: Sequence[Callable[[], Timing]],
    runs: int,
    warmup: int,
    names: Sequence[str] = (),
    announce: Callable[[str], None] | None = None,
) -> list[list[Timing]]:
    """Each runner `warmup` times, then `runs` rounds of all runners, the order reversed every
    other round so that neither side always runs on a warmer (or busier) machine.

    `announce`, if given, is told before each run what it is ("timed run 2 of 3, CPU", with
    the runner's `names`): a run can take minutes, and a person watching wants to know."""

    def run(index: int, what: str) -> Timing:
        if announce is not None:
            name = names[index] if index < len(names) else f"runner {index + 1}"
            announce(f"{what}, {name}")
        return runners[index]()

    for number in range(warmup):
        for index in range(len(runners)):
            run(index, f"warm-up run {number + 1} of {warmup}")
    timings: list[list[Timing]] = [[] for _ in runners]
    for round_ in range(runs):
        order = list(range(len(runners)))
        if round_ % 2:
            order.reverse()
        for index in order:
            timings[index].append(run(index, f"timed run {round_ + 1} of {runs}"))
    return timings
