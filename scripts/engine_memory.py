"""What one CPU engine process holds as it speaks a book: its memory every N chunks.

    python scripts/engine_memory.py BOOK.epub [--engine kokoro] [--voice V] [--every 50]
                                    [--limit 600] [--chars 5000] [--mem-pattern]

It speaks the book's planned chunks in reading order on one single-threaded engine (Piper's
joe unless told), as each engine process of a conversion does, and prints a line every N
chunks: the resident size
(VmRSS), glibc's heap in use (`mallinfo2`: ONNX Runtime's own bookkeeping lives there) and the
memory glibc has mapped for large blocks (ONNX Runtime's arena regions). `--mem-pattern` makes
the session as it was made before: with ORT's memory patterns, one kept per input shape.
Linux only. `bench --rss-check` gives the end-to-end peak; this shows where a process grows.
"""

from __future__ import annotations

import argparse
import bisect
import ctypes
import itertools
import time
from pathlib import Path

from audiopub import settings
from audiopub.bench.book import plan
from audiopub.book.epub.reader import read_epub
from audiopub.tts import onnx_runtime
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.registry import engine_names, get_engine

_MALLINFO2_FIELDS = (
    "arena",
    "ordblks",
    "smblks",
    "hblks",
    "hblkhd",
    "usmblks",
    "fsmblks",
    "uordblks",
    "fordblks",
    "keepcost",
)


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _MALLINFO2_FIELDS]


def _glibc_mib() -> tuple[float, float]:
    """Heap in use and memory mapped for large blocks, in MiB."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _Mallinfo2
    info = libc.mallinfo2()
    return info.uordblks / 2**20, info.hblkhd / 2**20


def _rss_mib() -> tuple[float, float]:
    """This process's resident size now and at its highest (VmRSS, VmHWM), in MiB."""
    status = dict(
        line.split(":", 1)
        for line in Path("/proc/self/status").read_text().splitlines()
        if ":" in line
    )
    return (int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("book", type=Path)
    parser.add_argument("--engine", choices=engine_names(), default=settings.DEFAULT_ENGINE)
    parser.add_argument("--voice", help="voice id (default: the engine's first)")
    parser.add_argument("--every", type=int, default=50, help="chunks between lines")
    parser.add_argument("--limit", type=int, help="stop after this many chunks")
    parser.add_argument(
        "--chars",
        type=int,
        help="stop once this many characters are spoken: the same text for "
        "engines whose chunks differ in size",
    )
    parser.add_argument(
        "--mem-pattern",
        action="store_true",
        help="make the session with ORT's memory patterns (as before)",
    )
    args = parser.parse_args()
    if args.mem_pattern:
        plain = onnx_runtime.session_options

        def with_patterns(threads: int | None) -> onnx_runtime.ort.SessionOptions:
            options = plain(threads)
            options.enable_mem_pattern = True
            return options

        onnx_runtime.session_options = with_patterns
    engine = get_engine(args.engine, threads=1)
    chunks = list(plan(args.book, engine).workload.chunks[: args.limit])
    if args.chars is not None:  # the chunks up to the one that reaches --chars
        ends = list(itertools.accumulate(map(len, chunks)))
        chunks = chunks[: bisect.bisect_left(ends, args.chars) + 1]
    voice = args.voice or engine.voices()[0].id
    # In the book's language, as a conversion speaks it (Kokoro phonemises by it).
    options = SynthesisOptions(seed=0, language=read_epub(args.book).language)
    print(
        f"{engine.name} {voice}: {len(chunks)} chunks, "
        f"memory patterns {'on' if args.mem_pattern else 'off'}"
    )
    print("chunks  chars  seconds  rss_mib  peak_mib  heap_in_use_mib  mapped_blocks_mib")
    began, chars = time.perf_counter(), 0
    for number, text in enumerate(chunks, 1):
        engine.synthesize([text], voice, options)
        chars += len(text)
        if number % args.every == 0 or number == len(chunks):
            rss, peak = _rss_mib()
            heap, mapped = _glibc_mib()
            print(
                f"{number:6d} {chars:7d} {time.perf_counter() - began:8.0f} {rss:8.0f} "
                f"{peak:9.0f} {heap:16.1f} {mapped:18.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
