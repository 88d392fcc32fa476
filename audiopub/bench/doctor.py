"""`audiopub doctor`: the one command a person with a GPU runs and sends back.

It states what the machine has (versions, ONNX Runtime's providers, the NVIDIA driver, the
CUDA and cuDNN libraries that load), then times a short batched run of synthetic prose through
Audiopub's production executors: the GPU's (one engine per device, padded batches) and the
CPU's (one engine process per core), interleaved so neither always runs on a warmer machine.
It counts where the model's nodes ran and the peak VRAM, and writes three files into a folder
named after the device, so that folders from different cards sit side by side and
`audiopub doctor --report DIR` puts them in one table:

    <gpu name>/gpu_info.json            versions, providers, driver, libraries, GPUs, CPU
    <gpu name>/benchmark_summary.json   chars/s on the GPU and on the CPU, ratio, nodes, VRAM
    <gpu name>/report.md                the same for people

Without a usable GPU it says so plainly (and why), and still measures the CPU. The timing is
`bench.measure` (the runners and their interleaving) on the executors `jobs.executor` picks.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import sys
import tempfile
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any, Final

import onnxruntime

from audiopub import __version__, settings
from audiopub.atomic import atomic_write
from audiopub.bench.doctor_report import render_report
from audiopub.bench.doctor_system import cuda_libraries
from audiopub.bench.machine import cpu_model, gpu_facts
from audiopub.bench.measure import Workload, interleaved, plan_text, run_executor
from audiopub.bench.results import Stats, Timing
from audiopub.bench.texts import TEXTS_LANGUAGE, synthetic_paragraphs
from audiopub.bench.tuning import compare_tunings, placed_engine, tuning_name
from audiopub.errors import AudiopubError
from audiopub.gpu.monitor import GpuMonitor
from audiopub.jobs.chunk_executor import ChunkExecutor
from audiopub.jobs.cpu_sizing import available_memory_bytes, usable_cores
from audiopub.jobs.executor import default_batch_size, executor_for
from audiopub.tts import onnx_runtime
from audiopub.tts.engine import Engine, SynthesisOptions
from audiopub.tts.kokoro.environment import RUNTIME as KOKORO_RUNTIME
from audiopub.tts.registry import engine_info, get_engine, load_engine

SCHEMA_ID: Final = "audiopub-doctor/1"
# On a GPU, the optional CUDA settings are timed one by one against none: what a report needs to
# say whether one should be on by default.
SETTINGS_COMPARED: Final = [frozenset(), *(frozenset({name}) for name in settings.CUDA_TUNINGS)]
GPU_INFO, SUMMARY, REPORT = "gpu_info.json", "benchmark_summary.json", "report.md"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Steps:
    """One line on stderr per measurement, before it starts: "doctor: [3/8] timed run 1 of 3,
    CPU". A run of the CPU side alone can take minutes; without them the command looked hung."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0

    def __call__(self, what: str) -> None:
        self.done += 1
        _log(f"doctor: [{self.done}/{self.total}] {what}")


def device_folder(gpus: list[dict[str, Any]], cpu: str) -> str:
    """The folder's name: the first GPU's ("NVIDIA-H100-80GB-HBM3"), else "cpu-" and the CPU's,
    in characters every file system takes."""
    name = gpus[0]["name"] if gpus else f"cpu {cpu}"
    return re.sub(r"[^A-Za-z0-9.]+", "-", name).strip("-.") or "unknown-device"


def gpu_info(engine_name: str) -> dict[str, Any]:
    """What the machine has, before anything is timed."""
    facts = gpu_facts()
    memory = available_memory_bytes()
    return {
        "schema": SCHEMA_ID,
        "audiopub": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "onnxruntime": onnxruntime.__version__,
        "providers": onnx_runtime.available_providers(),
        "nvidia_driver_loads": onnx_runtime.nvidia_driver_present(),
        "cuda_libraries": cuda_libraries(),
        "cuda_tuning": tuning_name(settings.cuda_tuning()),
        "gpu": asdict(facts),
        "cpu": {
            "model": cpu_model(),
            "usable_cores": usable_cores(),
            "available_memory_mb": round(memory / 2**20),
        },
        "engine": engine_name,
    }


