"""One benchmark run: the text-size tables (or a book), the comparisons, device facts, JSON."""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from audiopub import __version__, settings
from audiopub.bench import saved, tables
from audiopub.bench.book import BookJob, batching_facts, executor_label, plan, run_book
from audiopub.bench.flops import ComputeBound, compute_bound, model_cost
from audiopub.bench.machine import MATMUL_SIZE, device_facts, gpu_usage, matmul_gflops
from audiopub.bench.measure import interleaved, run_executor, run_inline, run_plain, text_workload
from audiopub.bench.memory import sampling_memory
from audiopub.bench.results import (
    BenchResult,
    BesideCell,
    BookRun,
    CompareCell,
    EngineFacts,
    EngineSide,
    RunSettings,
    SynthesisCell,
    Timing,
    summary_line,
)
from audiopub.bench.texts import TEXTS, TEXTS_LANGUAGE
from audiopub.bench.tuning import compare_tunings, placed_engine, tuning_name
from audiopub.cluster.executor import job_executors
from audiopub.gpu.monitor import GpuMonitor
from audiopub.jobs.cpu_sizing import cpu_workers
from audiopub.jobs.executor import default_batch_size
from audiopub.tts.engine import Engine, SynthesisOptions, voice_of
from audiopub.tts.kokoro.environment import RUNTIME as KOKORO_RUNTIME
from audiopub.tts.registry import get_engine, load_engine

VRAM_INTERVAL_S = 0.1  # NVML sampling period while the benchmark runs


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _options(args: argparse.Namespace, steps: int | None) -> SynthesisOptions:
    # The texts are English: an engine that phonemises by the text's language (Kokoro, whose
    # voice may be another language's) must read them as English.
    return SynthesisOptions(
        seed=args.seed, steps=steps or settings.DEFAULT_STEPS, language=TEXTS_LANGUAGE
    )


@dataclass(frozen=True)
class Side:
    """An engine timed in the text-size tables, with its voice."""

    engine: Engine
    voice: str

    def steps(self, wanted: int | None, first: list[int]) -> int | None:
        """The steps this engine runs at in a row for `wanted` steps: its own (the first
        --steps value) if `wanted` is None, none if it takes no steps."""
        if not self.engine.uses_steps:
            return None
        return wanted if wanted is not None else first[0]

    def runner(self, args: argparse.Namespace, text: str, steps: int | None) -> partial[Timing]:
        return partial(
            run_inline,
            self.engine,
            text,
            self.voice,
            _options(args, steps),
            default_batch_size(self.engine, args.batch_size),
        )


def measure(args: argparse.Namespace, options: settings.Settings) -> dict:
    """Run everything the arguments ask for, under the command's settings `options`; returns
    the result in its JSON form."""
    # Kokoro alone has runtimes to choose from (`EngineInfo.runtimes`): for another engine
    # its setting changes nothing.
    runtimes = args.runtime or [KOKORO_RUNTIME.read(options)]
    # Installed for the engines the registry loads, which read the settings in force.
    with settings.installed(KOKORO_RUNTIME.given(options, runtimes[0])) as first:
        return _measure(args, first, runtimes)


