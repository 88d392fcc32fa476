"""`audiopub bench`: its arguments and what each mode runs. Heavy imports wait until a mode
runs, so `audiopub --help` stays fast."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from audiopub import settings
from audiopub.bench.rss import rss_check
from audiopub.bench.texts import SIZES, write_book
from audiopub.tts.kokoro.environment import RUNTIME as KOKORO_RUNTIME
from audiopub.tts.registry import engine_names

DEFAULT_STEPS = "2,5,16"  # the rows of Supertonic's published tables
DEFAULT_RUNS = 5
DEFAULT_WARMUP = 1


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 2,5,16, not {text!r}") from None
    if not values or any(not settings.MIN_STEPS <= v <= settings.MAX_STEPS for v in values):
        raise argparse.ArgumentTypeError(
            f"steps must be {settings.MIN_STEPS}-{settings.MAX_STEPS}, not {text!r}"
        )
    return values


def _sizes(text: str) -> list[str]:
    sizes = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [s for s in sizes if s not in SIZES]
    if not sizes or unknown:
        raise argparse.ArgumentTypeError(f"sizes are {', '.join(SIZES)}; not {text!r}")
    return sizes


def _tunings(text: str) -> list[frozenset[str]]:
    # bench's measuring and results modules: some 50 ms that `audiopub --help` should not pay
    from audiopub.bench.tuning import tuning_variants

    return tuning_variants(text)


def _runtimes(text: str) -> list[str]:
    """One or two of Kokoro's runtimes, comma-separated: Kokoro alone has runtimes to choose
    from (`EngineInfo.runtimes`), so `--runtime` sets its setting."""
    runtimes = [KOKORO_RUNTIME.argument(part) for part in text.split(",")]
    if not 1 <= len(runtimes) <= 2:
        raise argparse.ArgumentTypeError("one runtime, or two to compare: onnx,torch")
    return runtimes


def _engine_voice(text: str) -> tuple[str, str | None]:
    """ENGINE or ENGINE:VOICE (a Kokoro mix keeps its own colons: kokoro:jf_alpha:0.6+…)."""
    engine, _, voice = text.partition(":")
    if engine not in engine_names():
        raise argparse.ArgumentTypeError(
            f"expected ENGINE or ENGINE:VOICE with ENGINE one of {', '.join(engine_names())}, "
            f"not {text!r}"
        )
    return engine, voice or None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_argument_group("what to measure")
    what.add_argument("--engine", choices=engine_names(), default=settings.DEFAULT_ENGINE)
    what.add_argument("--voice", help="voice id (default: the engine's first)")
    device = what.add_mutually_exclusive_group()
    device.add_argument("--gpu", dest="gpu", action="store_true", help="use CUDA when available")
    device.add_argument("--cpu", dest="gpu", action="store_false", help="use the CPU (default)")
    what.add_argument(
        "--runtime",
        type=_runtimes,
        metavar="RUNTIMES",
        help="what runs Kokoro: onnx, torch or auto; two (onnx,torch) time both on the "
        "same texts in one run, alternating, side by side as --beside does",
    )
    what.add_argument(
        "--steps",
        type=_int_list,
        default=_int_list(DEFAULT_STEPS),
        help=f"table rows for engines with steps (default {DEFAULT_STEPS})",
    )
    what.add_argument(
        "--sizes",
        type=_sizes,
        default=list(SIZES),
        help=f"text sizes, table columns (default {','.join(SIZES)})",
    )
    what.add_argument(
        "--runs",
        type=int,
        default=DEFAULT_RUNS,
        help=f"timed runs per cell (default {DEFAULT_RUNS})",
    )
    what.add_argument(
        "--warmup",
        type=int,
        default=DEFAULT_WARMUP,
        help=f"untimed runs before them (default {DEFAULT_WARMUP})",
    )
    what.add_argument(
        "--batch-size",
        type=settings.batch_size_argument,
        metavar="N",
        help="chunks per padded batch (default: the fastest for the device)",
    )
    what.add_argument(
        "--threads",
        type=int,
        help="intra-op threads of the in-process engine (default: ORT's choice)",
    )
    what.add_argument("--seed", type=int, default=0, help="noise seed, so runs are alike")
    what.add_argument(
        "--compare",
        action="store_true",
        help="also time the engine's plain one-chunk loop, interleaved with "
        "Audiopub's pipeline, and print the ratio",
    )
    what.add_argument(
        "--cuda-tuning",
        type=_tunings,
        metavar="SETTINGS",
        help="with --gpu: also time the long text under each of these optional "
        "CUDA settings, interleaved, e.g. default,max_workspace,pad_nc1d,"
        "max_workspace+pad_nc1d",
    )
    what.add_argument(
        "--beside",
        type=_engine_voice,
        metavar="ENGINE[:VOICE]",
        help="time this engine too, on the same texts in the same run: rounds "
        "alternate the two engines, and a table gives each one's chars/s and "
        "real-time factor and their ratio (medians), e.g. --engine kokoro "
        "--voice jm_kumo --beside piper:en_US-joe-medium",
    )
    what.add_argument(
        "--book",
        type=Path,
        metavar="EPUB",
        help="time a whole book instead of the text sizes (EPUB → .m4b)",
    )
    what.add_argument(
        "--synthesis-only",
        action="store_true",
        help="with --book: only synthesise the planned chunks (no stitch, no "
        "encoding): the bare synthesis throughput",
    )
    what.add_argument(
        "--matmul-seconds",
        type=float,
        default=3.0,
        help="time for the float32 matmul test (0: no compute bound)",
    )
    what.add_argument(
        "--count-flops",
        action="store_true",
        help="count the Piper voice's FLOP per audio second now (ORT profile) "
        "instead of using the documented constant",
    )
    out = parser.add_argument_group("output")
    out.add_argument("--output", type=Path, metavar="JSON", help="write the result as JSON")
    out.add_argument("--markdown", type=Path, metavar="MD", help="write the tables as markdown")
    out.add_argument("--label", help="names this machine in reports (default: host name)")
    other = parser.add_argument_group("other modes")
    other.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help="compare every result JSON in DIR in one markdown table",
    )
    other.add_argument(
        "--make-book",
        type=Path,
        metavar="EPUB",
        help="write a benchmark book of --chars characters, and beside it a "
        ".txt of the same text for scripts/piper_tts_loop.py",
    )
    other.add_argument(
        "--chars", type=int, default=20_000, help="size of --make-book (default 20000)"
    )
    other.add_argument(
        "--source",
        type=Path,
        metavar="EPUB",
        help="--make-book/--rss-check: take paragraphs from this book instead of generating prose",
    )
    other.add_argument(
        "--rss-check",
        metavar="CHARS,CHARS",
        help="peak RSS of end-to-end runs on generated books of these sizes, "
        "one process each, e.g. 100000,1000000",
    )


def main(args: argparse.Namespace, options: settings.Settings) -> int:
    """`audiopub bench` under the command's settings `options`."""
    if args.report:
        from audiopub.bench import tables  # bench's results modules: not for `audiopub --help`

        results = tables.load_results(args.report)
        if not results:
            print(f"audiopub: no benchmark results in {args.report}", file=sys.stderr)
            return 1
        text = tables.report(results)
        print(text)
        if args.markdown:
            args.markdown.write_text(text, encoding="utf-8")
        return 0
    if args.make_book:
        path = write_book(args.make_book, args.chars, args.source)
        print(f"Wrote {path} and {path.with_suffix('.txt')}")
        return 0
    if args.rss_check:
        return rss_check(args)
    if args.runs < 1 or args.warmup < 0:
        print("audiopub: --runs must be at least 1 and --warmup at least 0", file=sys.stderr)
        return 2
    if args.runtime and len(args.runtime) == 2 and (args.beside or args.book):
        print("audiopub: two --runtime values compare like --beside: not with it", file=sys.stderr)
        return 2
    if args.book and args.beside:
        print("audiopub: --beside compares the text sizes, not a book", file=sys.stderr)
        return 2
    if args.book and not args.book.is_file():
        print(f"audiopub: no such file: {args.book}", file=sys.stderr)
        return 1
    from audiopub.bench.run import bench  # the measuring modules (~80 ms): only to measure

    return bench(args, options)