def workload(chars: int, engine: Engine) -> Workload:
    """`chars` characters of synthetic prose, chunked as a job chunks a book."""
    chunks = [
        chunk.spoken
        for paragraph in synthetic_paragraphs(chars)
        for chunk in plan_text(paragraph, engine.max_chunk_chars)
    ]
    return Workload("doctor", tuple(chunks))


def _side(
    label: str,
    engine: Engine,
    executor: ChunkExecutor,
    timings: list[Timing],
    chars: int,
    nodes: dict[str, int],
) -> dict[str, Any]:
    return {
        "device": label,
        "provider": engine.device.provider,
        "chars_per_s": asdict(Stats.of([chars / t.seconds for t in timings])),
        "seconds": asdict(Stats.of([t.seconds for t in timings])),
        "batches": {str(size): count for size, count in sorted(executor.batch_sizes.items())},
        "node_placement": nodes,
    }


def _runtimes_asked(args: argparse.Namespace) -> list[str]:
    """The runtimes to time: those asked, else every one the engine has (its default first).
    Kokoro alone has more than one: the runtime in force is its setting (`KOKORO_RUNTIME`)."""
    return list(args.runtime or engine_info(args.engine).runtimes)


def _other_runtimes(
    args: argparse.Namespace,
    info: dict[str, Any],
    voice: str,
    sides: list[tuple[str, Engine, ChunkExecutor]],
) -> dict[str, dict[str, Any]]:
    """The engine on each runtime after the first, on the GPU where one is there and CUDA
    works through that runtime, else on the CPU, added to `sides` to take turns with the
    others; a runtime that can't be had here is reported with the reason, untimed."""
    found: dict[str, dict[str, Any]] = {}
    wants_gpu = bool(info["gpu"]["devices"])
    for runtime in _runtimes_asked(args)[1:]:
        with settings.installed(KOKORO_RUNTIME.given(settings.current(), runtime)):
            try:
                engine = load_engine(args.engine, use_gpu=wants_gpu)
                placed = "gpu" if engine.device.on_gpu else "cpu"
                executor = executor_for(args.engine, engine, voice=voice)
            except AudiopubError as exc:
                _log(f"doctor: the {runtime} runtime is not timed: {exc}")
                found[runtime] = {"not_timed": str(exc)}
                continue
        found[runtime] = {"placed": placed}
        sides.append((runtime, engine, executor))
    return found


