"""Does a conversion's memory stay flat as books grow? One end-to-end run per book size, each
in its own process so every peak RSS starts clean.

    audiopub bench --rss-check 100000,1000000 --engine supertonic --steps 2

Use the tiny Supertonic test model (AUDIOPUB_SUPERTONIC_DIR) to run a million characters in
minutes: the model's own memory is small and fixed, so what grows is Audiopub's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

from audiopub.bench.texts import write_book

LIMIT_MB: Final = 1.5 * 1024  # the ceiling for a 1,000,000-character book
MAX_GROWTH: Final = 0.20  # from the smallest to the largest book


def _child_command(args: argparse.Namespace, epub: Path, output: Path) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "audiopub",
        "bench",
        "--book",
        str(epub),
        "--engine",
        args.engine,
        "--runs",
        "1",
        "--warmup",
        "0",
        "--matmul-seconds",
        "0",
        "--output",
        str(output),
        "--label",
        args.label or "",
    ]
    if args.voice:
        command += ["--voice", args.voice]
    if args.steps:
        command += ["--steps", str(args.steps[0])]
    command.append("--gpu" if args.gpu else "--cpu")
    return command


def measure_sizes(args: argparse.Namespace, sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="audiopub-rss-") as scratch:
        for chars in sizes:
            epub = write_book(Path(scratch) / f"book-{chars}.epub", chars, args.source)
            output = Path(scratch) / f"result-{chars}.json"
            print(f"bench: rss check, {chars:,} characters", file=sys.stderr, flush=True)
            # The child's tables go to our stderr; our stdout stays this check's report.
            subprocess.run(_child_command(args, epub, output), check=True, stdout=sys.stderr)
            data = json.loads(output.read_text("utf-8"))
            summary = data["book"]["summary"][0]
            rows.append(
                {
                    "target_chars": chars,
                    "chars": data["book"]["chars"],
                    "wall_s": summary["wall_s"]["median"],
                    "chars_per_s": summary["chars_per_s"]["median"],
                    **data["memory"],
                }
            )
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    """The peak is the highest sum of every process's RSS at one moment (sampled); the
    per-process peaks and their sum (a bound, as if all peaked at once) show where it goes."""
    lines = [
        "### Peak RSS of an end-to-end conversion by book size (one process per size)",
        "",
        (
            "| chars | wall s | chars/s | this process MiB | engine workers MiB "
            "| ffmpeg MiB | sum of peaks MiB | **peak MiB** |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['chars']:,} | {row['wall_s']:,.1f} | {row['chars_per_s']:,.0f} "
            f"| {row['peak_rss_mb']:,.0f} | {row['workers_peak_rss_mb']:,.0f} "
            f"| {row['other_children_peak_rss_mb']:,.0f} "
            f"| {row['total_peak_rss_mb']:,.0f} | **{row['sampled_peak_rss_mb']:,.0f}** |"
        )
    first, last = rows[0], rows[-1]
    growth = last["sampled_peak_rss_mb"] / first["sampled_peak_rss_mb"] - 1
    bound_growth = last["total_peak_rss_mb"] / first["total_peak_rss_mb"] - 1
    growth_ok = "ok" if growth <= MAX_GROWTH else "OVER"
    size_ok = "ok" if last["sampled_peak_rss_mb"] < LIMIT_MB else "OVER"
    lines += [
        "",
        (
            f"- peak growth from {first['chars']:,} to {last['chars']:,} chars: "
            f"{100 * growth:+.1f}% (limit +{100 * MAX_GROWTH:.0f}%: {growth_ok}); "
            f"sum of peaks {100 * bound_growth:+.1f}%"
        ),
        (
            f"- largest book: peak {last['sampled_peak_rss_mb']:,.0f} MiB "
            f"(limit {LIMIT_MB:,.0f} MiB: {size_ok})"
        ),
    ]
    return "\n".join(lines) + "\n"


def rss_check(args: argparse.Namespace) -> int:
    sizes = sorted(int(part) for part in args.rss_check.split(",") if part.strip())
    rows = measure_sizes(args, sizes)
    text = render(rows)
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    if args.output:
        args.output.write_text(json.dumps({"rss_check": rows}, indent=2) + "\n", "utf-8")
    print(
        json.dumps(
            {
                "rss_check": [
                    {k: row[k] for k in ("chars", "sampled_peak_rss_mb", "total_peak_rss_mb")}
                    for row in rows
                ]
            }
        ),
        flush=True,
    )
    return 0
