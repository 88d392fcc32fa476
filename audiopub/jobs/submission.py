"""Everything before a job runs: checking a book and its settings, and queueing the job.

`submit_job` is what the page and the CLI call; `made_as_asked` tells the CLI that a book asked
for again was made already, and `deleted_as_asked` finds the job that made it where its
audiobook was deleted since: `remake` makes it again from the audio its folder kept. The disk
a job needs is estimated here, for the check at submission and for the runs that follow
(`space_to_finish`). Whether a job proof-listens is decided here too, by asking the
`Listening` the caller hands in (`jobs.listening`; none: no job can listen).
"""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from audiopub import settings as defaults
from audiopub.book.models import Book
from audiopub.book.scripts import check_speakable, primary_subtag
from audiopub.book.spoken import supported_languages
from audiopub.errors import AudiopubError, DiskFull
from audiopub.gpu.monitor import query_gpu_info
from audiopub.jobs.book_plan import chosen_chapters, job_lexicon, plan_book
from audiopub.jobs.listening import NO_LISTENING, Listening
from audiopub.jobs.models import Job, JobSettings, JobState, chunk_cache_key
from audiopub.jobs.store import JobStore
from audiopub.tts.engine import Engine, Voice, voice_of
from audiopub.voices.casting import check_voicing
from audiopub.voices.suggest import language_name, voices_for


def parse_chapter_selection(spec: str, count: int) -> list[int]:
    """ "1-3,7" → [1, 2, 3, 7] (1-based, in book order, each once); errors name the bad part."""
    chosen: set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        first, _, last = part.partition("-")
        try:
            start, end = int(first), int(last or first)
        except ValueError:
            raise AudiopubError(f"Bad chapter selection {part!r}: use numbers like 1-3,7") from None
        if start > end:
            raise AudiopubError(
                f"Chapter selection {part!r} is reversed: write the lower "
                f"number first ({end}-{start})"
            )
        if not 1 <= start <= end <= count:
            raise AudiopubError(f"Chapter selection {part!r} is outside 1-{count}")
        chosen.update(range(start, end + 1))
    if not chosen:
        raise AudiopubError("The chapter selection is empty")
    return sorted(chosen)


def resolve_settings(
    settings: JobSettings,
    engine: Engine,
    book: Book,
    earlier: JobSettings | None = None,
    listening: Listening = NO_LISTENING,
) -> JobSettings:
    """Fill in what the user left open: the voice (the engine's first), the language (the
    book's) and the model identity, so that cache keys are the same on every run; and whether
    the job proof-listens (`listening_decision`; `earlier`: the settings of the job resumed)."""
    voice = settings.voice or engine.voices()[0].id
    return JobSettings.from_dict(
        {
            **settings.to_dict(),
            "voice": voice,
            "language": settings.language or book.language,
            "model_id": engine.model_id(voice),
            "proof_listen": listening_decision(settings, earlier, listening),
        }
    )


def listening_decision(
    settings: JobSettings,
    earlier: JobSettings | None = None,
    listening: Listening = NO_LISTENING,
) -> bool:
    """Asked for: on, once `listening` can run here (ListeningUnavailable says what is
    missing, before anything is spoken). Not said: what the job decided when it was
    submitted, for a job resumed; for a new one, on where the job asks for a GPU that is there
    and listening is ready, off on the CPU (it costs CPU seconds per audio minute)."""
    if settings.proof_listen:
        listening.require()
        return True
    if settings.proof_listen is False:
        return False
    if earlier is not None and earlier.proof_listen is not None:
        return earlier.proof_listen
    if not settings.use_gpu:
        return False
    gpus = query_gpu_info()
    return gpus.available and bool(gpus.gpus) and listening.ready()


def language_note(text_language: str | None, voice: Voice) -> str | None:
    """A line for the user when the book's language is not the voice's: its words are
    pronounced in the voice's language, its numbers and abbreviations said by the book's
    language's rules; and a voice in the book's language from the lists that ship with
    Audiopub, with how to get it."""
    if not text_language or voice.speaks(text_language):
        return None
    rules = (
        f"{text_language} rules"
        if primary_subtag(text_language) in supported_languages()
        else "no language's rules (digits are left to the voice)"
    )
    accent = "a language it knows" if voice.language == "multi" else language_name(voice.language)
    wanted = language_name(text_language)
    suggestions = voices_for(text_language)
    advice = (
        f"For {wanted}, choose {' or '.join(s.describe() for s in suggestions)}."
        if suggestions
        else f"No voice Audiopub knows of reads {wanted}."
    )
    return (
        f"The book is in {text_language}, the voice {voice.id} speaks "
        f"{voice.describe_languages()}: its words will be pronounced as {accent}, its "
        f"numbers and abbreviations read by {rules}. {advice}"
    )


def disk_needed(chars: int, sample_rate: int, speed: float) -> int:
    """Bytes a job writes at its peak: chunk audio (counted as 16-bit PCM, which its FLAC
    files stay under), chapter WAVs, then the .m4b."""
    audio_s = chars / (defaults.CHARS_PER_AUDIO_SECOND * speed)
    return int(audio_s * sample_rate * 2 * 2 + audio_s * 8_000)  # 64 kb/s AAC = 8 kB/s