def _measure(args: argparse.Namespace, options: settings.Settings, runtimes: list[str]) -> dict:
    engine = get_engine(args.engine, use_gpu=args.gpu, threads=args.threads)
    # The engine the pipeline itself loads (registry default threads): its executor is the
    # production one, and an end-to-end run reuses it.
    pipeline_engine = get_engine(args.engine, use_gpu=args.gpu)
    voice = args.voice or engine.voices()[0].id
    steps_list: list[int | None] = list(args.steps) if engine.uses_steps else [None]
    result = BenchResult(
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        label=args.label or platform.node() or "unknown",
        audiopub_version=__version__,
        command=sys.argv[1:],
        engine=_engine_facts(engine, voice),
        device=device_facts(
            engine,
            args.gpu,
            args.threads,
            cpu_workers(default_batch_size(pipeline_engine, args.batch_size), options.cpu_workers),
        ),
        settings=RunSettings(
            args.runs,
            args.warmup,
            [s for s in steps_list if s is not None] or None,
            [] if args.book else list(args.sizes),
            settings.DEFAULT_SPEED,
            args.seed,
            args.compare,
        ),
    )
    result.cuda_tuning = tuning_name(options.cuda_tuning)
    with (
        GpuMonitor(interval_s=VRAM_INTERVAL_S) as monitor,
        sampling_memory() as memory,
        tempfile.TemporaryDirectory(prefix="audiopub-bench-") as scratch,
    ):
        if args.book:
            _book(
                args,
                result,
                pipeline_engine,
                engine if args.compare else None,
                voice,
                steps_list,
                Path(scratch),
            )
        else:
            beside = None
            if len(runtimes) == 2:  # the same engine on the other runtime, made for this run
                other_runtime = KOKORO_RUNTIME.given(options, runtimes[1])
                with settings.installed(other_runtime):
                    other = load_engine(args.engine, use_gpu=args.gpu, threads=args.threads)
                beside = Side(other, voice)
            if args.beside:
                other = get_engine(args.beside[0], use_gpu=args.gpu, threads=args.threads)
                beside = Side(other, args.beside[1] or other.voices()[0].id)
            _sizes(args, result, Side(engine, voice), steps_list, beside)
            result.batching = batching_facts(None, engine, args.batch_size)
            if args.compare:
                _compare(args, result, engine, pipeline_engine, voice, steps_list, Path(scratch))
        # Read while the workers live, and before the matmul test, whose buffers would count
        # towards this process's peak (and whose NumPy work is no GPU's).
        result.memory = memory.facts(monitor.peak_vram_mb())
        result.gpu_usage = gpu_usage(monitor)
    # After the memory figures: each loads an engine of its own, which they would count.
    _log("bench: node placement")
    first_options = _options(args, steps_list[0])
    placed = placed_engine(args.engine, args.gpu, voice, first_options)
    result.node_placement = placed.nodes
    if args.cuda_tuning and args.gpu:
        _log(f"bench: CUDA settings {', '.join(map(tuning_name, args.cuda_tuning))}")
        result.tuning = compare_tunings(
            args.engine,
            args.cuda_tuning,
            voice,
            first_options,
            TEXTS["long"],
            default_batch_size(pipeline_engine, args.batch_size),
            args.runs,
            args.warmup,
            already_placed=[placed],  # the run's own settings: loaded already
        )
    result.compute = _compute(args, result, voice)
    return result.to_dict()


def _engine_facts(engine: Engine, voice: str) -> EngineFacts:
    return EngineFacts(
        engine.name,
        voice,
        engine.model_id(voice),
        voice_of(engine, voice).sample_rate,
        engine.uses_steps,
        engine.max_chunk_chars,
        engine.batch_size,
    )


def _names(sides: list[Side]) -> list[str]:
    """The engines' names; one engine on two runtimes (`--runtime onnx,torch`) is named with
    each side's: kokoro (onnx), kokoro (torch)."""
    names = [side.engine.name for side in sides]
    if len(set(names)) == len(names):
        return names
    return [f"{name} ({getattr(s.engine, 'runtime', '?')})" for name, s in zip(names, sides)]


def _sizes(
    args: argparse.Namespace,
    result: BenchResult,
    side: Side,
    steps_list: list[int | None],
    beside: Side | None,
) -> None:
    """The tables' cells; with `beside`, its engine speaks each text too, the two alternating
    round by round (`interleaved`), so both meet the machine's load alike."""
    for steps in steps_list:
        for size in args.sizes:
            text = TEXTS[size]
            sides = [side] if beside is None else [side, beside]
            _log(
                f"bench: {' and '.join(s.engine.name for s in sides)} steps={steps} {size} "
                f"({args.warmup} warm-up + {args.runs} runs)"
            )
            wanted = [s.steps(steps, args.steps) for s in sides]
            timings = interleaved(
                [s.runner(args, text, w) for s, w in zip(sides, wanted)], args.runs, args.warmup
            )
            cells = [
                SynthesisCell.of(
                    w, size, len(text), len(text_workload(size, text, s.engine).chunks), t
                )
                for s, w, t in zip(sides, wanted, timings)
            ]
            result.synthesis.append(cells[0])
            result.texts[size] = text
            if beside is not None:
                first, second = (
                    EngineSide.of(
                        name,
                        s.voice,
                        s.engine.model_id(s.voice),
                        s.engine.device.provider,
                        cell,
                    )
                    for s, cell, name in zip(sides, cells, _names(sides))
                )
                result.beside.append(BesideCell.of(size, len(text), first, second))


