"""The `audiopub` command line: serve (the web UI; the default), convert, jobs, resume, pause,
cancel, export, voices, names, chapters, spoken, cast, bench, doctor.

One job: the parser and a short handler per command, read side by side, with what the
arguments mean (where `convert -o` writes, the books a folder names, the forms asked for) and
the lines a command ends with; what a command does lives in the modules it calls
(`jobs.submission`, `jobs.foreground`, `jobs.report`, `export.forms`, `bench.command`,
`book.lexicons.names`, `ui.app`)."""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from audiopub import __version__, settings
from audiopub import figures as fmt
from audiopub.bench import command as bench_command
from audiopub.bench import doctor_command
from audiopub.book.cast import attribute
from audiopub.book.lexicons.lexicon import Lexicon
from audiopub.book.lexicons.lexicon import read as read_lexicon
from audiopub.book.lexicons.names import likely_names
from audiopub.book.models import Book
from audiopub.book.reading import BOOK_SUFFIXES, book_suffix, read_book
from audiopub.book.spoken import spoken_form
from audiopub.cluster import connection as cluster_connection
from audiopub.cluster.executor import job_executors
from audiopub.errors import AudiopubError
from audiopub.export import command as export_command
from audiopub.export.encode import AUDIO_FORMATS
from audiopub.export.forms import SPLITS, ConvertOutputs, make_outputs
from audiopub.export.names import safe_name
from audiopub.figures import Clock, Speed
from audiopub.jobs import foreground, report
from audiopub.jobs.book_plan import job_lexicon, plan_book, stored_book
from audiopub.jobs.models import Job, JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import (
    audiobook_deleted,
    deleted_as_asked,
    language_note,
    made_as_asked,
    parse_chapter_selection,
    remake,
    resolve_settings,
    same_epub,
    submit_job,
)
from audiopub.jobs.terminal import fit_title, title_width
from audiopub.jobs.worker import runner_alive
from audiopub.listen import command as listen_command
from audiopub.listen.stage import WhisperListening
from audiopub.tts.engine import voice_of
from audiopub.tts.kokoro.environment import RUNTIME as KOKORO_RUNTIME
from audiopub.tts.registry import check_settings, engine_names, get_engine
from audiopub.voices import command as voices_command
from audiopub.voices.casting import NO_ONE_SPEAKS, BookCast

