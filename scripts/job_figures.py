"""What a person sees of a short job's figures, measured: how long the progress sits at 0 %,
the first time-left estimate, and what the command line and the job card say at the end.

    python scripts/job_figures.py [--book EPUB --chapters 1-2] [--data DIR] [--cli-only]
                                  [--tree DIR]

Runs in a data directory of its own (a temporary one unless --data is given; a bench result
saved there is what a job's first estimate starts from):

  1. `audiopub convert` as a separate command, its progress bar read as it is drawn;
  2. two jobs of the same voice, one after the other, in one background worker as the web app
     runs them (the second book has other text, so none of its audio is reused).

Engine processes as a conversion starts them by default (AUDIOPUB_CPU_WORKERS decides).

`--tree DIR` measures another source tree's code (an older checkout) with this script: run it
for each tree in turn, more than once, as the machine's speed drifts. Give each run a data
directory where `audiopub bench` has run, or none, alike.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BAR_COUNT = re.compile(r"([\d,]+)/([\d,]+) chars \[([^<\]]*)<([^,\]]*)")

FIRST = [
    "The rain had stopped by the time the train reached the coast.",
    "She counted the lighthouses as they passed, one for every mile.",
    "Nobody on the platform seemed to expect anyone at all.",
]
SECOND = [
    "A dog slept in the shade of the ticket office, and nobody woke it.",
    "The harbour smelled of tar, salt and fresh bread from the bakery.",
    "Somewhere a radio was playing an old dance tune, slightly out of tune.",
]
THIRD = [
    "The ferry left at noon with three passengers and a crate of oranges.",
    "Gulls followed it out past the breakwater, calling to each other.",
    "By evening the island was a grey line on the edge of the sea.",
]


def make_book(path: Path, paragraphs: list[str], title: str) -> Path:
    from audiopub.bench.texts import write_simple_epub

    # Every paragraph different: a chunk whose text another has is not spoken twice.
    chapters = [
        (
            "One",
            [f"{p} It was early." for p in paragraphs] + [f"{p} Nobody spoke." for p in paragraphs],
        ),
        (
            "Two",
            [f"{p} It was late." for p in paragraphs] + [f"{p} Everyone left." for p in paragraphs],
        ),
    ]
    return write_simple_epub(
        path,
        chapters,
        identifier=f"figures-{title}",
        title=title,
        author="Ann Author",
        language="en",
    )


def cli_run(book: Path, chapters: str | None, out: Path, env: dict[str, str]) -> None:
    """`audiopub convert`, its bar's first progress and first estimate, and its summary."""
    command = [sys.executable, "-m", "audiopub", "convert", str(book), "-o", str(out)]
    if chapters:
        command += ["--chapters", chapters]
    began = time.perf_counter()
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    stdout: list[bytes] = []
    assert process.stdout is not None
    out = process.stdout
    reader = threading.Thread(target=lambda: stdout.append(out.read()))
    reader.start()
    first_progress = first_estimate = None
    buffer = ""
    assert process.stderr is not None
    while chunk := process.stderr.read1(4096):  # type: ignore[attr-defined]
        *drawn, buffer = re.split(r"[\r\n]", buffer + chunk.decode(errors="replace"))
        # tqdm writes a whole drawing at a time, after its "\r": the last one is read now too.
        for line in [*drawn, buffer]:
            match = BAR_COUNT.search(line)
            if match is None:
                continue
            done = int(match.group(1).replace(",", ""))
            remaining = match.group(4).strip()
            if done and first_progress is None:
                first_progress = time.perf_counter() - began
            if first_estimate is None and remaining not in ("", "?"):
                first_estimate = (
                    f"{remaining} (shown at {match.group(1)} chars done, "
                    f"{time.perf_counter() - began:.1f} s after the start)"
                )
    process.wait()
    reader.join()
    print(
        f"CLI: start to first progress {first_progress:.1f} s"
        if first_progress
        else "CLI: no progress seen"
    )
    print(f"CLI: first estimate of time left: {first_estimate}")
    print(f"CLI: exit {process.returncode} after {time.perf_counter() - began:.1f} s; it said:")
    print(b"".join(stdout).decode().rstrip())