def measure(args: argparse.Namespace, info: dict[str, Any], scratch: Path) -> dict[str, Any]:
    """Time the GPU's executor (when a GPU session can be had) and the CPU's, interleaved."""
    cpu_engine = get_engine(args.engine, use_gpu=False)
    voice = args.voice or cpu_engine.voices()[0].id
    options = SynthesisOptions(seed=0, language=TEXTS_LANGUAGE)
    work = workload(args.chars, cpu_engine)
    no_gpu = None if info["gpu"]["available"] else info["gpu"]["reason"]
    gpu_engine = None
    if no_gpu is None:
        gpu_engine = get_engine(args.engine, use_gpu=True)
        if not gpu_engine.device.on_gpu:
            no_gpu = (
                f"An NVIDIA GPU is there, but ONNX Runtime runs on the CPU: "
                f"{gpu_engine.device.fallback_reason}"
            )
            gpu_engine = None
    sides: list[tuple[str, Engine, ChunkExecutor]] = []
    if gpu_engine is not None:
        sides.append(("gpu", gpu_engine, executor_for(args.engine, gpu_engine, voice=voice)))
    sides.append(("cpu", cpu_engine, executor_for(args.engine, cpu_engine)))
    runtimes = _other_runtimes(args, info, voice, sides)
    runners = [
        partial(run_executor, executor, work, voice, options, scratch / name)
        for name, _, executor in sides
    ]
    names = [
        name.upper() if name in ("gpu", "cpu") else f"{runtimes[name]['placed'].upper()}, {name}"
        for name, _, _ in sides
    ]
    per_side = args.warmup + args.runs + 1  # and one run that counts where the nodes ran
    compared = len(SETTINGS_COMPARED) if gpu_engine is not None else 0
    step = Steps(len(sides) * per_side - len(runtimes) + compared * per_side)
    _log(
        f"doctor: {work.chars:,} characters, {len(work.chunks)} chunks, on "
        f"{' and '.join(names)}: {args.warmup} warm-up + {args.runs} timed run(s) each, "
        f"interleaved{f', then {compared} CUDA settings' if compared else ''}: "
        f"{step.total} steps"
    )
    try:
        with GpuMonitor() as monitor:
            timings = interleaved(runners, args.runs, args.warmup, names, step)
        device_vram = monitor.peak_vram_mb()
        measured = {}
        gpu_placed = None  # the GPU's engine under the settings in force: compared below too
        for (name, engine, executor), side in zip(sides, timings, strict=True):
            label = " + ".join(executor.describe().devices)
            if name not in ("gpu", "cpu"):  # another runtime: no ONNX graph to place
                runtimes[name].update(_side(label, engine, executor, side, work.chars, {}))
                continue
            step(f"node placement, {name.upper()}")
            placed = placed_engine(args.engine, name == "gpu", voice, options)
            measured[name] = _side(label, engine, executor, side, work.chars, placed.nodes)
            if name == "gpu":
                gpu_placed = placed
                measured[name]["peak_vram_mb"] = {
                    str(k): round(v, 1) for k, v in executor.peak_vram_mb.items()
                }
                measured[name]["device_peak_vram_mb"] = {
                    str(k): round(v, 1) for k, v in device_vram.items()
                }
    finally:
        for _, _, executor in sides:
            executor.close()
    gpu, cpu = measured.get("gpu"), measured["cpu"]
    ratio = round(gpu["chars_per_s"]["median"] / cpu["chars_per_s"]["median"], 2) if gpu else None
    for other in runtimes.values():
        if "chars_per_s" in other:
            other["over_cpu"] = round(
                other["chars_per_s"]["median"] / cpu["chars_per_s"]["median"], 2
            )
    cuda_settings = []
    if gpu_engine is not None:
        _log(
            f"doctor: the CUDA settings {', '.join(map(tuning_name, SETTINGS_COMPARED))}, "
            "interleaved on the GPU"
        )
        cuda_settings = [
            asdict(cell)
            for cell in compare_tunings(
                args.engine,
                SETTINGS_COMPARED,
                voice,
                options,
                " ".join(work.chunks),
                default_batch_size(gpu_engine),
                args.runs,
                args.warmup,
                step,
                [gpu_placed] if gpu_placed is not None else [],
            )
        ]
    return {
        "schema": SCHEMA_ID,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "label": args.label or platform.node() or "unknown",
        "engine": args.engine,
        "voice": voice,
        "chars": work.chars,
        "chunks": len(work.chunks),
        "runs": args.runs,
        "warmup": args.warmup,
        "no_gpu": no_gpu,
        "gpu": gpu,
        "cpu": cpu,
        "gpu_over_cpu": ratio,
        "cuda_settings": cuda_settings,
        "runtime": _runtimes_asked(args)[0],
        "runtimes": runtimes,
    }


def _write(path: Path, text: str) -> None:
    with atomic_write(path) as partial_file:  # a report is whole or absent
        partial_file.write_text(text, "utf-8")


def run_doctor(args: argparse.Namespace) -> int:
    info = gpu_info(args.engine)
    folder = (args.output / device_folder(info["gpu"]["devices"], info["cpu"]["model"])).resolve()
    _log(f"doctor: the report goes to {folder}/")
    if not info["gpu"]["available"]:
        _log(
            f"doctor: no NVIDIA GPU on this machine ({info['gpu']['reason']}); "
            "measuring the CPU only"
        )
    # The first runtime is the one the GPU and CPU rows run on, whatever the setting says.
    first = KOKORO_RUNTIME.given(settings.current(), _runtimes_asked(args)[0])
    with (
        tempfile.TemporaryDirectory(prefix="audiopub-doctor-") as scratch,
        settings.installed(first),
    ):
        summary = measure(args, info, Path(scratch))
    folder.mkdir(parents=True, exist_ok=True)
    report = render_report(info, summary)
    _write(folder / GPU_INFO, json.dumps(info, indent=2) + "\n")
    _write(folder / SUMMARY, json.dumps(summary, indent=2) + "\n")
    _write(folder / REPORT, report)
    print(report, end="")
    print(f"Wrote {folder}/ ({GPU_INFO}, {SUMMARY}, {REPORT}): send that whole folder back.")
    return 0