SERVE_HOST = "127.0.0.1"  # the web UI has no accounts: only this computer, unless --host
SERVE_PORT = 8080
INTERRUPTED = "interrupted"  # how `jobs` shows a job left `running` by a process that died
LISTENING = WhisperListening()  # what the jobs this command submits and runs hear with


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="audiopub",
        description="Turn books into chapterised audiobooks (.m4b): EPUB, PDF, Word, "
        "OpenDocument, FB2, HTML, Markdown or plain text, and MOBI or AZW3 through Calibre.",
    )
    parser.add_argument("--version", action="version", version=f"audiopub {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    _add_serve_options(parser.add_argument_group("web UI (serving is the default command)"))
    parser.set_defaults(host=SERVE_HOST, port=SERVE_PORT, no_browser=False, allow_host=[], ray=None)
    commands = parser.add_subparsers(dest="command")

    conv = commands.add_parser(
        "convert",
        help="convert books into chapterised .m4b files (run the same command again to resume)",
    )
    conv.add_argument(
        "book",
        type=Path,
        nargs="+",
        help="the book (EPUB, or text, Markdown, HTML, Word, FB2, OpenDocument, PDF: "
        "see docs/formats.md); several, or folders of them, make one job per book",
    )
    conv.add_argument(
        "-o",
        "--output",
        help="output .m4b, or a folder to write <Title>.m4b in "
        "(default: next to the book; with several books, a folder)",
    )
    conv.add_argument("--engine", choices=engine_names(), default=settings.DEFAULT_ENGINE)
    conv.add_argument("--voice", help="voice id (see `audiopub voices`)")
    conv.add_argument(
        "--speed",
        type=float,
        default=settings.DEFAULT_SPEED,
        help=f"{settings.MIN_SPEED}-{settings.MAX_SPEED}, default 1.0",
    )
    conv.add_argument(
        "--steps",
        type=int,
        default=settings.DEFAULT_STEPS,
        help=f"inference steps for engines that use them "
        f"({settings.MIN_STEPS}-{settings.MAX_STEPS})",
    )
    conv.add_argument("--seed", type=int, help="fix the noise so every chunk can be reproduced")
    conv.add_argument(
        "--chapters",
        help="chapters to narrate, e.g. 1-3,7 (default: all but title pages and dedications)",
    )
    conv.add_argument(
        "--lexicon",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="pronunciation entries for this job, first of every scope "
        "(repeatable; format: docs/lexicons-and-spoken-forms.md)",
    )
    conv.add_argument(
        "--show-spoken",
        action="store_true",
        help="print what will be said where it differs from the written text "
        "(numbers, numerals, abbreviations, units)",
    )
    device = conv.add_mutually_exclusive_group()
    device.add_argument("--gpu", dest="gpu", action="store_true", help="use CUDA when available")
    device.add_argument("--cpu", dest="gpu", action="store_false", help="use the CPU (default)")
    # Kokoro alone has runtimes to choose from (`EngineInfo.runtimes`): `--runtime` sets its
    # setting, and stays Kokoro's until another engine has runtimes too.
    conv.add_argument(
        "--runtime",
        type=KOKORO_RUNTIME.argument,
        help="what runs Kokoro: onnx (default), torch (PyTorch: pip install "
        "'audiopub[torch]') or auto (torch where CUDA works only through PyTorch)",
    )
    conv.add_argument(
        "--batch-size",
        type=settings.batch_size_argument,
        metavar="N",
        help="chunks per padded batch (default: the fastest for the device)",
    )
    _add_ray_option(conv)
    conv.add_argument(
        "--cast",
        action="store_true",
        help="read each character's quotations in a voice of its own (`audiopub cast`)",
    )
    conv.add_argument(
        "--proof-listen",
        action=argparse.BooleanOptionalAction,
        help="hear every chunk made and speak again what came out wrong "
        "(default: on with --gpu where a listening model is installed, "
        "else off; docs/proof-listening.md)",
    )
    _add_form_options(conv)

    jobs = commands.add_parser("jobs", help="list jobs")
    jobs.add_argument("--details", action="store_true", help="per-chapter figures too")
    for name, text in (
        ("resume", "continue a paused, failed or cancelled job"),
        ("pause", "pause a job (it keeps its finished chunks)"),
        ("cancel", "cancel a job"),
    ):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("job_id", help="the job's id (a unique prefix is enough)")
    export_command.add_arguments(
        commands.add_parser(
            "export",
            help="subtitles and per-chapter audio files of a finished book, without "
            "speaking it again",
        )
    )
    voices_command.add_arguments(
        commands.add_parser(
            "voices",
            help="list installed voices (--all: downloadable ones too); "
            "download or remove voices and models",
            argument_default=argparse.SUPPRESS,
        )
    )
    names = commands.add_parser(
        "names",
        help="list a book's likely names and unusual words, "
        "to check how they are pronounced before converting",
    )
    names.add_argument("book", type=Path, help="the book file")
    names.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    names.add_argument("--language", help="e.g. en, fr (default: the book's language)")
    chapters = commands.add_parser(
        "chapters",
        help="list the chapters found in a book: the numbers `convert --chapters` takes",
    )
    chapters.add_argument("book", type=Path, help="the book file (any format Audiopub reads)")
    spoken = commands.add_parser(
        "spoken",
        help="print what a narrator says for each line of text: numbers, money, dates, "
        "units and abbreviations in words (docs/lexicons-and-spoken-forms.md)",
    )
    spoken.add_argument("text", nargs="*", help="lines of text (none or -: read standard input)")
    spoken.add_argument("--language", default="en", help="e.g. en, de, fr, es (default: en)")
    cast = commands.add_parser(
        "cast", help="a book's characters and the voices that read them (docs/cast.md)"
    )
    cast.add_argument("book", type=Path, help="the book file")
    cast.add_argument("--engine", choices=engine_names(), default=settings.DEFAULT_ENGINE)
    cast.add_argument("--voice", help="the narrator's voice (default: the engine's first)")
    cast.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VOICE",
        help="read a character in this voice (kept in the book's cast file)",
    )
    cast.add_argument("--json", action="store_true", help="characters and quotations as JSON")
    cast.add_argument(
        "--again",
        action="store_true",
        help="read the book afresh for its characters and speakers, keeping your corrections",
    )
    bench = commands.add_parser(
        "bench",
        help="measure speed: chars/sec and real-time factor "
        "tables, per-stage times, JSON results (docs/bench-schema.md)",
    )
    bench_command.add_arguments(bench)
    doctor = commands.add_parser(
        "doctor",
        help="check the GPU and time it against the CPU; writes a report folder to send back",
    )
    doctor_command.add_arguments(doctor)

    # The same options after `serve`, with no defaults there: a subcommand's defaults would
    # overwrite options given before it (`audiopub --port 9000 serve`).
    serve = commands.add_parser(
        "serve", help="start the web UI (the default command)", argument_default=argparse.SUPPRESS
    )
    _add_serve_options(serve)
    return parser


