"""`audiopub doctor`'s report.md, and one table of every device folder's summary
(`audiopub doctor --report DIR`), so reports from different cards compare at a glance."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from audiopub.bench.tables import placement, tuning_table

Facts = Mapping[str, Any]


def _speed(side: Facts | None) -> str:
    if not side:
        return "—"
    stats = side["chars_per_s"]
    return f"{stats['median']:,.0f} ({stats['min']:,.0f}–{stats['max']:,.0f})"


def _vram(values: Mapping[str, float] | None) -> str:
    return ", ".join(f"GPU {index}: {mb:,.0f} MiB" for index, mb in (values or {}).items()) or "n/a"


def render_report(info: Facts, summary: Facts) -> str:
    gpus = info["gpu"]["devices"]
    lines = [f"## audiopub doctor — {summary['label']}, {summary['created']}", ""]
    if summary["no_gpu"]:
        lines += [f"**{summary['no_gpu']}.** Only the CPU was measured.", ""]
    lines += [
        f"- audiopub {info['audiopub']}, Python {info['python']}, onnxruntime "
        f"{info['onnxruntime']} ({', '.join(info['providers'])}), {info['platform']}",
        "- GPU: "
        + (
            "; ".join(
                f"{g['name']} (driver {g['driver_version']}, CUDA "
                f"{g['cuda_driver_version']}, compute {g['compute_capability']}"
                f", {g['vram_total_mb']:,} MiB)"
                for g in gpus
            )
            or f"none — {info['gpu']['reason']}"
        ),
        "- CUDA libraries: "
        + ", ".join(
            f"{name} {path or 'not found'}" for name, path in info["cuda_libraries"].items()
        ),
        f"- CPU: {info['cpu']['model']}, {info['cpu']['usable_cores']} usable cores, "
        f"{info['cpu']['available_memory_mb']:,} MiB available",
        f"- CUDA settings: {info['cuda_tuning']}",
        "",
        f"### {summary['engine']} ({summary['voice']}): {summary['chars']:,} characters, "
        f"{summary['chunks']} chunks, {summary['runs']} timed run(s) each, interleaved",
        "",
        f"| executor ({summary.get('runtime', 'onnx')} unless named) | device | "
        "chars/s median (min–max) | nodes | batches |",
        "|---|---|---:|---|---|",
    ]
    for name in ("gpu", "cpu"):
        side = summary[name]
        if side:
            batches = ", ".join(f"{count} × {size}" for size, count in side["batches"].items())
            lines.append(
                f"| {name.upper()} | {side['device']} | {_speed(side)} | "
                f"{placement(side['node_placement'])} | {batches} |"
            )
    for runtime, side in summary.get("runtimes", {}).items():
        if "chars_per_s" in side:
            batches = ", ".join(f"{count} × {size}" for size, count in side["batches"].items())
            lines.append(
                f"| {side['placed'].upper()}, {runtime} | {side['device']} | {_speed(side)} | "
                f"— | {batches} |"
            )
    lines.append("")
    for runtime, side in summary.get("runtimes", {}).items():
        if "chars_per_s" in side:
            lines.append(f"- {runtime} on the {side['placed'].upper()} ÷ CPU: {side['over_cpu']}×")
        else:
            lines.append(f"- {runtime}: not timed — {side['not_timed']}")
    if summary["gpu"]:
        gpu = summary["gpu"]
        lines += [
            f"- GPU ÷ CPU: {summary['gpu_over_cpu']}×",
            f"- peak VRAM: this process {_vram(gpu['peak_vram_mb'])}; the device "
            f"{_vram(gpu['device_peak_vram_mb'])}",
        ]
    if summary.get("cuda_settings"):
        lines += ["", tuning_table(summary["cuda_settings"], "the same text").rstrip("\n")]
    return "\n".join(lines) + "\n"


def load_summaries(folder: Path) -> list[dict[str, Any]]:
    """Every device folder's benchmark_summary.json under `folder`, with its gpu_info.json."""
    found = []
    for path in sorted(folder.glob("*/benchmark_summary.json")):
        try:
            summary = json.loads(path.read_text("utf-8"))
            info = json.loads((path.parent / "gpu_info.json").read_text("utf-8"))
        except (OSError, ValueError):
            continue
        found.append({"folder": path.parent.name, "info": info, "summary": summary})
    return found


def comparison(folder: Path) -> str | None:
    """One row per device folder: the card, its driver and ORT, both speeds, the ratio."""
    rows = load_summaries(folder)
    if not rows:
        return None
    lines = [
        "| device | GPU | driver | onnxruntime | GPU chars/s | CPU chars/s | GPU ÷ CPU | "
        "GPU nodes | peak VRAM |",
        "|---|---|---|---|---:|---:|---:|---|---|",
    ]
    for row in rows:
        info, summary = row["info"], row["summary"]
        gpus = info["gpu"]["devices"]
        gpu = summary["gpu"]
        lines.append(
            " | ".join(
                [
                    f"| {row['folder']}",
                    gpus[0]["name"] if gpus else "none",
                    gpus[0]["driver_version"] if gpus else "—",
                    info["onnxruntime"],
                    _speed(gpu),
                    _speed(summary["cpu"]),
                    f"{summary['gpu_over_cpu']}×" if gpu else "—",
                    placement(gpu["node_placement"]) if gpu else "—",
                    _vram(gpu["peak_vram_mb"]) if gpu else "—",
                ]
            )
            + " |"
        )
    return "\n".join(lines) + "\n"