def space_to_finish(chars_done: int, chars_total: int, sample_rate: int, speed: float) -> int:
    """Bytes a job still writes: what `disk_needed` counts for the text not yet spoken, and
    the .m4b's share of what was."""
    audio_done_s = chars_done / (defaults.CHARS_PER_AUDIO_SECOND * speed)
    return disk_needed(max(chars_total - chars_done, 0), sample_rate, speed) + int(
        audio_done_s * 8_000
    )


def check_disk_space(folder: Path, needed: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise DiskFull(
            f"This book needs about {needed / 1e9:.1f} GB free in {folder} while it "
            f"is made; only {free / 1e9:.1f} GB are free."
        )


def _check_queue_room(store: JobStore) -> None:
    active = store.queue.list_jobs([JobState.QUEUED, JobState.RUNNING])
    if len(active) >= defaults.MAX_ACTIVE_JOBS:
        raise AudiopubError(
            f"{len(active)} jobs are already waiting or running; let some "
            "finish (or cancel them) before adding more."
        )


def submit_job(
    store: JobStore,
    epub: Path,
    book: Book,
    output: Path,
    settings: JobSettings,
    engine: Engine,
    listening: Listening = NO_LISTENING,
) -> Job:
    """Check the book, the settings and the room for it, then queue a job.

    `book` is `read_epub(epub)`, read by the caller (who needed it already: the page shows it,
    the CLI checks the chapter selection against it). The job keeps it, with a copy of the
    EPUB, so nothing reads the book again. `listening`: what the job would hear with, asked
    whether it can (`listening_decision`).
    """
    _check_queue_room(store)
    if settings.chapters and max(settings.chapters) > len(book.chapters):
        raise AudiopubError(f"The book has only {len(book.chapters)} chapters")
    resolved = resolve_settings(settings, engine, book, listening=listening)
    voice = voice_of(engine, resolved.voice or "")
    # The language the voice will speak: its own, or the book's where the voice reads it
    # (multilingual voices; Kokoro's voices read each of Kokoro's languages).
    reads_book = voice.language == "multi" or (
        bool(voice.languages) and bool(resolved.language) and voice.speaks(resolved.language or "")
    )
    check_speakable(book, resolved.language if reads_book else voice.language, voice.id)
    if resolved.cast is not None:
        check_voicing(resolved.cast, engine, voice)
    job_lexicon(store, epub, book, resolved, engine)  # a bad entry fails here, before a job
    chars = sum(ch.char_count for ch in chosen_chapters(book, resolved.chapters))
    check_disk_space(store.jobs_dir, disk_needed(chars, voice.sample_rate, resolved.speed))
    return store.queue.create_job(epub, output.resolve(), resolved, book=book)


def made_as_asked(
    store: JobStore, job: Job, book: Book, settings: JobSettings, engine: Engine
) -> bool:
    """Whether the finished `job` made `book` as `settings` (resolved) would make it now: the
    same settings and the same words in every chunk (the lexicon files are read again, so an
    edit since counts as a change)."""
    if settings != job.settings:
        return False
    lexicon = job_lexicon(store, job.epub_path, book, settings, engine)
    planned = [
        chunk_cache_key(chunk.spoken, settings, chunk.voice)
        for _, chunks in plan_book(
            book,
            engine.max_chunk_chars,
            settings.chapters,
            settings.language,
            lexicon,
            settings.cast,
        )
        for chunk in chunks
    ]
    return planned == [row.cache_key for row in store.ledger.all_chunks(job.id)]


# The job-wide stage a run records once its audiobook is written (`pipeline.JobRun._mux`).
ENCODE_STAGE = "encode"


def same_epub(job: Job, epub: Path) -> bool:
    """Whether `job` was made from this very book file (its copy holds the same bytes)."""
    return job.epub_path.is_file() and filecmp.cmp(job.epub_path, epub, shallow=False)


def audiobook_deleted(job: Job) -> bool:
    """Whether the job wrote its audiobook once (it is recorded as encoded) and the file is
    gone: a finished job's output deleted, or one queued to be made again."""
    return ENCODE_STAGE in job.stage_times and not job.output_path.exists()


def deleted_as_asked(
    store: JobStore,
    epub: Path,
    book: Book,
    settings: JobSettings,
    engine: Engine,
    output: Path | None = None,
    folder: Path | None = None,
    listening: Listening = NO_LISTENING,
) -> Job | None:
    """The newest finished job that made `epub` as `settings` would make it now (to `output`,
    or into `folder`, if given) and whose audiobook was deleted since; None if there is
    none."""
    for job in reversed(store.queue.list_jobs([JobState.DONE])):
        if output is not None and job.output_path != output.resolve():
            continue
        if folder is not None and job.output_path.parent != folder.resolve():
            continue
        if job.output_path.exists() or not same_epub(job, epub):
            continue
        resolved = resolve_settings(settings, engine, book, job.settings, listening)
        if made_as_asked(store, job, book, resolved, engine):
            return job
    return None


def remake(store: JobStore, job: Job) -> Job:
    """Queue `job` (finished, its audiobook deleted) to be made again: its run stitches and
    encodes the chapters from the audio kept in its folder and speaks only what is missing
    there (`chunk_cache.verify_done_chunks`, `verify_done_chapters`)."""
    _check_queue_room(store)
    return store.queue.remake(job.id)