def _add_ray_option(group: argparse._ActionsContainer) -> None:
    # No default here: one given before the command (`audiopub --ray auto serve`) stays.
    group.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=argparse.SUPPRESS,
        help="speak the chunks on this Ray cluster (auto, HOST:PORT, "
        "ray://HOST:10001; needs audiopub[cluster])",
    )


def _add_form_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "what to make besides the .m4b (from its audio, no "
        "second synthesis; `audiopub export` makes them later)"
    )
    group.add_argument(
        "--format",
        choices=("m4b", *AUDIO_FORMATS),
        default="m4b",
        help="the audio form: m4b (the default, the book alone), mp3 (VBR), "
        "mp3-cbr (192 kb/s), opus or m4a",
    )
    group.add_argument(
        "--split",
        choices=SPLITS,
        default="none",
        help="chapters: one file per chapter; none: one file (default)",
    )
    group.add_argument(
        "--subtitles",
        metavar="srt,vtt",
        help="subtitles of the book (and of each chapter file with --split)",
    )
    group.add_argument(
        "--read-along",
        action="store_true",
        help="an EPUB 3 that plays the audio and highlights each sentence",
    )


def _add_serve_options(group: argparse._ActionsContainer) -> None:
    group.add_argument(
        "--host", help="address to listen on (default 127.0.0.1: this computer only)"
    )
    group.add_argument("--port", type=int, help="default 8080")
    group.add_argument("--no-browser", action="store_true", help="don't open a browser tab")
    group.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="a name browsers may reach it by besides this computer's own "
        "(repeatable; also AUDIOPUB_ALLOWED_HOSTS)",
    )
    _add_ray_option(group)


# --- convert ---------------------------------------------------------------------------


def _settings_from(args: argparse.Namespace, book: Book) -> JobSettings:
    chapters = None
    if args.chapters:
        chapters = tuple(parse_chapter_selection(args.chapters, len(book.chapters)))
    elif len(book.default_selection) < len(book.chapters):  # as the page ticks them
        chapters = tuple(book.default_selection)
    entries = tuple(entry for path in args.lexicon for entry in read_lexicon(path))
    try:
        return JobSettings(
            engine=args.engine,
            voice=args.voice,
            speed=args.speed,
            steps=args.steps,
            seed=args.seed,
            use_gpu=args.gpu,
            chapters=chapters,
            lexicon=entries,
            batch_size=args.batch_size,
            proof_listen=args.proof_listen,
        )
    except ValueError as exc:
        raise AudiopubError(str(exc)) from exc


def _find_unfinished(store: JobStore, epub: Path, output: Path) -> Job | None:
    """The job an interrupted `convert` with the same book and output left behind."""
    for job in reversed(store.queue.list_jobs()):
        if job.state is not JobState.DONE and job.output_path == output and same_epub(job, epub):
            return job
    return None


def _made(store: JobStore, epub: Path, output: Path) -> list[Job]:
    """The finished jobs that made this book to this output, newest first, while the output
    is there."""
    if not output.is_file():
        return []
    return [
        job
        for job in reversed(store.queue.list_jobs())
        if job.state is JobState.DONE and job.output_path == output and same_epub(job, epub)
    ]


