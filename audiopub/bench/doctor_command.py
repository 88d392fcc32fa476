"""`audiopub doctor`: its arguments. What it measures waits until it runs (`doctor`), so
`audiopub --help` stays fast."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Final

from audiopub import settings
from audiopub.tts.registry import engine_info, engine_names

DEFAULT_CHARS: Final = 20_000  # ~30 s a run on a 16-core CPU; a second or two on a GPU


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("audiopub-doctor"),
        metavar="DIR",
        help="where the device's folder is written (default ./audiopub-doctor)",
    )
    parser.add_argument("--engine", choices=engine_names(), default=settings.DEFAULT_ENGINE)
    parser.add_argument("--voice", help="voice id (default: the engine's first)")
    parser.add_argument(
        "--runtime",
        type=lambda text: text.split(","),
        metavar="RUNTIMES",
        help="what runs the model, comma-separated, onnx first (default: every runtime the "
        "engine has: onnx,torch for Kokoro); the others take turns with it on the GPU, or "
        "on the CPU where there is none",
    )
    parser.add_argument(
        "--chars",
        type=int,
        default=DEFAULT_CHARS,
        help=f"characters of prose per run (default {DEFAULT_CHARS:,})",
    )
    parser.add_argument("--runs", type=int, default=3, help="timed runs per device (default 3)")
    parser.add_argument(
        "--warmup", type=int, default=1, help="untimed runs per device before them (default 1)"
    )
    parser.add_argument("--label", help="names this machine in the report (default: host name)")
    parser.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help="compare the device folders under DIR in one table, and stop",
    )


def main(args: argparse.Namespace) -> int:
    if args.report:
        # bench's results modules: some 50 ms that `audiopub --help` should not pay
        from audiopub.bench.doctor_report import comparison

        table = comparison(args.report)
        if table is None:
            print(f"audiopub: no doctor reports in {args.report}", file=sys.stderr)
            return 1
        print(table, end="")
        return 0
    if args.chars < 1 or args.runs < 1 or args.warmup < 0:
        print(
            "audiopub: --chars and --runs must be at least 1, --warmup at least 0", file=sys.stderr
        )
        return 2
    runtimes = engine_info(args.engine).runtimes
    if args.runtime and (args.runtime[0] != runtimes[0] or not set(args.runtime) <= set(runtimes)):
        print(
            f"audiopub: --runtime for {args.engine}: {','.join(runtimes)}, "
            f"{runtimes[0]} first (its node placement and CUDA settings are measured)",
            file=sys.stderr,
        )
        return 2
    from audiopub.bench.doctor import run_doctor  # the engines and ONNX Runtime: only to measure

    return run_doctor(args)
