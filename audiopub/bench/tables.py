"""Markdown for people: the tables of one result, and a comparison of many result files.

Everything here reads the JSON form (`BenchResult.to_dict()` or a file), so a report made
on one machine renders the same from files written on others.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from audiopub.bench.results import SCHEMA_ID

Result = Mapping[str, Any]


def _table(
    header: Sequence[str], rows: Iterable[Sequence[Any]], align: Sequence[str] | None = None
) -> str:
    align = align or ["---", *(["---:"] * (len(header) - 1))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _steps(value: int | None) -> str:
    return "—" if value is None else str(value)


def _spread(stats: Mapping[str, float], digits: int) -> str:
    return f"{stats['median']:,.{digits}f} ({stats['min']:,.{digits}f}–{stats['max']:,.{digits}f})"


def _grid(result: Result, metric: str, digits: int) -> str:
    cells = result["synthesis"]
    sizes = list(dict.fromkeys(c["size"] for c in cells))
    chars = {c["size"]: c["chars"] for c in cells}
    steps = list(dict.fromkeys(c["steps"] for c in cells))
    by_key = {(c["steps"], c["size"]): c for c in cells}
    header = ["steps", *(f"{size} ({chars[size]} chars)" for size in sizes)]
    rows = [
        [_steps(s), *(_spread(by_key[s, size][metric], digits) for size in sizes)] for s in steps
    ]
    return _table(header, rows)


def synthesis_tables(result: Result) -> str:
    runs = result["settings"]["runs"]
    where = (
        f"{result['device']['description']}, engine in this process "
        f"({_threads(result['device']['engine_threads'])})"
    )
    note = f"median (min–max) of {runs} runs after {result['settings']['warmup']} warm-up; {where}"
    return "\n\n".join(
        [
            f"### Characters per second, wall clock (higher is better)\n\n{note}\n\n"
            + _grid(result, "chars_per_s", 0),
            "### Real-time factor: wall-clock seconds per second of audio (lower is better)\n\n"
            + _grid(result, "rtf", 4),
            "### Time per stage, ms (median per run)\n\n" + stage_table(result["synthesis"]),
        ]
    )


def _threads(threads: int | None) -> str:
    return "ORT default threads" if threads is None else f"{threads} intra-op threads"


def stage_table(cells: Sequence[Mapping[str, Any]]) -> str:
    names = list(dict.fromkeys(name for c in cells for name in c["stages"]))
    rows = [
        [_steps(c["steps"]), c["size"], *(f"{1000 * c['stages'].get(n, 0.0):,.1f}" for n in names)]
        for c in cells
    ]
    return _table(["steps", "size", *names], rows, ["---:", "---", *(["---:"] * len(names))])


def compare_table(result: Result) -> str:
    rows = [
        [
            _steps(c["steps"]),
            f"{c['workload']} ({c['chars']:,} chars)",
            _spread(c["pipeline_s"], 3),
            _spread(c["plain_s"], 3),
            f"{c['ratio']:.2f}×",
        ]
        for c in result["compare"]
    ]
    return (
        f"### Audiopub's pipeline vs the engine's plain one-chunk loop, interleaved\n\n"
        f"pipeline = {result['compare_executor']}; plain = one engine.synthesize call per "
        f"chunk in this process. Ratio = plain ÷ pipeline (above 1: the pipeline is "
        f"faster).\n\n"
        + _table(
            ["steps", "text", "pipeline s", "plain s", "ratio"],
            rows,
            ["---:", "---", "---:", "---:", "---:"],
        )
    )


def beside_table(result: Result) -> str:
    """--engine and --beside, interleaved: each engine's figures per text, then their ratio."""
    cells = result["beside"]
    first, second = (side["engine"] for side in cells[0]["engines"])
    rows = []
    for cell in cells:
        text = f"{cell['size']} ({cell['chars']} chars)"
        for side in cell["engines"]:
            steps = "" if side["steps"] is None else f", {side['steps']} steps"
            rows.append(
                [
                    text,
                    f"{side['engine']} ({side['voice']}{steps})",
                    side["provider"].removesuffix("ExecutionProvider"),
                    _spread(side["chars_per_s"], 1),
                    _spread(side["rtf"], 4),
                ]
            )
            text = ""
        rows.append(
            [
                "",
                f"ratio {first} ÷ {second}",
                "",
                f"{cell['time_per_char_ratio']:.2f}×",
                f"{cell['rtf_ratio']:.2f}×",
            ]
        )
    settings = result["settings"]
    return (
        f"### {first} beside {second}: the same text, interleaved in one run\n\n"
        f"Rounds alternate the engines, the order reversed every other round; median "
        f"(min–max) of {settings['runs']} runs after {settings['warmup']} warm-up; "
        f"{result['device']['description']}. Ratios are of the medians: {first}'s time "
        f"per character (its chars/s column: {second}'s ÷ {first}'s) and real-time factor "
        f"÷ {second}'s; above 1, {first} is the slower.\n\n"
        + _table(
            ["text", "engine", "provider", "chars/s", "RTF"],
            rows,
            ["---", "---", "---", "---:", "---:"],
        )
    )