def _convert(args: argparse.Namespace) -> int:
    outputs = _outputs_from(args)  # a bad combination fails before audio
    if len(args.book) == 1 and not args.book[0].is_dir():
        return _convert_book(args, args.book[0], args.output, outputs)[0]
    return _convert_library(args, outputs)


def _outputs_from(args: argparse.Namespace) -> ConvertOutputs:
    subtitles = [part.strip() for part in (args.subtitles or "").split(",") if part.strip()]
    return ConvertOutputs.checked(args.format, args.split, subtitles, args.read_along)


def _book_path(requested: str | None, epub: Path, title: Callable[[], str]) -> Path:
    """The .m4b to write: `-o` as given; `<Title>.m4b` inside it when it names a folder (one
    that exists, or any path written with a trailing slash); next to the EPUB without `-o`.

    Its folder is made now and must take files, so a bad `-o` fails before anything is
    spoken (AudiopubError), not when the book is written.
    """
    if requested is None:
        path = epub.with_suffix(".m4b")
    elif requested.endswith(("/", os.sep)) or Path(requested).is_dir():
        path = Path(requested) / f"{safe_name(title(), safe_name(epub.stem))}.m4b"
    else:
        path = Path(requested)
    path = path.resolve()
    if path.is_dir():  # <Title>.m4b is itself a folder
        raise AudiopubError(f"{path} is a folder: name the .m4b to write with -o")
    _check_writable(path.parent)
    return path


