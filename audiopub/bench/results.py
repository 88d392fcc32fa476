"""What a benchmark run found, as dataclasses; `BenchResult.to_dict()` is the JSON file.

The JSON layout is the contract described in docs/bench-schema.md and checked by schema.json:
add fields freely, but rename or remove one only with a new SCHEMA_ID (`jobs.recorded_speed`).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from audiopub.bench.flops import ComputeBound
from audiopub.bench.machine import DeviceFacts, GpuUsage
from audiopub.bench.memory import MemoryFacts
from audiopub.jobs.recorded_speed import SCHEMA_ID  # jobs read saved results back, checking it


@dataclass(frozen=True)
class Stats:
    """Median and range over the timed runs (warm-up runs excluded)."""

    median: float
    min: float
    max: float

    @staticmethod
    def of(values: Sequence[float]) -> Stats:
        return Stats(
            round(statistics.median(values), 6), round(min(values), 6), round(max(values), 6)
        )


@dataclass(frozen=True)
class Timing:
    """One timed run of one workload."""

    seconds: float  # wall time
    audio_s: float  # seconds of audio produced
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage in this run


def median_stages(timings: Sequence[Timing]) -> dict[str, float]:
    """Per stage, the median over runs; 'other' is what no stage accounts for (Python, I/O)."""
    names = list(dict.fromkeys(name for t in timings for name in t.stages))  # stage order
    per_run = [
        {
            **{n: t.stages.get(n, 0.0) for n in names},
            "other": max(0.0, t.seconds - sum(t.stages.values())),
        }
        for t in timings
    ]
    return {
        name: round(statistics.median(run[name] for run in per_run), 6)
        for name in [*names, "other"]
    }


@dataclass(frozen=True)
class SynthesisCell:
    """One table cell: a text size at a number of steps, timed over the runs."""

    steps: int | None  # None for engines without steps
    size: str  # "short", "mid", "long"
    chars: int
    chunks: int
    audio_s: float  # of the median run
    seconds: Stats
    chars_per_s: Stats
    rtf: Stats  # seconds of compute per second of audio
    stages: dict[str, float]  # median seconds per stage, see median_stages

    @staticmethod
    def of(
        steps: int | None, size: str, chars: int, chunks: int, timings: Sequence[Timing]
    ) -> SynthesisCell:
        ordered = sorted(timings, key=lambda t: t.seconds)
        return SynthesisCell(
            steps,
            size,
            chars,
            chunks,
            round(ordered[len(ordered) // 2].audio_s, 4),
            Stats.of([t.seconds for t in timings]),
            Stats.of([chars / t.seconds for t in timings]),
            Stats.of([t.seconds / t.audio_s for t in timings if t.audio_s > 0] or [0.0]),
            median_stages(timings),
        )


@dataclass(frozen=True)
class CompareCell:
    """Audiopub's pipeline against the engine's plain one-chunk loop, interleaved."""

    steps: int | None
    workload: str  # a size name or "book"
    chars: int
    pipeline_s: Stats
    plain_s: Stats
    ratio: float  # plain median ÷ pipeline median: above 1, the pipeline is faster

    @staticmethod
    def of(
        steps: int | None,
        workload: str,
        chars: int,
        pipeline: Sequence[Timing],
        plain: Sequence[Timing],
    ) -> CompareCell:
        pipeline_s = Stats.of([t.seconds for t in pipeline])
        plain_s = Stats.of([t.seconds for t in plain])
        return CompareCell(
            steps,
            workload,
            chars,
            pipeline_s,
            plain_s,
            round(plain_s.median / pipeline_s.median, 4),
        )


@dataclass(frozen=True)
class EngineSide:
    """One engine's figures in a `--beside` comparison."""

    engine: str
    voice: str
    model_id: str
    provider: str  # what its sessions actually ran on
    steps: int | None
    audio_s: float  # of the median run
    chars_per_s: Stats
    rtf: Stats

    @staticmethod
    def of(
        engine: str, voice: str, model_id: str, provider: str, cell: SynthesisCell
    ) -> EngineSide:
        return EngineSide(
            engine, voice, model_id, provider, cell.steps, cell.audio_s, cell.chars_per_s, cell.rtf
        )


@dataclass(frozen=True)
class BesideCell:
    """`--engine` and `--beside` on the same text, rounds alternating between them. The ratios
    are of medians, `--engine`'s cost ÷ `--beside`'s: above 1, `--engine` is the slower."""

    size: str
    chars: int
    engines: list[EngineSide]  # --engine, then --beside
    time_per_char_ratio: float  # --beside's chars/s ÷ --engine's
    rtf_ratio: float  # --engine's real-time factor ÷ --beside's

    @staticmethod
    def of(size: str, chars: int, first: EngineSide, second: EngineSide) -> BesideCell:
        return BesideCell(
            size,
            chars,
            [first, second],
            round(second.chars_per_s.median / first.chars_per_s.median, 4),
            round(first.rtf.median / second.rtf.median, 4) if second.rtf.median else 0.0,
        )


@dataclass(frozen=True)
class BookRun:
    """One timed run over a whole book."""

    steps: int | None
    run: int  # 1-based
    wall_s: float
    audio_s: float
    chars_per_s: float
    rtf: float
    stages: dict[str, float]  # seconds per phase of this run


@dataclass(frozen=True)
class BookSummary:
    steps: int | None
    wall_s: Stats
    chars_per_s: Stats
    rtf: Stats