def _compare(
    args: argparse.Namespace,
    result: BenchResult,
    engine: Engine,
    pipeline_engine: Engine,
    voice: str,
    steps_list: list[int | None],
    scratch: Path,
) -> None:
    executor = job_executors()(args.engine, pipeline_engine, args.batch_size, voice)
    label, workers = executor_label(executor)
    result.compare_executor = (
        f"Audiopub's production executor ({label} × {workers}), chunk WAVs written"
    )
    for steps in steps_list:
        options = _options(args, steps)
        for size in args.sizes:
            workload = text_workload(size, TEXTS[size], engine)
            _log(f"bench: compare steps={steps} {size}")
            pipeline = partial(
                run_executor, executor, workload, voice, options, scratch / "compare"
            )
            plain = partial(run_plain, engine, workload, voice, options)
            timings = interleaved([pipeline, plain], args.runs, args.warmup)
            result.compare.append(CompareCell.of(steps, size, workload.chars, *timings))
    result.batching = batching_facts(executor, pipeline_engine, args.batch_size)
    executor.close()


def _book(
    args: argparse.Namespace,
    result: BenchResult,
    pipeline_engine: Engine,
    plain_engine: Engine | None,
    voice: str,
    steps_list: list[int | None],
    scratch: Path,
) -> None:
    job = BookJob(
        args.book,
        args.engine,
        pipeline_engine,
        voice,
        args.gpu,
        args.seed,
        scratch,
        args.batch_size,
    )
    mode = "synthesis_only" if args.synthesis_only else "end_to_end"
    _log(f"bench: {args.book.name}, {mode.replace('_', ' ')}, {args.runs} run(s)")

    planned = plan(args.book, pipeline_engine)

    def on_run(run: BookRun) -> None:  # one JSON line per run, for interleaving scripts
        print(
            json.dumps(
                {
                    "engine": f"audiopub-{args.engine}",
                    "mode": mode,
                    "run": run.run,
                    "steps": run.steps,
                    "chars": planned.workload.chars,
                    "seconds": run.wall_s,
                    "chars_per_s": run.chars_per_s,
                    "audio_s": run.audio_s,
                    "rtf": run.rtf,
                }
            ),
            flush=True,
        )

    book, pairs, result.batching = run_book(
        job, planned, mode, steps_list, args.runs, args.warmup, plain_engine, on_run
    )
    result.book = book
    if plain_engine is not None:
        label = f"{mode.replace('_', ' ')} ({book.executor} × {book.workers})"
        result.compare_executor = f"the book, {label}"
        result.compare = [
            CompareCell.of(steps, "book", book.chars, pipeline, plain)
            for steps, pipeline, plain in pairs
        ]


def _compute(args: argparse.Namespace, result: BenchResult, voice: str) -> ComputeBound | None:
    if args.matmul_seconds <= 0:
        return None
    _log("bench: float32 matmul speed")
    gflops = matmul_gflops(MATMUL_SIZE, args.matmul_seconds)
    cost, source = model_cost(args.engine, voice, args.count_flops)
    basis = chars_per_s = chars_per_audio_s = None
    if result.book is not None:
        summary = result.book.summary[0]
        runs = [r for r in result.book.runs if r.steps == summary.steps]
        audio = sorted(r.audio_s for r in runs)[len(runs) // 2]
        basis = f"book, {result.book.mode.replace('_', ' ')}"
        chars_per_s = summary.chars_per_s.median
        chars_per_audio_s = result.book.chars / audio if audio else None
    elif result.synthesis:
        first_steps = result.synthesis[0].steps
        cell = [c for c in result.synthesis if c.steps == first_steps][-1]
        basis, chars_per_s = f"{cell.size} text, in process", cell.chars_per_s.median
        chars_per_audio_s = cell.chars / cell.audio_s if cell.audio_s else None
    return compute_bound(gflops, MATMUL_SIZE, cost, source, basis, chars_per_s, chars_per_audio_s)


def bench(args: argparse.Namespace, options: settings.Settings) -> int:
    data = measure(args, options)
    text = tables.render(data)
    print(text)
    # Kept in the data directory too: a job's first estimate starts from this machine's speed.
    _log(f"bench: saved for the estimates of later jobs: {saved.save(data)}")
    if args.output:
        args.output.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        _log(f"bench: wrote {args.output}")
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
        _log(f"bench: wrote {args.markdown}")
    print(json.dumps(summary_line(data)), flush=True)
    return 0