def _check_writable(folder: Path) -> None:
    existing = next(path for path in (folder, *folder.parents) if path.exists())
    if not existing.is_dir():
        raise AudiopubError(
            f"Cannot write the book in {folder}: {existing} is a file, not a "
            "folder (choose another -o)"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise AudiopubError(
            f"Cannot write the book in {folder}: {exc.strerror or exc} (choose another -o)"
        ) from exc


def _convert_book(
    args: argparse.Namespace,
    epub: Path,
    requested: str | None,
    outputs: ConvertOutputs,
    taken: frozenset[Path] = frozenset(),
    skip_done: bool = False,
) -> tuple[int, str]:
    """Convert one book (or resume it); the exit status and the job's id. `taken`: outputs
    of earlier books of the same command, which this one must not overwrite; `skip_done`: a
    book already made to its output is left as it is (a library command run again)."""
    if not epub.is_file():
        raise AudiopubError(f"No such file: {epub}")
    read_book_once = functools.cache(lambda: read_book(epub))
    output = _book_path(requested, epub, lambda: read_book_once().title)
    if output in taken:  # two books of one title in one folder
        output = output.with_name(f"{output.stem} ({safe_name(epub.stem)}).m4b")
    with JobStore.open_default() as store:
        made = _made(store, epub, output)
        if made and skip_done:
            print(f"Already made: {output}", file=sys.stderr)
            return 0, made[0].id
        job = _find_unfinished(store, epub, output)
        earlier = job or next(iter(made), None)
        # The book is read once per job: now for a new one, at submission for a known one.
        book = read_book_once() if earlier is None else stored_book(store, earlier)
        wanted = _settings_from(args, book)
        if not args.chapters:
            _say_front_matter(book)
        engine = get_engine(wanted.engine, use_gpu=wanted.use_gpu)
        if args.cast:
            narrator = wanted.voice or engine.voices()[0].id
            voicing = _book_cast(epub, book).cast(engine, narrator).voicing(engine)
            wanted = replace(wanted, voice=narrator, cast=voicing)
        done = None
        if job is None:  # one book made with the same settings and words is one job
            done = next(
                (
                    old
                    for old in made
                    if made_as_asked(
                        store,
                        old,
                        book,
                        resolve_settings(wanted, engine, book, old.settings, LISTENING),
                        engine,
                    )
                ),
                None,
            )
        if done is not None:
            print(
                f"Already made with these settings: {output} (job {done.id[:8]})", file=sys.stderr
            )
            job = done
        elif job is None:
            deleted = deleted_as_asked(
                store, epub, book, wanted, engine, output, listening=LISTENING
            )
            if deleted is not None:  # its chapters are in its folder: no need to speak them
                print(
                    f"The audiobook was deleted: making it again from the saved audio "
                    f"(job {deleted.id[:8]})",
                    file=sys.stderr,
                )
                job = remake(store, deleted)
            else:
                job = submit_job(store, epub, book, output, wanted, engine, LISTENING)
        else:
            job = _prepare_resume(
                store, job, resolve_settings(wanted, engine, book, job.settings, LISTENING)
            )
        note = language_note(job.settings.language, voice_of(engine, job.settings.voice or ""))
        if note:
            print(note, file=sys.stderr)
        if args.show_spoken:
            _show_spoken(
                book,
                engine.max_chunk_chars,
                job.settings,
                job_lexicon(store, job.epub_path, book, job.settings, engine),
            )
        remaking = audiobook_deleted(job)  # made once, deleted since: made again now
        began = time.perf_counter()
        status = (
            0
            if job is done
            else foreground.run_or_follow(store, job.id, job_executors(), LISTENING)
        )
        if status == 0 and remaking:
            print(
                f"The audiobook was deleted; made again from the saved audio in "
                f"{fmt.seconds_short(time.perf_counter() - began)}",
                file=sys.stderr,
            )
        if status == 0 and store.queue.get_job(job.id).state is JobState.DONE:
            for path in make_outputs(store, job.id, outputs):
                print(path)
        return status, job.id


def _say_front_matter(book: Book) -> None:
    """Which chapters are left out by default, and how to have them narrated too."""
    chosen = set(book.default_selection)
    left = [c for c in book.chapters if c.index + 1 not in chosen]
    if left:
        shown = ", ".join(f"{c.index + 1} “{c.title}”" for c in left)
        print(
            f"Not narrated (title page or dedication): {shown}; "
            f"--chapters 1-{len(book.chapters)} narrates them too.",
            file=sys.stderr,
        )


# --- convert, several books ---------------------------------------------------------------
# A publisher or a library converts a back catalogue at once, and reads at the end which books
# are done and which need a look, rather than scrolling back through each book's progress.


def _books_in(paths: Sequence[Path]) -> list[Path]:
    """The books the arguments name, each once, in the order given: a folder stands for the
    books directly in it (files with a book extension, `BOOK_SUFFIXES`), by name. A path that
    is not there is kept, so that its own line says so while the other books are made; a
    folder without books is an error at once."""
    books: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            found = sorted(
                entry for entry in path.iterdir() if book_suffix(entry.name) and entry.is_file()
            )
            if not found:
                shown = ", ".join(BOOK_SUFFIXES)
                raise AudiopubError(f"No books ({shown}) in the folder {path}")
            books.update(dict.fromkeys(found))
        else:
            books.setdefault(path, None)
    unique: dict[Path, Path] = {}
    for book in books:  # the same file named twice (shelf/ and shelf/a.epub) is made once
        unique.setdefault(book.resolve(), book)
    return list(unique.values())


def _output_folder(requested: str | None) -> str | None:
    """`-o` for several books: a folder (written with a trailing slash, so it is made when
    missing and each book gets `<Title>.m4b` in it), or None (each book beside its EPUB)."""
    if requested is None:
        return None
    path = Path(requested)
    if path.is_file() or (not path.is_dir() and path.suffix.lower() == ".m4b"):
        raise AudiopubError(
            f"With several books, -o names a folder (each book is written "
            f"there as <Title>.m4b), not the file {requested}"
        )
    return requested if requested.endswith(("/", os.sep)) else requested + os.sep


@dataclass(frozen=True)
class BookLine:
    """How one book of the command ended."""

    epub: Path
    output: Path | None  # None: it never became a job
    state: str  # the job's state, or "failed" for a book that never became a job
    error: str = ""
    run: Speed | None = None  # what this command made of it


def _book_line(
    store: JobStore, epub: Path, job_id: str, elapsed_s: float, since: float
) -> BookLine:
    """The book's line from its job, after its run: `elapsed_s` of the command's wall time,
    from the Unix time `since` on (chunks made before belong to earlier runs)."""
    job = store.queue.get_job(job_id)
    progress = store.ledger.progress(job_id, since=since)
    return BookLine(
        epub,
        job.output_path,
        job.state.value,
        job.error or "",
        Speed(progress.made_chars, elapsed_s, progress.made_audio_s, Clock.WALL),
    )


def _summary(lines: Sequence[BookLine], books: int, elapsed_s: float) -> list[str]:
    """One line per book (state, name, where it went or why not, what this run made) and the
    total: books done of those asked for, and the whole command's speed."""
    width = max((len(line.epub.name) for line in lines), default=0)
    out = [f"\nBooks ({len(lines)} of {books}):"]
    for line in lines:
        where = f"→ {line.output}" if line.output and not line.error else line.error
        made = (
            f"  ({fmt.count(line.run.chars)} chars, {fmt.rate(line.run.chars_per_s)})"
            if line.run and line.run.chars
            else ""
        )
        out.append(f"  {line.state:9} {line.epub.name:{width}}  {where}{made}")
    done = sum(line.state == "done" for line in lines)
    chars = sum(line.run.chars for line in lines if line.run)
    audio_s = sum(line.run.audio_s for line in lines if line.run)
    total = Speed(chars, elapsed_s, audio_s, Clock.WALL)
    out.append(f"Total: {done} of {books} books done; {total.describe(fmt.START_TO_FINISH)}")
    return out


def _convert_library(args: argparse.Namespace, outputs: ConvertOutputs) -> int:
    """Several books, or folders of them: one job each, made one after another, each to its
    own output. A book that fails says why and the others still run; the last lines are one
    per book and the total. Ctrl-C pauses the book being made and stops there."""
    epubs = _books_in(args.book)
    folder = _output_folder(args.output)
    began, since = time.perf_counter(), time.time()
    lines: list[BookLine] = []
    status = 0
    for epub in epubs:
        print(f"\n{epub}", file=sys.stderr)
        started = time.perf_counter()
        try:
            status, job_id = _convert_book(
                args,
                epub,
                folder,
                outputs,
                frozenset(line.output for line in lines if line.output),
                skip_done=True,
            )
        except AudiopubError as exc:
            print(f"audiopub: error: {exc}", file=sys.stderr)
            lines.append(BookLine(epub, None, "failed", str(exc)))
            continue
        with JobStore.open_default() as store:
            lines.append(_book_line(store, epub, job_id, time.perf_counter() - started, since))
        if status == 130:  # interrupted: that book is paused, the rest wait for next time
            break
    print("\n".join(_summary(lines, len(epubs), time.perf_counter() - began)))
    if status == 130:
        return 130
    return 0 if all(line.state == JobState.DONE.value for line in lines) else 1


def _show_spoken(book: Book, max_chars: int, settings: JobSettings, lexicon: Lexicon) -> None:
    """Each chunk whose spoken form differs from its text, as the job will plan it."""
    for title, chunks in plan_book(
        book, max_chars, settings.chapters, settings.language, lexicon, settings.cast
    ):
        changed = [chunk for chunk in chunks if chunk.spoken != chunk.text]
        if changed:
            print(f"{title}:")
        for chunk in changed:
            print(f"  {chunk.text}\n  → {chunk.spoken}")


def _prepare_resume(store: JobStore, job: Job, wanted: JobSettings) -> Job:
    """The unfinished job back in the queue with the settings asked for now, whatever state an
    interruption left it in: paused, failed, cancelled, queued, or still marked running (by a
    run that was killed, or by another process that is making it now and lets it go after its
    current chunk)."""
    done = store.ledger.progress(job.id).chunks_done
    print(f"Resuming job {job.id[:8]} ({done} chunks already made)", file=sys.stderr)
    if wanted == job.settings:
        if job.state in (JobState.QUEUED, JobState.RUNNING):
            return job  # waiting, or being made (followed), or left by a crash (requeued)
    else:
        # The next run plans the job again from these: only chunks whose sound changed are redone.
        print("  settings changed: chunks they alter will be made again", file=sys.stderr)
    return store.queue.requeue_with(job.id, wanted)


# --- jobs, resume, pause, cancel, voices ------------------------------------------------


def _jobs(details: bool) -> int:
    with JobStore.open_default() as store:
        jobs = store.queue.list_jobs()
        width = title_width(jobs, shutil.get_terminal_size((100, 24)).columns)
        # `running` in the store, but no process runs jobs: its process was killed.
        interrupted = any(job.state is JobState.RUNNING for job in jobs) and not runner_alive(store)
        for job in jobs:
            progress = store.ledger.progress(job.id)
            state = job.state.value
            if interrupted and job.state is JobState.RUNNING:
                state = INTERRUPTED
            print(
                f"{job.id[:8]}  {state:9}  {100 * progress.fraction:5.1f}%  "
                f"{fit_title(job.title, width):{width}}  {job.output_path}"
            )
            if job.error:
                print(f"          {job.error}")
            if state == INTERRUPTED:
                print(
                    f"          no Audiopub process is making it (was it killed?): run the "
                    f"same command again, or `audiopub resume {job.id[:8]}`; it continues "
                    "from its last finished chunk"
                )
            if details:
                print(
                    "\n".join(
                        f"          {line}" for line in report.job_details(store, job, progress)
                    )
                )
    return 0


def _control(command: str, prefix: str) -> int:
    with JobStore.open_default() as store:
        job = store.queue.find_job(prefix)
        if command == "cancel":
            store.queue.set_state(job.id, JobState.CANCELLED)
        elif command == "pause":
            store.queue.set_state(job.id, JobState.PAUSED)
        else:
            store.queue.set_state(job.id, JobState.QUEUED)
            return foreground.run_or_follow(store, job.id, job_executors(), LISTENING)
        print(f"Job {job.id[:8]} is now {store.queue.get_job(job.id).state.value}")
    return 0


def _names(args: argparse.Namespace) -> int:
    if not args.book.is_file():
        raise AudiopubError(f"No such file: {args.book}")
    candidates = likely_names(read_book(args.book), args.language, args.limit)
    word_width = max((len(c.word) for c in candidates), default=4)
    example_width = max(shutil.get_terminal_size((100, 24)).columns - word_width - 15, 30)
    for rank, c in enumerate(candidates, 1):
        print(f"{rank:4}  {c.word:{word_width}}  {c.count:5}  {c.excerpt(example_width)}")
    return 0


def _chapters(args: argparse.Namespace) -> int:
    """Number, title, characters and first words of each chapter; title pages marked."""
    if not args.book.is_file():
        raise AudiopubError(f"No such file: {args.book}")
    book = read_book(args.book)
    columns = shutil.get_terminal_size((100, 24)).columns
    print(f"{book.title}" + (f" by {book.author}" if book.authors else ""))
    for chapter in book.chapters:
        mark = " (title page: narrated only if chosen)" if chapter.front_matter else ""
        head = f"{chapter.index + 1:4}  {chapter.title[:50]}{mark}  {chapter.char_count:,} chars"
        words = chapter.paragraphs[1 if len(chapter.paragraphs) > 1 else 0]
        room = max(columns - len(head) - 4, 20)
        print(f"{head}  {words[:room]}{'…' if len(words) > room else ''}")
    for warning in book.warnings:
        print(f"note: {warning}", file=sys.stderr)
    return 0


def _spoken(args: argparse.Namespace) -> int:
    lines = args.text if args.text and args.text != ["-"] else sys.stdin
    for line in lines:
        print(spoken_form(line.rstrip("\n"), args.language))
    return 0


def _book_cast(epub: Path, book: Book) -> BookCast:
    return BookCast.of(settings.data_dir(), epub, book, attribute)


# What a cast of voices needs, said when the engine has only the narrator's voice.
CAST_NEEDS = (
    "a cast of voices needs Kokoro or a multi-speaker Piper voice: "
    "`audiopub voices download kokoro`"
)


def _cast(args: argparse.Namespace) -> int:
    if not args.book.is_file():
        raise AudiopubError(f"No such file: {args.book}")
    engine = get_engine(args.engine)
    book_cast = _book_cast(args.book, read_book(args.book))
    narrator = args.voice or engine.voices()[0].id
    if args.again:
        unmatched = book_cast.find_again()
        if unmatched:
            print(
                f"cast: {unmatched} of your corrections name a character or quotation not "
                "found this time; they are kept in the cast file",
                file=sys.stderr,
            )
    for assignment in args.set:
        name, equals, voice = assignment.partition("=")
        if not equals or not name.strip() or not voice.strip():
            raise AudiopubError(f"--set takes NAME=VOICE, not {assignment!r}")
        book_cast.set_voice(name.strip(), voice.strip(), engine)
    # With one voice the characters and their quotations are still shown; only `convert
    # --cast` needs the voices.
    cast, voiced = book_cast.listed(engine, narrator)
    data = cast.to_dict()
    if args.json:
        keep = ("name", "aliases", "gender", "lines", "voice")
        print(
            json.dumps(
                {
                    "characters": [{k: c[k] for k in keep} for c in data["characters"]],
                    "quotes": [
                        {k: q[k] for k in ("chapter", "text", "speaker", "voice")}
                        for q in data["quotes"]
                    ],
                },
                ensure_ascii=False,
                indent=1,
            )
        )
    else:
        rows = data["characters"]
        width = max((len(row["name"]) for row in rows), default=4)
        print(f"{'narrator':{width}}  {narrator}")
        for row in rows:
            aliases = f"  ({', '.join(row['aliases'])})" if row["aliases"] else ""
            print(
                f"{row['name']:{width}}  {row['voice'] or '-':12} {row['gender'] or '?':6} "
                f"{row['lines']:5} lines{aliases}"
            )
        print()
        for q in data["quotes"]:
            text = q["text"] if len(q["text"]) <= 70 else q["text"][:69] + "…"
            print(f'{q["chapter"] + 1}:{q["paragraph"]}  {q["speaker"] or "-"}: "{text}"')
    if not data["characters"]:  # no voices are needed either
        print(f"cast: {NO_ONE_SPEAKS}", file=sys.stderr)
    else:
        print(cast.summary() if voiced else CAST_NEEDS, file=sys.stderr)
    return 0


def _bench(args: argparse.Namespace, options: settings.Settings) -> int:
    return bench_command.main(args, options)  # it imports what each mode needs when it runs


def _serve(args: argparse.Namespace) -> int:
    from audiopub.ui.app import main as serve_ui  # NiceGUI is only imported for the web UI

    serve_ui(
        host=args.host, port=args.port, show=not args.no_browser, allowed_hosts=args.allow_host
    )
    return 0


def _run(args: argparse.Namespace, options: settings.Settings) -> int:
    """The command `args` names, under its settings `options` (installed for it as well)."""
    if args.command == "convert":
        return _convert(args)
    if args.command == "jobs":
        return _jobs(args.details)
    if args.command in ("resume", "pause", "cancel"):
        return _control(args.command, args.job_id)
    if args.command == "export":
        return export_command.main(args)
    if args.command == "voices":
        return voices_command.main(args, listen_command)
    if args.command == "bench":
        return _bench(args, options)
    if args.command == "doctor":
        return doctor_command.main(args)  # it imports what it measures when it runs
    if args.command == "names":
        return _names(args)
    if args.command == "spoken":
        return _spoken(args)
    if args.command == "cast":
        return _cast(args)
    if args.command == "chapters":
        return _chapters(args)
    return _serve(args)  # `audiopub` alone, or `audiopub serve`


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    serving = args.command in (None, "serve")
    if not serving and (args.host, args.port, args.no_browser, args.allow_host) != (
        SERVE_HOST,
        SERVE_PORT,
        False,
        [],
    ):
        parser.error(
            f"--host, --port, --no-browser and --allow-host are for serving the web "
            f"UI, not for {args.command}"
        )
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        # Read once, for everything this command runs; `--ray` is for this process's jobs.
        options = settings.load(ray_address=args.ray)
        if args.command == "convert" and args.runtime:
            options = KOKORO_RUNTIME.given(options, args.runtime)
        check_settings(options)  # the engines' own, now rather than when one loads
        if args.ray:  # checked now, connected by the first job
            cluster_connection.ray_module()
        with settings.installed(options):
            return _run(args, options)
    except AudiopubError as exc:
        print(f"audiopub: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("audiopub: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`audiopub cast BOOK | head`): stop quietly, and keep Python
        # from failing again as it flushes stdout on the way out.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
