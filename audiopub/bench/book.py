"""A whole book: end to end through the real job pipeline, or its chunk synthesis alone.

    end_to_end       submit_job + execute_job in a scratch job store, exactly what
                     `audiopub convert` runs: plan, speak (production executor), stitch, mux.
    synthesis_only   the book's planned chunks through the production executor, chunk WAVs
                     written, nothing stitched or encoded: Audiopub's bare synthesis throughput.

Every run starts from an empty store, so no chunk is ever reused from a previous run.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from audiopub import settings as defaults
from audiopub.bench.measure import Workload, interleaved, run_executor, run_plain
from audiopub.bench.results import BatchingFacts, BookResult, BookRun, Timing
from audiopub.book.reading import read_book
from audiopub.cluster.executor import job_executors
from audiopub.errors import AudiopubError
from audiopub.jobs.book_plan import plan_book
from audiopub.jobs.chunk_executor import ChunkExecutor, Placement
from audiopub.jobs.executor import default_batch_size
from audiopub.jobs.models import JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.worker import execute_job
from audiopub.tts.engine import Engine, SynthesisOptions

MODES = ("end_to_end", "synthesis_only")


@dataclass(frozen=True)
class BookJob:
    """What every run of one book shares."""

    epub: Path
    engine_name: str
    engine: Engine  # the registry's engine, the one the pipeline itself would load
    voice: str
    use_gpu: bool
    seed: int | None
    scratch: Path  # each run gets a fresh folder here, removed afterwards
    batch_size: int | None = None  # forced chunks per batch; None: the fastest for the device


@dataclass(frozen=True)
class BookPlan:
    title: str
    chapters: int
    workload: Workload
    plan_s: float


def plan(epub: Path, engine: Engine) -> BookPlan:
    began = time.perf_counter()
    book = read_book(epub)
    chapters = plan_book(book, engine.max_chunk_chars)
    plan_s = time.perf_counter() - began
    texts = tuple(chunk.spoken for _, chunks in chapters for chunk in chunks)
    return BookPlan(book.title, len(chapters), Workload("book", texts), plan_s)


def end_to_end(job: BookJob, steps: int | None) -> Timing:
    """EPUB → .m4b through the job pipeline, as `audiopub convert` runs it: the book read and
    submitted, then the job run. Stages are wall-time phases of the run, from the job's own
    records (its stitching and encoding times), not from its messages."""
    folder = job.scratch / f"run-{uuid.uuid4().hex[:8]}"
    settings = JobSettings(
        engine=job.engine_name,
        voice=job.voice,
        seed=job.seed,
        use_gpu=job.use_gpu,
        steps=steps or defaults.DEFAULT_STEPS,
        batch_size=job.batch_size,
        proof_listen=False,
    )  # speech alone: listening has its own figures
    try:
        with JobStore(folder / "jobs.sqlite3") as store:
            began = time.perf_counter()
            job_id = submit_job(
                store, job.epub, read_book(job.epub), folder / "book.m4b", settings, job.engine
            ).id
            submitted = time.perf_counter()
            store.queue.set_state(job_id, JobState.RUNNING)
            state = execute_job(store, job_id, executors=job_executors())
            ended = time.perf_counter()
            finished = store.queue.get_job(job_id)
            if state is not JobState.DONE:
                raise AudiopubError(
                    f"The benchmark conversion ended {state.value}: {finished.error}"
                )
            chapters = store.ledger.chapters(job_id)
            engine_busy = sum(c.synth_s or 0.0 for c in store.ledger.all_chunks(job_id))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    stitch = sum(c.stage_times.get("stitch", 0.0) for c in chapters)
    prepare = finished.stage_times.get("prepare", 0.0)
    mux = finished.stage_times.get("encode", 0.0)
    stages = {
        "submit": submitted - began + prepare,
        "synthesis": ended - submitted - prepare - stitch - mux,
        "stitch": stitch,
        "mux": mux,
        # Engine time summed over chunks (and so over workers): not a wall-time phase.
        "engine_busy": engine_busy,
    }
    return Timing(ended - began, sum(c.duration_s or 0.0 for c in chapters), stages)


def synthesis_only(
    executor: ChunkExecutor, workload: Workload, job: BookJob, options: SynthesisOptions
) -> Timing:
    folder = Path(tempfile.mkdtemp(prefix="chunks-", dir=job.scratch))
    try:
        return run_executor(executor, workload, job.voice, options, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def executor_label(executor: ChunkExecutor) -> tuple[str, int]:
    """How the executor runs its engines, in the results' words ("process": engine processes
    on this machine; "inline" for the rest), and how many it runs at once."""
    info = executor.describe()
    return ("process" if info.placement is Placement.ENGINE_PROCESSES else "inline", info.workers)


def warm_up(
    executor: ChunkExecutor, workload: Workload, job: BookJob, options: SynthesisOptions, times: int
) -> None:
    """Start the worker processes and load their models on a few chunks, so synthesis-only
    runs time the engine at work; --warmup 0 times a cold start instead. End-to-end runs are
    never warmed: every job starts its engine processes and stops them when its audio is
    spoken (`ChunkExecutor.close`), so each run pays that start-up, as a conversion
    does."""
    _, workers = executor_label(executor)
    sample = Workload("warm-up", workload.chunks[: max(4, 2 * workers)])
    for _ in range(times):
        synthesis_only(executor, sample, job, options)


def run_book(
    job: BookJob,
    book: BookPlan,
    mode: str,
    steps_list: list[int | None],
    runs: int,
    warmup: int,
    plain_engine: Engine | None,
    on_run: Callable[[BookRun], None],
) -> tuple[BookResult, list[tuple[int | None, list[Timing], list[Timing]]], BatchingFacts]:
    """Time `runs` runs of the book per steps value; with `plain_engine`, each run is paired
    with the engine's plain loop over the same chunks, interleaved. Returns the result, for
    the comparison (steps, pipeline timings, plain timings) per steps value, and how the
    synthesis-only runs were batched (end-to-end runs batch inside their jobs, unseen)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    executor = job_executors()(job.engine_name, job.engine, job.batch_size, job.voice)
    label, workers = executor_label(executor)
    if mode == "end_to_end":  # held here, it would stay warm for every run's job
        executor.close()
    book_runs: list[BookRun] = []
    pairs = []
    for steps in steps_list:
        options = _options(job, steps)
        if mode == "synthesis_only":
            warm_up(executor, book.workload, job, options, warmup)

        def pipeline(steps: int | None = steps, options: SynthesisOptions = options) -> Timing:
            if mode == "end_to_end":
                timing = end_to_end(job, steps)
            else:
                timing = synthesis_only(executor, book.workload, job, options)
            run = _book_run(steps, len(book_runs) + 1, timing, book.workload.chars)
            book_runs.append(run)
            on_run(run)
            return timing

        runners: list[Callable[[], Timing]] = [pipeline]
        if plain_engine is not None:
            if warmup:  # as piper_tts_loop.py does before it starts the clock
                plain_engine.synthesize(list(book.workload.chunks[:2]), job.voice, options)
            runners.append(partial(run_plain, plain_engine, book.workload, job.voice, options))
        timings = interleaved(runners, runs, warmup=0)
        pairs.append((steps, timings[0], timings[1] if plain_engine is not None else []))
    batching = batching_facts(executor, job.engine, job.batch_size)
    executor.close()  # as a job does once its audio is spoken
    result = BookResult(
        path=str(job.epub),
        title=book.title,
        chapters=book.chapters,
        chunks=len(book.workload.chunks),
        chars=book.workload.chars,
        plan_s=round(book.plan_s, 4),
        mode=mode,
        executor=label,
        workers=workers,
        runs=book_runs,
        summary=BookResult.summarise(book_runs),
    )
    return result, pairs, batching


def batching_facts(
    executor: ChunkExecutor | None, engine: Engine, forced: int | None
) -> BatchingFacts:
    """The batch size allowed and, from `executor`, the batches it ran and each device's share."""
    facts = BatchingFacts(
        default_batch_size(engine, forced), bool(forced or defaults.batch_size_override())
    )
    if executor is None:
        return facts
    return replace(
        facts,
        batches={str(size): count for size, count in sorted(executor.batch_sizes.items())},
        device_chunks=dict(executor.device_chunks),
    )


def _options(job: BookJob, steps: int | None) -> SynthesisOptions:
    return SynthesisOptions(seed=job.seed, steps=steps or defaults.DEFAULT_STEPS)


def _book_run(steps: int | None, number: int, timing: Timing, chars: int) -> BookRun:
    return BookRun(
        steps,
        number,
        round(timing.seconds, 4),
        round(timing.audio_s, 3),
        round(chars / timing.seconds, 2),
        round(timing.seconds / timing.audio_s, 5) if timing.audio_s else 0.0,
        {name: round(value, 4) for name, value in timing.stages.items()},
    )