def book_tables(book: Mapping[str, Any]) -> str:
    names = list(dict.fromkeys(n for run in book["runs"] for n in run["stages"]))
    rows = [
        [
            run["run"],
            _steps(run["steps"]),
            f"{run['wall_s']:.2f}",
            f"{run['chars_per_s']:,.0f}",
            f"{run['rtf']:.4f}",
            *(f"{run['stages'][n]:.2f}" for n in names),
        ]
        for run in book["runs"]
    ]
    runs = _table(["run", "steps", "wall s", "chars/s", "RTF", *(f"{n} s" for n in names)], rows)
    summary = _table(
        ["steps", "wall s", "chars/s", "RTF"],
        [
            [
                _steps(s["steps"]),
                _spread(s["wall_s"], 2),
                _spread(s["chars_per_s"], 0),
                _spread(s["rtf"], 4),
            ]
            for s in book["summary"]
        ],
    )
    return (
        f"### Book: {book['title']} — {book['mode'].replace('_', ' ')}\n\n"
        f"{book['chars']:,} chars in {book['chunks']:,} chunks, {book['chapters']} chapters; "
        f"executor: {book['executor']} × {book['workers']}; planning took "
        f"{book['plan_s']:.2f} s (once, not in the runs). chars/s and RTF on the wall clock."
        + (
            " engine_busy = engine time summed over chunks and workers, not a phase."
            if "engine_busy" in names
            else ""
        )
        + f"\n\n{runs}\n\n{summary}"
    )


def facts(result: Result) -> str:
    device, engine = result["device"], result["engine"]
    gpu = device["gpu"]
    gpus = (
        "; ".join(
            f"{g['name']} (driver {g['driver_version']}, CUDA "
            f"{g['cuda_driver_version']}, compute {g['compute_capability']})"
            for g in gpu["devices"]
        )
        or f"none — {gpu['reason']}"
    )
    lines = [
        f"- engine: {engine['name']}, voice {engine['voice']} ({engine['model_id']})",
        f"- provider: {device['provider']} — {device['description']}",
        (
            f"- CPU: {device['cpu_model']}, {device['cpu_threads']} threads; "
            f"production executor: {device['cpu_workers']} engine process(es)"
        ),
        f"- GPU: {gpus}",
        *gpu_usage_lines(result),
        *batching_lines(result),
        *placement_lines(result),
        f"- onnxruntime {device['onnxruntime']}, Python {device['python']}, {device['platform']}",
    ]
    memory = result.get("memory")
    if memory:
        # Files with GPU usage state peak VRAM on its lines above, device by device.
        vram = (
            ""
            if "gpu_usage" in result
            else "; peak VRAM: "
            + (
                ", ".join(f"GPU {i}: {mb:,.0f} MiB" for i, mb in memory["peak_vram_mb"].items())
                or "n/a"
            )
        )
        lines.append(
            f"- peak RSS: {_mb(_peak_rss(memory))} (this process and its children at "
            f"once, sampled every 0.1 s); upper bound "
            f"{_mb(memory['total_peak_rss_mb'])}, the sum of per-process peaks "
            f"(this process {_mb(memory['peak_rss_mb'])}, "
            f"engine workers {_mb(memory['workers_peak_rss_mb'])}, "
            f"largest other child {_mb(memory['other_children_peak_rss_mb'])}){vram}"
        )
    compute = result.get("compute")
    if compute:
        lines.append(compute_line(compute))
    return "### Device\n\n" + "\n".join(lines)