def worker_runs(books: list[Path]) -> None:
    """The jobs one after the other in a background worker, as the web app runs them."""
    from audiopub import figures as fmt
    from audiopub.book.epub.reader import read_epub
    from audiopub.jobs.events import EventBus
    from audiopub.jobs.models import JobSettings, JobState
    from audiopub.jobs.store import JobStore
    from audiopub.jobs.submission import submit_job
    from audiopub.jobs.worker import Worker
    from audiopub.listen.stage import WhisperListening
    from audiopub.tts.registry import get_engine

    with JobStore.open_default() as store:
        bus = EventBus()
        inbox = bus.subscribe()
        listening = WhisperListening()  # what the web app's jobs hear with
        worker = Worker(store, bus, listening=listening)
        worker.start()
        try:
            for number, book in enumerate(books, 1):
                engine = get_engine("piper")
                job = submit_job(
                    store,
                    book,
                    read_epub(book),
                    book.with_suffix(".m4b"),
                    JobSettings(),
                    engine,
                    listening,
                )
                submitted = time.perf_counter()
                worker.wake()
                first_progress = first_eta = None
                last = None
                while True:
                    event = inbox.get(timeout=600)
                    if event.job_id != job.id:
                        continue
                    last = event
                    now = time.perf_counter() - submitted
                    if first_eta is None and event.eta_s is not None:
                        first_eta = (
                            f"{fmt.clock(event.eta_s)} at {event.chars_done} chars, "
                            f"{now:.1f} s after submitting"
                        )
                    # The first chunk this run spoke (chapter titles another book had
                    # spoken count as done from the start).
                    if first_progress is None and event.run is not None and event.run.chars:
                        first_progress = now
                    if event.state is not JobState.RUNNING:
                        break
                done = _queue(store).get_job(job.id)
                print(
                    f"\nweb job {number}: {done.state.value} in {now:.1f} s; submit to first "
                    f"progress {first_progress:.1f} s; first estimate {first_eta}"
                )
                card_lines(store, done, last)
        finally:
            worker.stop()


def _queue(store):  # type: ignore[no-untyped-def]
    """The store's job queue (an older store is one object with the queue's methods)."""
    return getattr(store, "queue", store)


def _ledger(store):  # type: ignore[no-untyped-def]
    """The store's ledger of chunks and chapters (likewise)."""
    return getattr(store, "ledger", store)


def card_lines(store, job, event) -> None:  # type: ignore[no-untyped-def]
    """What the job card shows once the job is done, line by line as the card builds them
    (with the labels of the code it runs: a checkout without them gets the older ones)."""
    from audiopub import figures as fmt
    from audiopub.figures import Clock
    from audiopub.ui import jobview

    progress = _ledger(store).progress(job.id)
    m = jobview.metrics(job, progress, event, time.time())
    label = getattr(jobview, "SPEED_LABEL", f"Speed (wall clock, {fmt.SPEAKING_ONLY})")
    print(f"  card: {label}: {fmt.rate(m.chars_per_s)}")
    startup = getattr(m, "startup_s", None)
    if hasattr(jobview, "STARTUP_LABEL"):
        print(
            f"  card: {jobview.STARTUP_LABEL}: "
            f"{fmt.seconds_short(startup) if startup is not None else '—'}"
        )
    print(f"  card: Job stages: {fmt.stage_times(job.stage_times)}")
    for chapter in _ledger(store).chapters(job.id):
        figures = getattr(jobview, "chapter_figures", None)
        text = (
            figures(chapter.chars_per_s, chapter.rtf, chapter.stage_times)
            if figures
            else (
                f"{fmt.rate(chapter.chars_per_s)} · real-time factor {fmt.factor(chapter.rtf)} "
                f"({Clock.ENGINE.value}) · {fmt.stage_times(chapter.stage_times)}"
            )
        )
        print(f"  card: chapter {chapter.title}: {text}")


def in_tree(tree: Path, args: argparse.Namespace) -> int:
    """This script again, with `tree`'s package first on the path, from a working directory
    outside any checkout (whose own package `python -m audiopub` would take instead)."""
    command = [sys.executable, str(Path(__file__).resolve())]
    if args.book:
        command += ["--book", str(args.book.resolve())]
    if args.chapters:
        command += ["--chapters", args.chapters]
    if args.data:
        command += ["--data", str(args.data.resolve())]
    if args.cli_only:
        command.append("--cli-only")
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(command, env=environment, cwd=tempfile.gettempdir()).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, help="a real EPUB (default: a generated one)")
    parser.add_argument("--chapters", help="with --book: which chapters, e.g. 1-2")
    parser.add_argument("--data", type=Path, help="data directory (default: a temporary one)")
    parser.add_argument("--cli-only", action="store_true", help="only the `convert` command")
    parser.add_argument("--tree", type=Path, help="run another source tree's Audiopub")
    args = parser.parse_args()
    if args.tree:
        return in_tree(args.tree.resolve(), args)
    folder = Path(tempfile.mkdtemp(prefix="job-figures-"))
    data = args.data or folder / "data"
    os.environ["AUDIOPUB_DATA_DIR"] = str(data)
    env = dict(os.environ)
    cli_book = args.book or make_book(folder / "cli.epub", FIRST, "Figures CLI")
    cli_run(cli_book, args.chapters if args.book else None, folder / "cli.m4b", env)
    if args.cli_only:
        return 0
    worker_runs(
        [
            make_book(folder / "web1.epub", SECOND, "Figures Web One"),
            make_book(folder / "web2.epub", THIRD, "Figures Web Two"),
        ]
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
