"""Many books in one `audiopub convert`: which EPUBs the arguments name, where each book goes,
and the lines that end the command, one per book and the total.

    audiopub convert shelf/ extra.epub -o books/   →  books/<Title>.m4b for every book

A publisher or a library converts a back catalogue at once, and reads at the end which books
are done and which need a look, rather than scrolling back through each book's progress.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from audiopub import figures as fmt
from audiopub.errors import AudiopubError
from audiopub.figures import Clock, Speed
from audiopub.jobs.store import JobStore

EPUB_SUFFIX = ".epub"


def books_in(paths: Sequence[Path]) -> list[Path]:
    """The EPUBs the arguments name, each once, in the order given: a folder stands for the
    EPUBs directly in it, by name. A path that is not there is kept, so that its own line
    says so while the other books are made; a folder without EPUBs is an error at once."""
    books: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            found = sorted(entry for entry in path.iterdir()
                           if entry.suffix.lower() == EPUB_SUFFIX and entry.is_file())
            if not found:
                raise AudiopubError(f"No .epub files in the folder {path}")
            books.update(dict.fromkeys(found))
        else:
            books.setdefault(path, None)
    unique: dict[Path, Path] = {}
    for book in books:  # the same file named twice (shelf/ and shelf/a.epub) is made once
        unique.setdefault(book.resolve(), book)
    return list(unique.values())


def output_folder(requested: str | None) -> str | None:
    """`-o` for several books: a folder (written with a trailing slash, so it is made when
    missing and each book gets `<Title>.m4b` in it), or None (each book beside its EPUB)."""
    if requested is None:
        return None
    path = Path(requested)
    if path.is_file() or (not path.is_dir() and path.suffix.lower() == ".m4b"):
        raise AudiopubError(f"With several books, -o names a folder (each book is written "
                            f"there as <Title>.m4b), not the file {requested}")
    return requested if requested.endswith(("/", os.sep)) else requested + os.sep


@dataclass(frozen=True)
class BookLine:
    """How one book of the command ended."""

    epub: Path
    output: Path | None  # None: it never became a job
    state: str  # the job's state, or "failed" for a book that never became a job
    error: str = ""
    run: Speed | None = None  # what this command made of it


def book_line(store: JobStore, epub: Path, job_id: str, elapsed_s: float,
              since: float) -> BookLine:
    """The book's line from its job, after its run: `elapsed_s` of the command's wall time,
    from the Unix time `since` on (chunks made before belong to earlier runs)."""
    job = store.queue.get_job(job_id)
    progress = store.ledger.progress(job_id, since=since)
    return BookLine(epub, job.output_path, job.state.value, job.error or "",
                    Speed(progress.made_chars, elapsed_s, progress.made_audio_s, Clock.WALL))


def summary(lines: Sequence[BookLine], books: int, elapsed_s: float) -> list[str]:
    """One line per book (state, name, where it went or why not, what this run made) and the
    total: books done of those asked for, and the whole command's speed."""
    width = max((len(line.epub.name) for line in lines), default=0)
    out = [f"\nBooks ({len(lines)} of {books}):"]
    for line in lines:
        where = f"→ {line.output}" if line.output and not line.error else line.error
        made = (f"  ({fmt.count(line.run.chars)} chars, {fmt.rate(line.run.chars_per_s)})"
                if line.run and line.run.chars else "")
        out.append(f"  {line.state:9} {line.epub.name:{width}}  {where}{made}")
    done = sum(line.state == "done" for line in lines)
    chars = sum(line.run.chars for line in lines if line.run)
    audio_s = sum(line.run.audio_s for line in lines if line.run)
    total = Speed(chars, elapsed_s, audio_s, Clock.WALL)
    out.append(f"Total: {done} of {books} books done; {total.describe(fmt.START_TO_FINISH)}")
    return out
