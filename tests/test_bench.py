"""`audiopub bench`: it runs on both engines, prints its tables, and writes JSON that matches
the documented schema. Speed itself is never asserted: these machines are shared."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import jsonschema
import onnxruntime as ort
import pytest
from epub_factory import build_epub
from held_memory import hold_memory
from test_gpu_monitor import FakeNvml, wait_for
from tiny_supertonic import build_tiny_model

from audiopub import settings
from audiopub.bench import memory, rss, run, tables
from audiopub.bench.flops import compute_bound, count_flops
from audiopub.bench.machine import GpuUsage, gpu_usage
from audiopub.bench.results import SCHEMA_ID, Stats, Timing, median_stages, summary_line
from audiopub.bench.texts import MAX_SENTENCE_CHARS, TEXTS, synthetic_paragraphs
from audiopub.book.chunks.chunking import chunk_paragraphs
from audiopub.book.epub.reader import read_epub
from audiopub.cli import main
from audiopub.gpu.monitor import GpuMonitor
from audiopub.jobs import pipeline, recorded_speed

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "audiopub" / "bench" / "schema.json").read_text("utf-8"))
DOC = (ROOT / "docs" / "bench-schema.md").read_text("utf-8")
FAST = ["--matmul-seconds", "0.05"]  # the matmul test only needs to run, not to be precise
# Piper's, Kokoro's and the half-precision graphs rewritten once for the run, not per test.
pytestmark = pytest.mark.usefixtures("shared_model_cache")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("supertonic-3"))


@pytest.fixture
def supertonic(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AUDIOPUB_SUPERTONIC_DIR", str(tiny_model))
    return tiny_model


def _bench(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["bench", *argv]) == 0
    return capsys.readouterr().out


def _valid(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text("utf-8"))
    validator = jsonschema.Draft202012Validator(SCHEMA)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(data)]
    assert not errors, errors
    return data


def _summary(out: str) -> dict[str, Any]:
    line = out.strip().splitlines()[-1]
    summary: dict[str, Any] = json.loads(line)
    return summary


def test_schema_is_valid_and_every_field_is_documented() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)

    def names(node: Any) -> set[str]:
        found: set[str] = set()
        if isinstance(node, dict):
            found |= set(node.get("properties", {}))
            for value in node.values():
                found |= names(value)
        elif isinstance(node, list):
            for value in node:
                found |= names(value)
        return found

    undocumented = sorted(n for n in names(SCHEMA) if f"`{n}`" not in DOC)
    assert not undocumented, f"fields missing from docs/bench-schema.md: {undocumented}"


def test_supertonic_tables_stages_and_json(
    supertonic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "r.json"
    report = tmp_path / "r.md"
    out = _bench(
        [
            "--engine",
            "supertonic",
            "--cpu",
            "--steps",
            "2,4",
            "--runs",
            "2",
            "--warmup",
            "1",
            "--output",
            str(output),
            "--markdown",
            str(report),
            *FAST,
        ],
        capsys,
    )
    assert "Characters per second, wall clock (higher is better)" in out
    assert "Real-time factor" in out and "(lower is better)" in out
    assert re.search(r"^\| 4 \| [\d,]+ \(", out, re.MULTILINE)  # a row per steps value
    data = _valid(output)
    assert data["schema"] == SCHEMA_ID
    assert [(c["steps"], c["size"]) for c in data["synthesis"]] == [
        (s, size) for s in (2, 4) for size in ("short", "mid", "long")
    ]
    stages = data["synthesis"][-1]["stages"]
    assert {"text_prep", "text", "duration", "encoder", "step_loop", "vocoder", "other"} <= set(
        stages
    )
    assert stages["step_loop"] > 0
    assert data["device"]["provider"] == "CPUExecutionProvider"
    assert data["device"]["gpu"]["available"] is False or data["device"]["gpu"]["devices"]
    if not data["device"]["gpu"]["available"]:  # CI: the device section says so
        assert data["gpu_usage"] == [] and "- GPU use: no NVIDIA GPU sampled" in out
    assert data["memory"]["peak_rss_mb"] > 0
    assert data["compute"]["share"] is None  # no FLOP count for Supertonic
    assert report.read_text("utf-8").startswith("## audiopub bench")
    assert _summary(out)["engine"] == "audiopub-supertonic"


@pytest.mark.usefixtures("embedded_voice_loaded_once")  # the run's one Piper engine on the CPU
def test_piper_short_text_with_compare(
    tmp_path: Path,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "1")  # the pipeline runs inline: no pool start-up
    output = tmp_path / "piper.json"
    out = _bench(
        [
            "--sizes",
            "short",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--compare",
            "--output",
            str(output),
            *FAST,
        ],
        capsys,
    )
    data = _valid(output)
    (cell,) = data["synthesis"]
    assert cell["steps"] is None and cell["size"] == "short"
    assert cell["stages"]["model"] > 0 and cell["stages"]["phonemes"] > 0
    (compare,) = data["compare"]
    assert compare["ratio"] > 0
    assert re.search(r"\| short \(\d+ chars\) \|.*\| [\d.]+× \|", out)
    assert "share of compute bound" in out
    assert 0 < data["compute"]["share"]
    assert _summary(out)["compare_ratio"] == compare["ratio"]
    assert data["cuda_tuning"] == "default"
    assert data["node_placement"]["CPUExecutionProvider"] > 100  # every node of joe's graph
    assert re.search(r"- nodes: [\d,]+ on CPU; CUDA settings: default", out)
    # Kept in the data directory too, where a job's first estimate reads this machine's speed.
    (kept,) = (data_dir / "bench").glob("*-piper-*.json")
    assert json.loads(kept.read_text("utf-8")) == data
    assert (
        recorded_speed.machine_speed("piper", data["engine"]["voice"], on_gpu=False)
        == cell["chars_per_s"]["median"]
    )


@pytest.mark.engine_processes  # its comparison is of the production executor's processes
def test_book_end_to_end_and_synthesis_only(
    supertonic: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The stages come from what the job records, not from the words of its log.
    real_emit = pipeline.JobRun._emit
    monkeypatch.setattr(
        pipeline.JobRun,
        "_emit",
        lambda run, state, chapter_title="", message="": real_emit(
            run, state, chapter_title, "(reworded)"
        ),
    )
    epub = build_epub(
        tmp_path / "book.epub",
        [
            ("One", ["The rain had stopped by the time the train reached the coast."]),
            (
                "Two",
                [
                    "A dog slept in the shade of the ticket office.",
                    "The harbour smelled of tar, salt and fresh bread.",
                ],
            ),
        ],
    )
    common = ["--engine", "supertonic", "--steps", "2", "--book", str(epub), *FAST]
    out = _bench(
        [*common, "--runs", "1", "--warmup", "0", "--output", str(tmp_path / "e2e.json")], capsys
    )
    book = _valid(tmp_path / "e2e.json")["book"]
    assert book["mode"] == "end_to_end" and book["chapters"] == 2
    stages = book["runs"][0]["stages"]
    assert {"submit", "synthesis", "stitch", "mux"} <= set(stages)
    assert stages["mux"] > 0 and stages["synthesis"] > 0
    phases = sum(stages[name] for name in ("submit", "synthesis", "stitch", "mux"))
    assert phases == pytest.approx(book["runs"][0]["wall_s"], rel=1e-3)
    assert book["runs"][0]["audio_s"] > 0
    first_line = json.loads(out.splitlines()[0])  # one JSON line per run, before the tables
    assert first_line["mode"] == "end_to_end" and first_line["run"] == 1

    # The production executor (a process per core) against the plain loop, interleaved.
    out = _bench(
        [
            *common,
            "--synthesis-only",
            "--compare",
            "--runs",
            "2",
            "--warmup",
            "1",
            "--output",
            str(tmp_path / "synth.json"),
        ],
        capsys,
    )
    data = _valid(tmp_path / "synth.json")
    assert data["book"]["mode"] == "synthesis_only"
    assert [run["run"] for run in data["book"]["runs"]] == [1, 2]
    assert data["compare"][0]["workload"] == "book" and data["compare"][0]["ratio"] > 0
    assert "plain ÷ pipeline" in out


class _SampledMonitor(GpuMonitor):
    """The monitor on the fake NVML; start() waits for a first sample, so that a run shorter
    than one interval still has one."""

    fake: FakeNvml

    def __init__(self, interval_s: float) -> None:
        super().__init__(self.fake, interval_s=interval_s)

    def start(self) -> None:
        super().start()
        wait_for(self.latest)


def test_the_device_section_states_gpu_utilisation(
    supertonic: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _SampledMonitor.fake = fake = FakeNvml()
    fake.utilisation_pct, fake.used_mb = 64, 3000
    monkeypatch.setattr(run, "GpuMonitor", _SampledMonitor)
    output = tmp_path / "r.json"
    out = _bench(
        [
            "--engine",
            "supertonic",
            "--steps",
            "2",
            "--sizes",
            "short",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--matmul-seconds",
            "0",
            "--output",
            str(output),
        ],
        capsys,
    )
    (usage,) = _valid(output)["gpu_usage"]
    samples = len(fake.utilisation_reads)
    assert usage == {
        "index": 0,
        "name": "NVIDIA GeForce RTX 4090",
        "samples": samples,
        "mean_utilisation_pct": 64.0,
        "max_utilisation_pct": 64,
        "peak_vram_mb": 3000.0,
    }
    assert (
        f"- GPU 0 NVIDIA GeForce RTX 4090: utilisation mean 64 % (max 64 %, {samples:,} "
        "samples every 0.1 s), peak VRAM 3,000 MiB (the device's, every process)"
    ) in out


def test_gpu_usage_covers_the_whole_run_from_the_monitor() -> None:
    fake = FakeNvml()
    with GpuMonitor(fake, interval_s=0.002, max_samples=2) as monitor:
        fake.utilisation_pct, fake.used_mb = 100, 9000
        wait_for(lambda: [s.utilisation_pct for s in monitor.latest()] == [100])
        fake.utilisation_pct, fake.used_mb = 10, 1000
        wait_for(lambda: fake.utilisation_reads.count(10) > 5)
    reads = fake.utilisation_reads
    (usage,) = gpu_usage(monitor)
    assert usage == GpuUsage(
        0, "NVIDIA GeForce RTX 4090", len(reads), round(sum(reads) / len(reads), 1), 100, 9000.0
    )
    assert gpu_usage(GpuMonitor(fake)) == []  # never started: nothing sampled


def _device_section(**extra: Any) -> str:
    return tables.facts(
        {
            "engine": {"name": "piper", "voice": "v", "model_id": "m"},
            "device": {
                "gpu": {"devices": [], "reason": "none"},
                "provider": "CPU",
                "description": "CPU",
                "cpu_model": "x",
                "cpu_threads": 2,
                "cpu_workers": 2,
                "onnxruntime": "1",
                "python": "3",
                "platform": "linux",
            },
            "memory": MEMORY | {"peak_vram_mb": {"0": 5432.0}},
            **extra,
        }
    )


def test_gpu_usage_lines() -> None:
    busy = {
        "index": 0,
        "name": "NVIDIA H100",
        "samples": 1234,
        "mean_utilisation_pct": 87.4,
        "max_utilisation_pct": 100,
        "peak_vram_mb": 5432.0,
    }
    quiet = {
        "index": 1,
        "name": "NVIDIA T4",
        "samples": 0,
        "mean_utilisation_pct": None,
        "max_utilisation_pct": None,
        "peak_vram_mb": None,
    }
    lines = _device_section(gpu_usage=[busy, quiet]).splitlines()
    assert (
        "- GPU 0 NVIDIA H100: utilisation mean 87 % (max 100 %, 1,234 samples every 0.1 s), "
        "peak VRAM 5,432 MiB (the device's, every process)"
    ) in lines
    assert (
        "- GPU 1 NVIDIA T4: utilisation not reported by the board, peak VRAM n/a "
        "(the device's, every process)"
    ) in lines
    assert not any("peak VRAM" in line for line in lines if line.startswith("- peak RSS"))
    assert "- GPU use: no NVIDIA GPU sampled" in _device_section(gpu_usage=[])
    # A file from before GPU usage was kept renders as it did.
    old = _device_section()
    assert "GPU use" not in old and "; peak VRAM: GPU 0: 5,432 MiB" in old


def test_report_aggregates_result_files(
    supertonic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    results.mkdir()
    for label in ("laptop", "workstation"):
        _bench(
            [
                "--engine",
                "supertonic",
                "--steps",
                "2",
                "--sizes",
                "short",
                "--runs",
                "1",
                "--warmup",
                "0",
                "--matmul-seconds",
                "0",
                "--label",
                label,
                "--output",
                str(results / f"{label}.json"),
            ],
            capsys,
        )
    (results / "notes.json").write_text('{"something": "else"}')
    out = _bench(["--report", str(results), "--markdown", str(tmp_path / "report.md")], capsys)
    rows = [line for line in out.splitlines() if line.startswith(("| laptop", "| workstation"))]
    assert len(rows) == 2 and all("supertonic" in row for row in rows)
    assert "2 result file(s)" in (tmp_path / "report.md").read_text("utf-8")


def test_make_book_writes_the_narrated_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _bench(["--make-book", str(tmp_path / "b.epub"), "--chars", "5000"], capsys)
    book = read_epub(tmp_path / "b.epub")
    assert book.char_count >= 5000
    paragraphs = (tmp_path / "b.txt").read_text("utf-8").strip().split("\n\n")
    assert paragraphs == [p for chapter in book.chapters for p in chapter.paragraphs]


def test_synthetic_prose_has_no_repeated_chunks() -> None:
    # Identical chunks are synthesised once per job, which would flatter big-book runs.
    chunks = [c.text for c in chunk_paragraphs(synthetic_paragraphs(30_000), 70)]
    assert len(set(chunks)) == len(chunks)


@pytest.mark.parametrize("chars", [20, 150, 1_000, 5_000])
def test_synthetic_prose_is_as_long_as_asked_to_the_sentence(chars: int) -> None:
    # At least `chars`, and over it by less than one sentence: `--chars 20` reads a sentence,
    # not a paragraph of several.
    paragraphs = synthetic_paragraphs(chars)
    assert chars <= sum(len(p) for p in paragraphs) <= chars + MAX_SENTENCE_CHARS
    assert paragraphs == synthetic_paragraphs(chars)  # reproducibly


def test_flop_count_from_a_profile() -> None:
    events = [
        {
            "cat": "Node",
            "args": {
                "op_name": "Conv",  # 2·|y|·(C_in/g)·k = 2·(1·8·100)·4·3
                "input_type_shape": [{"float": [1, 4, 100]}, {"float": [8, 4, 3]}],
                "output_type_shape": [{"float": [1, 8, 100]}],
            },
        },
        {
            "cat": "Node",
            "args": {
                "op_name": "ConvTranspose",  # 2·|x|·(C_out/g)·k
                "input_type_shape": [{"float": [1, 8, 10]}, {"float": [8, 2, 16]}],
                "output_type_shape": [{"float": [1, 2, 80]}],
            },
        },
        {
            "cat": "Node",
            "args": {
                "op_name": "MatMul",  # 2·|y|·K
                "input_type_shape": [{"float": [5, 6]}, {"float": [6, 7]}],
                "output_type_shape": [{"float": [5, 7]}],
            },
        },
        {
            "cat": "Node",
            "args": {"op_name": "Add", "input_type_shape": [], "output_type_shape": []},
        },
        {"cat": "Session", "name": "model_run", "args": {}},
    ]
    assert count_flops(events) == 2 * 800 * 12 + 2 * 80 * 32 + 2 * 35 * 6


def test_compute_bound_arithmetic() -> None:
    bound = compute_bound(
        matmul_gflops=200.0,
        matmul_size=2048,
        gflop_per_audio_s=6.0,
        flop_source="test",
        basis="long",
        chars_per_s=100.0,
        chars_per_audio_s=15.0,
    )
    assert bound.bound_chars_per_s == pytest.approx(500.0)  # 200 ÷ (6 ÷ 15)
    assert bound.share == pytest.approx(0.2)
    unknown = compute_bound(200.0, 2048, None, "n/a", "long", 100.0, 15.0)
    assert unknown.share is None and unknown.bound_chars_per_s is None


def test_stats_and_stage_medians() -> None:
    assert Stats.of([3.0, 1.0, 2.0]) == Stats(2.0, 1.0, 3.0)
    timings = [
        Timing(1.0, 2.0, {"model": 0.8}),
        Timing(2.0, 2.0, {"model": 1.5}),
        Timing(1.2, 2.0, {"model": 1.0}),
    ]
    assert median_stages(timings) == {"model": 1.0, "other": 0.2}


MEMORY = {
    "peak_rss_mb": 180.0,
    "workers_peak_rss_mb": 5_000.0,
    "other_children_peak_rss_mb": 649.0,
    "children_peak_rss_mb": 5_649.0,
    "total_peak_rss_mb": 5_829.0,
    "sampled_peak_rss_mb": 1_759.0,
    "peak_vram_mb": {},
}


def test_the_memory_headline_is_the_simultaneous_peak() -> None:
    """Engine processes end before ffmpeg encodes: the sum of every process's own peak is an
    upper bound, never the peak."""
    result = {"engine": {"name": "piper"}, "synthesis": [], "memory": MEMORY}
    line = summary_line(result)
    assert (line["peak_rss_mb"], line["rss_upper_bound_mb"]) == (1_759.0, 5_829.0)
    facts = tables.facts(
        {
            **result,
            "engine": {"name": "piper", "voice": "v", "model_id": "m"},
            "device": {
                "gpu": {"devices": [], "reason": "none"},
                "provider": "CPU",
                "description": "CPU",
                "cpu_model": "x",
                "cpu_threads": 2,
                "cpu_workers": 2,
                "onnxruntime": "1",
                "python": "3",
                "platform": "linux",
            },
        }
    )
    assert "- peak RSS: 1,759 MiB (" in facts and "upper bound 5,829 MiB" in facts


def test_rss_check_render_and_child_command(tmp_path: Path) -> None:
    rows = [
        {
            "chars": 100_000,
            "wall_s": 30.0,
            "chars_per_s": 3333.0,
            "peak_rss_mb": 150.0,
            "workers_peak_rss_mb": 250.0,
            "other_children_peak_rss_mb": 100.0,
            "total_peak_rss_mb": 500.0,
            "sampled_peak_rss_mb": 450.0,
        },
        {
            "chars": 1_000_000,
            "wall_s": 300.0,
            "chars_per_s": 3333.0,
            "peak_rss_mb": 170.0,
            "workers_peak_rss_mb": 270.0,
            "other_children_peak_rss_mb": 110.0,
            "total_peak_rss_mb": 550.0,
            "sampled_peak_rss_mb": 480.0,
        },
    ]
    text = rss.render(rows)
    # Judged on the real (simultaneous) peak; the sum of per-process peaks is shown beside it.
    assert "peak growth from 100,000 to 1,000,000 chars: +6.7%" in text
    assert "sum of peaks +10.0%" in text and "OVER" not in text
    rows[1]["sampled_peak_rss_mb"] = 600.0
    assert "+33.3% (limit +20%: OVER)" in rss.render(rows)

    args = argparse.Namespace(engine="supertonic", voice=None, steps=[2], gpu=False, label=None)
    command = rss._child_command(args, tmp_path / "b.epub", tmp_path / "r.json")
    assert command[1:4] == ["-m", "audiopub", "bench"] and "--book" in command
    assert command[command.index("--steps") + 1] == "2"


def test_memory_counts_engine_workers_after_they_have_ended() -> None:
    """A job stops its engine processes before encoding; their peaks still count as workers."""
    with memory.sampling_memory(interval_s=0.05) as sampler:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=context) as pool:
            assert pool.submit(hold_memory, 80).result() > 0
        facts = sampler.facts()
    assert facts.workers_peak_rss_mb is not None and facts.workers_peak_rss_mb >= 80
    assert facts.sampled_peak_rss_mb is not None and facts.total_peak_rss_mb is not None
    assert facts.sampled_peak_rss_mb >= 80 and facts.total_peak_rss_mb >= facts.sampled_peak_rss_mb


def test_texts_have_the_reference_sizes() -> None:
    assert [len(TEXTS[s]) for s in ("short", "mid", "long")] == pytest.approx([60, 150, 270], abs=5)


def test_report_skips_foreign_files(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("not json")
    (tmp_path / "b.json").write_text('{"schema": "other/1"}')
    notes: list[str] = []
    assert tables.load_results(tmp_path, notes.append) == []
    assert len(notes) == 2


class _ClaimsCuda(ort.InferenceSession):
    """ORT's session as on a GPU machine, as far as Audiopub can tell: it was asked for CUDA
    and names CUDA first; the real work runs on the CPU. Records the CUDA options it got."""

    cuda_options: list[dict[str, str]] = []

    def __init__(
        self, path: Any, sess_options: Any = None, providers: Any = None, **kwargs: Any
    ) -> None:
        asked = [p for p in providers or [] if isinstance(p, tuple)]
        _ClaimsCuda.cuda_options += [
            options for name, options in asked if name == "CUDAExecutionProvider"
        ]
        super().__init__(path, sess_options, providers=["CPUExecutionProvider"], **kwargs)

    def get_providers(self) -> list[str]:
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]


def test_gpu_run_compares_cuda_settings_and_counts_node_placement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from audiopub.tts import onnx_runtime, registry

    _ClaimsCuda.cuda_options = []
    monkeypatch.setattr(registry, "_cache", {})  # its engines claim CUDA: none kept after
    monkeypatch.setattr(
        onnx_runtime,
        "available_providers",
        lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"],
    )
    monkeypatch.setattr(onnx_runtime.ort, "InferenceSession", _ClaimsCuda)
    # The run's own settings are among those compared: that engine, placed for the run, is
    # compared as it is rather than loaded again.
    monkeypatch.setenv("AUDIOPUB_CUDA_TUNING", "max_workspace,pad_nc1d")
    output = tmp_path / "gpu.json"
    out = _bench(
        [
            "--gpu",
            "--sizes",
            "short",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--batch-size",
            "4",
            "--cuda-tuning",
            "default,max_workspace+pad_nc1d,fp16_decoder",
            "--matmul-seconds",
            "0",
            "--output",
            str(output),
        ],
        capsys,
    )

    data = _valid(output)
    assert data["device"]["provider"] == "CUDAExecutionProvider"
    assert data["cuda_tuning"] == "max_workspace+pad_nc1d"  # what the run itself was made with
    assert set(data["node_placement"]) == {"CPUExecutionProvider"}  # what really ran: the CPU
    assert [cell["tuning"] for cell in data["tuning"]] == [
        "default",
        "max_workspace+pad_nc1d",
        "fp16_decoder",
    ]
    assert all(
        cell["chars"] == len(TEXTS["long"]) and cell["chars_per_s"]["median"] > 0
        for cell in data["tuning"]
    )
    placed = [cell["node_placement"]["CPUExecutionProvider"] for cell in data["tuning"]]
    cpu_nodes = data["node_placement"]["CPUExecutionProvider"]
    # The half-precision graph runs Casts at the decoder's edges (ORT's optimiser may fold one).
    assert placed[:2] == [cpu_nodes, cpu_nodes] and cpu_nodes < placed[2] <= cpu_nodes + 2
    # Each setting's engine was made under it; the settings are as they were after.
    tuned = [
        {key for key in options if key.startswith("cudnn_conv_use") or "nc1d" in key}
        for options in _ClaimsCuda.cuda_options
    ]
    assert set() in tuned and {"cudnn_conv_use_max_workspace", "cudnn_conv1d_pad_to_nc1d"} in tuned
    # Under the run's own settings: its engine and the one placed for it, compared as it is.
    assert tuned.count({"cudnn_conv_use_max_workspace", "cudnn_conv1d_pad_to_nc1d"}) == 2
    assert os.environ["AUDIOPUB_CUDA_TUNING"] == "max_workspace,pad_nc1d"
    assert settings.cuda_tuning() == {"max_workspace", "pad_nc1d"}
    assert "### Optional CUDA settings, interleaved on the long text" in out
    assert re.search(
        r"\| max_workspace\+pad_nc1d \| GPU \(CUDA\) \| [\d,]+ on CPU \| [\d,]+ "
        r".* \| identical \|",
        out,
    )
    # The half-precision decoder really ran (the CPU runs float16 too): its audio differs from
    # the default's by rounding alone; the cuDNN settings, which the CPU ignores, not at all.
    default, cudnn, half = (cell["difference"] for cell in data["tuning"])
    assert default == cudnn == 0.0 and 0 < half < 1e-3
    assert re.search(r"\| fp16_decoder \| GPU \(CUDA\) \| .* \| -\d\d dB \|", out)
    assert re.search(r"- nodes: [\d,]+ on CPU; CUDA settings: max_workspace\+pad_nc1d", out)


def test_an_unknown_cuda_setting_is_refused_by_the_arguments(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "--cuda-tuning", "default,fast"])
    assert (
        "unknown fast; the settings are max_workspace, pad_nc1d, fp16_decoder"
        in capsys.readouterr().err
    )
