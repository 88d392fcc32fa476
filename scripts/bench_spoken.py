"""What the spoken-form stage costs, next to what synthesis costs, on real books.

Run: PYTHONPATH=. python scripts/bench_spoken.py [EPUB ...]   (default: tests/data/epubs/*.epub)

Per book: `spoken_form` once per paragraph (the stage alone), and the whole chapter-chunking
step with and without it (what a job's planning really pays: the chunker measures candidate
chunks in their spoken form). Then Piper speaking a few chunks in this process on one thread,
the same chunking's output, for the seconds per million characters that synthesis takes.
Times are process CPU times; the machine's speed drifts, so compare within one run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from audiopub import settings
from audiopub.book.chunking import chunk_paragraphs
from audiopub.book.epub_reader import read_epub
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


if __name__ == "__main__":
    main([Path(arg) for arg in sys.argv[1:]] or _DEFAULT)
