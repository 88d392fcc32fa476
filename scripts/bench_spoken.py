"""What the spoken-form stage costs, next to what synthesis costs, on real books.

Run: PYTHONPATH=. python scripts/bench_spoken.py [EPUB ...]   (default: tests/data/epubs/*.epub)
     PYTHONPATH=. python scripts/bench_spoken.py --against ../main-tree [--rounds 5]

Per book: `spoken_form` once per paragraph (the stage alone), and the whole chapter-chunking
step with and without it (what a job's planning really pays: the chunker measures candidate
chunks in their spoken form). Then Piper speaking a few chunks in this process on one thread,
the same chunking's output, for the seconds per million characters that synthesis takes.
Times are process CPU times; the machine's speed drifts, so compare within one run.

`--against TREE` compares the stage alone with another source tree's (an older checkout):
each round times this tree's stage and then TREE's in fresh processes, one after the other,
so a drift in the machine's speed touches both alike; it prints each tree's median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from audiopub import settings
from audiopub.book.chunks.chunking import chunk_paragraphs
from audiopub.book.epub.reader import read_epub
from audiopub.book.models import Book
from audiopub.book.spoken import spoken_form

_DEFAULT = sorted((Path(__file__).parent.parent / "tests" / "data" / "epubs").glob("*.epub"))
MAX_CHARS = settings.PIPER_MAX_CHUNK_CHARS
SYNTH_CHARS = 3_000  # enough chunks for a steady figure, few enough to take seconds


def _cpu(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def _spoken_forms(paragraphs: list[str], language: str) -> list[str]:
    return [spoken_form(p, language) for p in paragraphs]


def _chunk_all(book: Book, spoken: bool) -> None:
    def speak(text: str) -> str:
        return spoken_form(text, book.language)

    for chapter in book.chapters:
        chunk_paragraphs(chapter.paragraphs, MAX_CHARS, chapter.index, speak if spoken else None)


def _synthesis_s_per_m(book: Book) -> float:
    from audiopub.tts.engine import SynthesisOptions
    from audiopub.tts.piper.engine import PiperEngine

    engine = PiperEngine(threads=1)
    chunks = [
        c.spoken
        for ch in book.chapters
        for c in chunk_paragraphs(
            ch.paragraphs, MAX_CHARS, ch.index, lambda text: spoken_form(text, book.language)
        )
    ]
    texts, chars = [], 0
    for text in chunks:
        texts.append(text)
        chars += len(text)
        if chars >= SYNTH_CHARS:
            break
    options = SynthesisOptions(seed=1)
    engine.synthesize(texts[:1], settings.DEFAULT_PIPER_VOICE, options)  # load the model
    seconds = _cpu(lambda: engine.synthesize(texts, settings.DEFAULT_PIPER_VOICE, options))
    return seconds / chars * 1e6


def main(paths: list[Path]) -> None:
    print(
        f"{'book':42} {'chars':>9} {'stage s/M':>10} {'chars/s':>11} "
        f"{'chunking s/M':>13} {'+ spoken s/M':>13}"
    )
    books = [read_epub(path) for path in paths]
    total_chars = 0
    total = {"stage": 0.0, "plain": 0.0, "spoken": 0.0}
    for path, book in zip(paths, books):
        paragraphs = [p for chapter in book.chapters for p in chapter.paragraphs]
        chars = sum(len(p) for p in paragraphs)
        stage = _cpu(partial(_spoken_forms, paragraphs, book.language))
        plain = _cpu(partial(_chunk_all, book, spoken=False))
        spoken = _cpu(partial(_chunk_all, book, spoken=True))
        for name, seconds in (("stage", stage), ("plain", plain), ("spoken", spoken)):
            total[name] += seconds
        total_chars += chars
        per_m = 1e6 / chars
        print(
            f"{path.name[:42]:42} {chars:>9,} {stage * per_m:>10.3f} {chars / stage:>11,.0f} "
            f"{plain * per_m:>13.3f} {spoken * per_m:>13.3f}"
        )
    per_m = 1e6 / total_chars
    print(
        f"{'all':42} {total_chars:>9,} {total['stage'] * per_m:>10.3f} "
        f"{total_chars / total['stage']:>11,.0f} {total['plain'] * per_m:>13.3f} "
        f"{total['spoken'] * per_m:>13.3f}"
    )
    synthesis = _synthesis_s_per_m(books[0])
    added = (total["spoken"] - total["plain"]) * per_m
    print(f"\nPiper synthesis, one thread, {books[0].title[:30]}: {synthesis:,.0f} s per M chars")
    print(
        f"spoken form added to chunking: {added:.3f} s per M chars = "
        f"{100 * added / synthesis:.4f}% of synthesis time"
    )


def _stage_only(paths: list[Path]) -> None:
    """Print the stage's seconds per million characters on these books (a `--against` round)."""
    books = [read_epub(path) for path in paths]
    work = [
        (paragraph, book.language)
        for book in books
        for chapter in book.chapters
        for paragraph in chapter.paragraphs
    ]
    chars = sum(len(paragraph) for paragraph, _ in work)
    seconds = _cpu(lambda: [spoken_form(paragraph, language) for paragraph, language in work])
    print(seconds / chars * 1e6)


def _stage_in(tree: Path, paths: list[Path]) -> float:
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, __file__, "--stage-only", *map(str, paths)]
    result = subprocess.run(
        command, capture_output=True, text=True, check=True, env=environment, cwd=tree
    )
    return float(result.stdout.split()[-1])


def compare(against: Path, paths: list[Path], rounds: int) -> None:
    here = Path(__file__).resolve().parent.parent
    times: dict[Path, list[float]] = {here: [], against: []}
    for _round in range(rounds):
        for tree in times:
            times[tree].append(_stage_in(tree, paths))
    chars = sum(
        len(p) for book in map(read_epub, paths) for ch in book.chapters for p in ch.paragraphs
    )
    print(f"spoken-form stage on {len(paths)} books, {chars:,} chars, {rounds} rounds interleaved")
    for tree, seconds in times.items():
        median = statistics.median(seconds)
        print(f"{str(tree)[:50]:50} {median:8.3f} s per M chars  ({1e6 / median:,.0f} chars/s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("epub", nargs="*", type=Path, help="books (default: the test books)")
    parser.add_argument(
        "--against", type=Path, help="another source tree to compare the stage with"
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds with --against (default 5)")
    parser.add_argument("--stage-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    books = [path.resolve() for path in args.epub] or _DEFAULT
    if args.stage_only:
        _stage_only(books)
    elif args.against:
        compare(args.against.resolve(), books, args.rounds)
    else:
        main(books)