def gpu_usage_lines(result: Result) -> list[str]:
    """One line per GPU sampled during the run: how busy it was and its peak VRAM. Nothing for
    files written before these figures were kept."""
    if "gpu_usage" not in result:
        return []
    if not result["gpu_usage"]:
        return ["- GPU use: no NVIDIA GPU sampled"]
    lines = []
    for gpu in result["gpu_usage"]:
        busy = (
            "utilisation not reported by the board"
            if not gpu["samples"]
            else f"utilisation mean {gpu['mean_utilisation_pct']:.0f} % "
            f"(max {gpu['max_utilisation_pct']} %, {gpu['samples']:,} samples every 0.1 s)"
        )
        lines.append(
            f"- GPU {gpu['index']} {gpu['name']}: {busy}, "
            f"peak VRAM {_mb(gpu['peak_vram_mb'])} (the device's, every process)"
        )
    return lines


def placement_lines(result: Result) -> list[str]:
    """Where the model's nodes ran, and the optional CUDA settings in force."""
    if "node_placement" not in result:  # files written before it was counted
        return []
    return [
        f"- nodes: {placement(result['node_placement'])}; CUDA settings: {result['cuda_tuning']}"
    ]


def placement(nodes: Mapping[str, int]) -> str:
    """ "1,890 on CUDA, 12 on CPU" from {"CUDAExecutionProvider": 1890, ...}."""
    return (
        ", ".join(
            f"{count:,} on {provider.removesuffix('ExecutionProvider')}"
            for provider, count in sorted(nodes.items(), key=lambda item: -item[1])
        )
        or "none counted"
    )


def tuning_table(cells: Sequence[Mapping[str, Any]], text: str = "the long text") -> str:
    """The optional CUDA settings compared (tuning cells), as a table under a heading."""
    rows = [
        [
            cell["tuning"],
            cell["device"],
            placement(cell["node_placement"]),
            _spread(cell["chars_per_s"], 0),
            _difference(cell.get("difference")),
        ]
        for cell in cells
    ]
    return f"### Optional CUDA settings, interleaved on {text}\n\n" + _table(
        ["settings", "device", "nodes", "chars/s", "audio vs the first"], rows
    )


def _difference(relative: float | None) -> str:
    """ "identical", or the difference's level below the signal: "-66 dB"."""
    if relative is None:
        return "other length"
    return "identical" if relative == 0 else f"{20 * math.log10(relative):.0f} dB"


def batching_lines(result: Result) -> list[str]:
    """The batch size allowed, the batches the production executor ran, each device's share."""
    batching = result.get("batching")
    if not batching:
        return []
    how = "forced" if batching["forced"] else "the device's default"
    ran = ", ".join(
        f"{count:,} × {size}"
        for size, count in sorted(batching["batches"].items(), key=lambda item: -int(item[0]))
    )
    lines = [
        f"- batches: up to {batching['max_items']} chunks ({how})" + (f"; ran {ran}" if ran else "")
    ]
    shares = batching["device_chunks"]
    if shares:
        total = sum(shares.values()) or 1
        lines.append(
            "- chunks per device: "
            + ", ".join(
                f"{device} {count:,} ({count / total:.0%})" for device, count in shares.items()
            )
        )
    return lines


def _peak_rss(memory: Mapping[str, Any]) -> float | None:
    """The run's real peak: the highest simultaneous sum, where it could be sampled (Linux);
    elsewhere only this process's own peak is known."""
    sampled = memory.get("sampled_peak_rss_mb")
    return sampled if sampled is not None else memory.get("peak_rss_mb")


def _mb(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f} MiB"