@dataclass(frozen=True)
class BookResult:
    path: str
    title: str
    chapters: int
    chunks: int
    chars: int  # characters narrated (the planned chunks' text)
    plan_s: float  # reading the EPUB and cutting it into chunks, once
    mode: str  # "end_to_end" (EPUB → .m4b) or "synthesis_only" (chunk WAVs only)
    executor: str  # "process" (one engine process per core) or "inline"
    workers: int
    runs: list[BookRun]
    summary: list[BookSummary]

    @staticmethod
    def summarise(runs: Sequence[BookRun]) -> list[BookSummary]:
        steps = list(dict.fromkeys(run.steps for run in runs))
        return [
            BookSummary(
                s,
                Stats.of([r.wall_s for r in runs if r.steps == s]),
                Stats.of([r.chars_per_s for r in runs if r.steps == s]),
                Stats.of([r.rtf for r in runs if r.steps == s]),
            )
            for s in steps
        ]


@dataclass(frozen=True)
class EngineFacts:
    name: str
    voice: str
    model_id: str
    sample_rate: int
    uses_steps: bool
    max_chunk_chars: int
    batch_size: int


@dataclass(frozen=True)
class RunSettings:
    runs: int
    warmup: int
    steps: list[int] | None
    sizes: list[str]
    speed: float
    seed: int | None
    compare: bool


@dataclass(frozen=True)
class BatchingFacts:
    """How chunks were batched: the size allowed, and what the production executor ran."""

    max_items: int  # chunks per batch allowed (forced, or the device's default)
    forced: bool  # --batch-size (or AUDIOPUB_BATCH_SIZE) set it
    batches: dict[str, int] = field(default_factory=dict)  # batch size → batches run
    device_chunks: dict[str, int] = field(default_factory=dict)  # device → chunks it spoke


@dataclass(frozen=True)
class TuningCell:
    """One CUDA setting: where the engine ran, its nodes by provider, and its speed."""

    tuning: str  # "default", "max_workspace", "max_workspace+pad_nc1d"
    device: str  # DeviceReport.describe() of its engine
    node_placement: dict[str, int]
    chars: int
    seconds: Stats
    chars_per_s: Stats
    # How far its audio of one seeded sentence is from the first setting's: RMS of the
    # difference over RMS of the signal (0.0: the same samples; None: different lengths).
    difference: float | None = None


@dataclass
class BenchResult:
    created: str  # ISO 8601, UTC
    label: str  # names the machine in --report tables (default: the host name)
    audiopub_version: str
    command: list[str]
    engine: EngineFacts
    device: DeviceFacts
    settings: RunSettings
    texts: dict[str, str] = field(default_factory=dict)  # size → the text spoken
    synthesis: list[SynthesisCell] = field(default_factory=list)
    synthesis_executor: str = "inline"  # the tables run the engine in this process
    compare: list[CompareCell] = field(default_factory=list)
    compare_executor: str | None = None  # what "pipeline" meant in the comparison
    beside: list[BesideCell] = field(default_factory=list)  # --beside, per (steps, size)
    book: BookResult | None = None
    compute: ComputeBound | None = None
    memory: MemoryFacts | None = None
    gpu_usage: list[GpuUsage] = field(default_factory=list)  # per GPU sampled during the run
    batching: BatchingFacts | None = None
    cuda_tuning: str = "default"  # the optional CUDA settings in force (AUDIOPUB_CUDA_TUNING)
    # Provider → nodes the engine ran on it, counted on an engine of its own (`node_placement`)
    node_placement: dict[str, int] = field(default_factory=dict)
    tuning: list[TuningCell] = field(default_factory=list)  # --cuda-tuning, compared

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA_ID, **asdict(self)}


def summary_line(result: Mapping[str, Any]) -> dict[str, Any]:
    """The one-line JSON a shell script can grep: headline speed, audio and memory."""
    line: dict[str, Any] = {"engine": f"audiopub-{result['engine']['name']}"}
    book = result.get("book")
    if book:
        best = book["summary"][0]
        audio = statistics.median(r["audio_s"] for r in book["runs"])
        line |= {
            "mode": book["mode"],
            "chars": book["chars"],
            "seconds": best["wall_s"]["median"],
            "chars_per_s": best["chars_per_s"]["median"],
            "audio_s": round(audio, 2),
            "rtf": best["rtf"]["median"],
        }
    elif result["synthesis"]:
        cell = result["synthesis"][-1]  # the longest text at the last steps value
        line |= {
            "mode": f"synthesis:{cell['size']}",
            "chars": cell["chars"],
            "seconds": cell["seconds"]["median"],
            "chars_per_s": round(cell["chars_per_s"]["median"], 1),
            "audio_s": cell["audio_s"],
            "rtf": round(cell["rtf"]["median"], 4),
        }
    if result.get("compare"):
        line["compare_ratio"] = result["compare"][-1]["ratio"]
    if result.get("beside"):
        line["beside_time_per_char_ratio"] = result["beside"][-1]["time_per_char_ratio"]
    memory = result.get("memory") or {}
    sampled = memory.get("sampled_peak_rss_mb")
    line["peak_rss_mb"] = sampled if sampled is not None else memory.get("peak_rss_mb")
    line["rss_upper_bound_mb"] = memory.get("total_peak_rss_mb")  # sum of per-process peaks
    compute = result.get("compute") or {}
    line["share_of_compute_bound"] = compute.get("share")
    return line
