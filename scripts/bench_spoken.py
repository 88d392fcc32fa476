"""How fast `spoken_form` reads real books: chars/s per book, and seconds per million chars.

Run: PYTHONPATH=. python scripts/bench_spoken.py [EPUB ...]   (default: tests/data/epubs/*.epub)
Each paragraph is one call, as the chunker's chunks will be; the time is the process CPU time.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from audiopub.book.epub_reader import read_epub
from audiopub.book.spoken import spoken_form

_DEFAULT = sorted((Path(__file__).parent.parent / "tests" / "data" / "epubs").glob("*.epub"))


def main(paths: list[Path]) -> None:
    print(f"{'book':45} {'chars':>10} {'seconds':>8} {'chars/s':>12} {'s per M chars':>14}")
    total_chars = 0
    total_seconds = 0.0
    for path in paths:
        book = read_epub(path)
        paragraphs = [p for chapter in book.chapters for p in chapter.paragraphs]
        chars = sum(len(p) for p in paragraphs)
        start = time.process_time()
        for paragraph in paragraphs:
            spoken_form(paragraph, book.language)
        seconds = time.process_time() - start
        total_chars += chars
        total_seconds += seconds
        print(
            f"{path.name[:45]:45} {chars:>10} {seconds:>8.3f} {chars / seconds:>12,.0f} "
            f"{seconds / chars * 1e6:>14.3f}"
        )
    print(
        f"{'all':45} {total_chars:>10} {total_seconds:>8.3f} "
        f"{total_chars / total_seconds:>12,.0f} {total_seconds / total_chars * 1e6:>14.3f}"
    )


if __name__ == "__main__":
    main([Path(arg) for arg in sys.argv[1:]] or _DEFAULT)