def compute_line(compute: Mapping[str, Any]) -> str:
    head = (
        f"- float32 matmul: {compute['matmul_gflops']:,.1f} GFLOP/s "
        f"({compute['matmul_size']}² NumPy); model: "
    )
    if compute["share"] is None:
        return head + f"{compute['flop_source']}; no compute bound"
    per_char = compute["model_gflop_per_audio_s"] / compute["chars_per_audio_s"]
    return (
        head + f"{compute['model_gflop_per_audio_s']} GFLOP per audio second "
        f"({compute['flop_source']}), {compute['chars_per_audio_s']:.1f} chars per audio "
        f"second\n- share of compute bound ({compute['basis']}) = measured chars/s ÷ "
        f"(GFLOP/s ÷ GFLOP per char) = {compute['measured_chars_per_s']:,.1f} ÷ "
        f"({compute['matmul_gflops']:,.1f} ÷ {per_char:.4f}) = "
        f"{compute['measured_chars_per_s']:,.1f} ÷ {compute['bound_chars_per_s']:,.0f} = "
        f"**{100 * compute['share']:.1f}%**"
    )


def render(result: Result) -> str:
    parts = [f"## audiopub bench — {result['label']}, {result['created']}"]
    if result["synthesis"]:
        parts.append(synthesis_tables(result))
    if result["book"]:
        parts.append(book_tables(result["book"]))
    if result.get("beside"):
        parts.append(beside_table(result))
    if result["compare"]:
        parts.append(compare_table(result))
    if result.get("tuning"):
        parts.append(tuning_table(result["tuning"]))
    parts.append(facts(result))
    return "\n\n".join(parts) + "\n"


# --- --report DIR ---------------------------------------------------------------------------


def load_results(
    folder: Path, warn: Callable[[str], None] = lambda m: print(m, file=sys.stderr)
) -> list[dict[str, Any]]:
    """Every audiopub-bench result in `folder` (other JSON files are skipped with a note)."""
    results = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            warn(f"skipping {path.name}: {exc}")
            continue
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_ID:
            warn(f"skipping {path.name}: not an {SCHEMA_ID} result")
            continue
        results.append(data | {"_file": path.name})
    return results


def _hardware(result: Result) -> str:
    device = result["device"]
    if device["provider"] != "CPUExecutionProvider" and device["gpu"]["devices"]:
        return device["gpu"]["devices"][0]["name"]
    return f"{device['cpu_model']} ×{device['cpu_threads']}"


def _rows(result: Result) -> Iterable[list[Any]]:
    common = [
        result["label"],
        _hardware(result),
        result["device"]["provider"].removesuffix("ExecutionProvider"),
        result["engine"]["name"],
        result["engine"]["voice"],
    ]
    rss = _mb(_peak_rss(result.get("memory") or {}))
    for cell in result["synthesis"]:
        yield [
            *common,
            _steps(cell["steps"]),
            f"{cell['size']} ({cell['chars']})",
            f"{cell['chars_per_s']['median']:,.0f}",
            f"{cell['rtf']['median']:.4f}",
            rss,
        ]
    book = result.get("book")
    if not book:
        return
    for summary in book["summary"]:
        yield [
            *common,
            _steps(summary["steps"]),
            f"book, {book['mode'].replace('_', ' ')} ({book['chars']:,})",
            f"{summary['chars_per_s']['median']:,.0f}",
            f"{summary['rtf']['median']:.4f}",
            rss,
        ]


def report(results: Sequence[Result]) -> str:
    header = [
        "machine",
        "CPU / GPU",
        "provider",
        "engine",
        "voice",
        "steps",
        "text",
        "chars/s",
        "RTF",
        "peak RSS",
    ]
    rows = [row for result in results for row in _rows(result)]
    files = ", ".join(r.get("_file", r["label"]) for r in results)
    return (
        f"## Audiopub benchmark comparison\n\n{len(results)} result file(s): {files}. "
        "Medians; chars/s higher is better, RTF lower is better.\n\n"
        + _table(header, rows, ["---"] * 7 + ["---:"] * 3)
        + "\n"
    )
