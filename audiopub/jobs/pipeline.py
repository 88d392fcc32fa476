"""One job from EPUB to .m4b, resumable at every chunk.

    plan      the book (read once, when the job was submitted, and kept with it) cut into
              chunks from the job's current settings, on every run, before any audio
    speak     each pending chunk → engine → chunk WAV (atomic) → marked done in the store
    stitch    a chapter's chunk WAVs, in order, with pauses → chapter WAV → chapter done
    mux       chapter WAVs → AAC .m4b with chapters, tags and cover (atomic) → job done

Every step starts by trusting only what the store marks done *and* what is on disk, so a run
killed at any point continues where it stopped. The CLI and the background worker both run
a job through `jobs.worker.execute_job`, which runs a `JobRun`.
"""

from __future__ import annotations

import errno
import logging
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import soundfile as sf

from audiopub import settings as defaults
from audiopub.audio.mux import BookTags, chapter_marks, mux_m4b
from audiopub.audio.stitch import ChapterWriter, pause_after
from audiopub.book.chunking import chunk_paragraphs
from audiopub.book.epub_reader import read_epub
from audiopub.book.lexicon import (
    Lexicon,
    book_lexicon_path,
    from_book,
    read_if_present,
    user_lexicon_path,
)
from audiopub.book.models import Book, Chapter, Chunk
from audiopub.book.scripts import check_speakable
from audiopub.book.spoken import spoken_form, supported_languages
from audiopub.errors import (
    AudiopubError,
    DiskFull,
    JobCancelled,
    JobPaused,
    JobStopped,
    SynthesisFailed,
)
from audiopub.figures import Clock, Speed
from audiopub.jobs.chunk_cache import (
    chunk_path,
    chunk_relpath,
    remove_stale_temp_files,
    remove_unused_chunk_files,
    verify_done_chapters,
    verify_done_chunks,
)
from audiopub.jobs.events import JobEvent
from audiopub.jobs.executor import (
    ChunkExecutor,
    ChunkResult,
    ChunkTask,
    InlineExecutor,
    executor_for,
    release,
)
from audiopub.jobs.models import ChapterState, ChunkRow, Job, JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.tts.engine import Engine, Voice, voice_of
from audiopub.tts.registry import get_engine

log = logging.getLogger(__name__)

CHAPTERS_DIR = "chapters"  # chapter WAVs inside the job's folder
CHUNKS_DIR = "chunks"  # chunk WAVs inside the job's folder

Publish = Callable[[JobEvent], None]


def parse_chapter_selection(spec: str, count: int) -> list[int]:
    """"1-3,7" → [1, 2, 3, 7] (1-based, in book order, each once); errors name the bad part."""
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
        if not 1 <= start <= end <= count:
            raise AudiopubError(f"Chapter selection {part!r} is outside 1-{count}")
        chosen.update(range(start, end + 1))
    if not chosen:
        raise AudiopubError("The chapter selection is empty")
    return sorted(chosen)


def plan_book(book: Book, max_chars: int, selection: Sequence[int] | None = None,
              language: str | None = None,
              lexicon: Lexicon | None = None) -> list[tuple[str, list[Chunk]]]:
    """The chapters to narrate, each cut into chunks the engine reads well, with the words a
    narrator says for each: as the `lexicon` says for what its entries claim, else numbers,
    numerals, abbreviations and units by the rules of the text's `language` (default: the
    book's)."""
    text_language = language or book.language

    def plain(text: str) -> str:
        return spoken_form(text, text_language)

    def speak(text: str) -> str:
        return lexicon.speak(text, plain) if lexicon else plain(text)

    return [(ch.title, chunk_paragraphs(ch.paragraphs, max_chars, ch.index, speak))
            for ch in chosen_chapters(book, selection)]


def chosen_chapters(book: Book, selection: Sequence[int] | None) -> list[Chapter]:
    """The chapters a 1-based selection names, in book order; all of them without one."""
    return [book.chapters[i - 1] for i in selection] if selection else list(book.chapters)


def book_tags(book: Book) -> BookTags:
    return BookTags(title=book.title, author=book.author, album=book.title)


def resolve_settings(settings: JobSettings, engine: Engine, book: Book) -> JobSettings:
    """Fill in what the user left open: the voice (the engine's first), the language (the
    book's) and the model identity, so that cache keys are the same on every run."""
    voice = settings.voice or engine.voices()[0].id
    return JobSettings.from_dict({**settings.to_dict(), "voice": voice,
                                  "language": settings.language or book.language,
                                  "model_id": engine.model_id(voice)})


def language_note(text_language: str | None, voice: Voice) -> str | None:
    """A line for the user when the book's language is not the voice's: its numbers and
    abbreviations are said by the book's language's rules, its words in the voice's accent."""
    if not text_language or voice.language == "multi":
        return None
    if _primary(text_language) == _primary(voice.language):
        return None
    rules = (f"{text_language} rules" if _primary(text_language) in supported_languages()
             else "no language's rules (digits are left to the voice)")
    return (f"The book is in {text_language}, the voice {voice.id} speaks {voice.language}: "
            f"numbers and abbreviations are read by {rules}; choose a voice in the book's "
            "language for the best result.")


def _primary(language: str) -> str:
    return language.replace("_", "-").split("-", 1)[0].lower()


def disk_needed(chars: int, sample_rate: int, speed: float) -> int:
    """Bytes a job writes at its peak: 16-bit chunk WAVs, chapter WAVs, then the .m4b."""
    audio_s = chars / (defaults.CHARS_PER_AUDIO_SECOND * speed)
    return int(audio_s * sample_rate * 2 * 2 + audio_s * 8_000)  # 64 kb/s AAC = 8 kB/s


def check_disk_space(folder: Path, needed: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise DiskFull(f"This book needs about {needed / 1e9:.1f} GB free in {folder} while it "
                       f"is made; only {free / 1e9:.1f} GB are free.")


def submit_job(store: JobStore, epub: Path, book: Book, output: Path, settings: JobSettings,
               engine: Engine) -> Job:
    """Check the book, the settings and the room for it, then queue a job.

    `book` is `read_epub(epub)`, read by the caller (who needed it already: the page shows it,
    the CLI checks the chapter selection against it). The job keeps it, with a copy of the
    EPUB, so nothing reads the book again.
    """
    active = store.list_jobs([JobState.QUEUED, JobState.RUNNING])
    if len(active) >= defaults.MAX_ACTIVE_JOBS:
        raise AudiopubError(f"{len(active)} jobs are already waiting or running; let some "
                            "finish (or cancel them) before adding more.")
    if settings.chapters and max(settings.chapters) > len(book.chapters):
        raise AudiopubError(f"The book has only {len(book.chapters)} chapters")
    resolved = resolve_settings(settings, engine, book)
    voice = voice_of(engine, resolved.voice or "")
    # The language the voice will speak: its own, or the book's for multilingual voices.
    check_speakable(book, resolved.language if voice.language == "multi" else voice.language,
                    voice.id)
    job_lexicon(store, epub, book, resolved, engine)  # a bad entry fails here, before a job
    chars = sum(ch.char_count for ch in chosen_chapters(book, resolved.chapters))
    check_disk_space(store.jobs_dir, disk_needed(chars, voice.sample_rate, resolved.speed))
    return store.create_job(epub, output.resolve(), resolved, book=book)


def job_lexicon(store: JobStore, epub: Path, book: Book, settings: JobSettings,
                engine: Engine) -> Lexicon:
    """The entries of every scope for a job, first wins: its own, its book's, the EPUB's own
    hints, the user's — files read now, so an edit counts at the next run — checked against
    the voice."""
    data_dir = store.path.parent
    entries = [*settings.lexicon,
               *read_if_present(book_lexicon_path(data_dir, epub)),
               *from_book(book.pronunciations),
               *read_if_present(user_lexicon_path(data_dir))]
    return Lexicon(entries, engine.phoneme_symbols(settings.voice or ""))


def stored_book(store: JobStore, job: Job) -> Book:
    """The book the job was submitted with; a job from before books were kept with their
    jobs reads its EPUB copy once, and keeps what it read."""
    book = store.book(job.id)
    if book is None:
        book = read_epub(job.epub_path)
        store.keep_book(job.id, book)
    return book


class JobRun:
    """Runs one job that is already in the `running` state."""

    def __init__(self, store: JobStore, job_id: str, engine: Engine | None = None,
                 publish: Publish | None = None,
                 stop_requested: Callable[[], bool] = lambda: False) -> None:
        self.store = store
        self.job = store.get_job(job_id)
        self.dir = store.job_dir(job_id)
        if engine is None:
            engine = get_engine(self.job.settings.engine, use_gpu=self.job.settings.use_gpu)
            self.executor: ChunkExecutor = executor_for(self.job.settings.engine, engine)
        else:  # an injected engine (tests, benchmarks) runs in this thread
            self.executor = InlineExecutor(engine)
        self.engine = engine
        self._publish = publish or (lambda event: None)
        self._stop_requested = stop_requested
        self.book = stored_book(store, self.job)
        self.synthesised = 0  # chunks made in this run (the rest were reused)

    # --- the steps -------------------------------------------------------------------

    def run(self) -> Path:
        """Plan, speak what is missing, stitch, mux; returns the finished book.

        The job is planned on every run from its current settings (chapter selection, voice,
        speed, ...): chunks whose audio is already made under those settings are kept, so a
        resume redoes exactly what a change altered, and nothing else.
        """
        began = time.perf_counter()
        settings = self.job.settings
        self.store.write_plan(self.job.id, plan_book(
            self.book, self.engine.max_chunk_chars, settings.chapters, settings.language,
            job_lexicon(self.store, self.job.epub_path, self.book, settings, self.engine)))
        # Text preparation: cutting the chapters into chunks and writing the plan.
        self.store.set_job_stage_times(self.job.id, {"prepare": time.perf_counter() - began})
        (self.dir / CHUNKS_DIR).mkdir(parents=True, exist_ok=True)
        (self.dir / CHAPTERS_DIR).mkdir(parents=True, exist_ok=True)
        self.store.set_job_info(self.job.id, device=self.engine.device.describe())
        remove_stale_temp_files(self.dir / CHUNKS_DIR)
        verify_done_chunks(self.store, self.job.id, self.dir)
        verify_done_chapters(self.store, self.job.id, self.dir)
        # Audio of an earlier plan or settings that this plan no longer uses.
        remove_unused_chunk_files(self.store, self.job.id, self.dir)
        # Counted once, then kept up to date per chunk: a store-wide count after every chunk
        # would cost O(chunks) each time, O(n²) over a long book.
        self._progress = self.store.progress(self.job.id)
        self._run_began = self._last_chunk_at = time.perf_counter()
        self._run = Speed(0, 0.0, 0.0, Clock.WALL)  # what this run has made so far
        note = language_note(settings.language, voice_of(self.engine, settings.voice or ""))
        if note:
            self._emit(JobState.RUNNING, message=note)  # into the job's log
        try:
            self._speak_and_stitch()
            self._check_still_running()
            self._mux()
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise DiskFull(
                    f"The disk is full ({exc.filename or self.dir}). Free some space and "
                    "resume the job: finished chunks are kept."
                ) from exc
            raise
        self.store.set_job_info(self.job.id, device=self.engine.device.describe())
        self.store.set_state(self.job.id, JobState.DONE)
        if not defaults.keep_intermediate_files():
            self._remove_intermediate_files()
        self._emit(JobState.DONE, message=f"Finished: {self.job.output_path}")
        return self.job.output_path

    def _speak_and_stitch(self) -> None:
        try:
            for chapter in self.store.chapters(self.job.id):
                if chapter.state is not ChapterState.DONE:
                    self._speak_chapter(chapter.idx, chapter.title)
                    self._stitch_chapter(chapter.idx)
        finally:  # spoken, or stopped: either way the engine processes are no longer needed
            release(self.executor)

    def _speak_chapter(self, chapter_idx: int, title: str) -> None:
        settings = self.job.settings
        assert settings.voice is not None  # resolved when the job was submitted
        self._check_still_running()
        pending = self.store.pending_chunks(self.job.id, chapter_idx)
        tasks = [ChunkTask(c.cache_key, c.spoken, settings.voice, settings.synthesis_options(),
                           chunk_path(self.dir, c.cache_key)) for c in pending]
        results = self.executor.map(tasks)
        try:
            for chunk, result in zip(pending, results):
                self._record(chunk, result, title)
                self._check_still_running()
        finally:
            results.close()  # abandons chunks not yet started when the job stops

    def _record(self, chunk: ChunkRow, result: ChunkResult, chapter_title: str) -> None:
        if result.error is not None:
            self.store.mark_chunk_failed(self.job.id, chunk.cache_key, result.error)
            raise SynthesisFailed(result.error)
        now = time.perf_counter()
        marked = self.store.mark_chunk_done(
            self.job.id, chunk.cache_key, audio_path=chunk_relpath(chunk.cache_key),
            frames=result.frames, sample_rate=result.sample_rate, synth_s=result.synth_s,
            provider=result.provider, stage_times=result.stages,
            wall_s=now - self._last_chunk_at)
        self._last_chunk_at = now
        # Every chunk with this text shares the audio, so all of them are done now.
        self._progress = replace(self._progress,
                                 chunks_done=self._progress.chunks_done + marked,
                                 chars_done=self._progress.chars_done + marked * len(chunk.text))
        self.synthesised += 1
        self._run = Speed(self._run.chars + len(chunk.text), now - self._run_began,
                          self._run.audio_s + result.frames / result.sample_rate, Clock.WALL)
        self._emit(JobState.RUNNING, chapter_title=chapter_title)

    def _stitch_chapter(self, chapter_idx: int) -> None:
        chunks = self.store.chapter_chunks(self.job.id, chapter_idx)
        relpath = f"{CHAPTERS_DIR}/{chapter_idx:04d}.wav"
        began = time.perf_counter()
        # The chapter is written at the rate its chunks were spoken at: the voice's own, as
        # each chunk file records it (16 kHz and 22.05 kHz Piper voices both exist).
        sample_rate = (sf.info(str(self.dir / chunks[0].audio_path)).samplerate if chunks
                       else voice_of(self.engine, self.job.settings.voice or "").sample_rate)
        with ChapterWriter(self.dir / relpath, sample_rate) as writer:
            for chunk in chunks:
                assert chunk.audio_path is not None  # every chunk of the chapter is done
                samples, rate = sf.read(self.dir / chunk.audio_path, dtype="float32")
                if rate != sample_rate:  # one voice per job: only damaged files get here
                    raise AudiopubError(f"{chunk.audio_path} is at {rate} Hz, the rest of its "
                                        f"chapter at {sample_rate} Hz")
                writer.add(samples, pause_after(chunk.ends_paragraph))
            writer.add_silence(defaults.CHAPTER_PAUSE_S)
        synth_s = sum(c.synth_s or 0.0 for c in chunks)
        engine_stages: Counter[str] = Counter()
        for chunk in chunks:
            engine_stages.update(chunk.stage_times)
        speed = Speed(sum(len(c.text) for c in chunks), synth_s, writer.duration_s, Clock.ENGINE)
        self.store.mark_chapter_done(
            self.job.id, chapter_idx, audio_path=relpath, duration_s=writer.duration_s,
            synth_s=synth_s, chars_per_s=speed.chars_per_s, rtf=speed.rtf,
            stage_times={"synthesis": synth_s, "stitch": time.perf_counter() - began,
                         **{f"engine.{name}": seconds for name, seconds in engine_stages.items()}},
        )

    def _mux(self) -> None:
        chapters = self.store.chapters(self.job.id)
        wavs = [self.dir / chapter.audio_path for chapter in chapters if chapter.audio_path]
        # Marks from each chapter file's exact length: back to back, as ffmpeg joins them.
        marks = chapter_marks([chapter.title for chapter in chapters], wavs)
        self._emit(JobState.RUNNING, message="Encoding the audiobook")
        self.job.output_path.parent.mkdir(parents=True, exist_ok=True)
        # Checked while ffmpeg runs too: a cancel or pause during encoding stops it at once.
        began = time.perf_counter()
        mux_m4b(wavs, marks, book_tags(self.book), self.book.cover, self.job.output_path,
                progress=lambda fraction: self._check_still_running())
        self.store.set_job_stage_times(self.job.id, {"encode": time.perf_counter() - began})

    def _remove_intermediate_files(self) -> None:
        for folder in (CHUNKS_DIR, CHAPTERS_DIR):
            shutil.rmtree(self.dir / folder, ignore_errors=True)

    # --- control and reporting -------------------------------------------------------

    def _check_still_running(self) -> None:
        """Cancel and pause are state changes made by others (UI, CLI); honour them here."""
        if self._stop_requested():
            raise JobStopped("Audiopub is shutting down; the job continues at the next start")
        state = self.store.get_job(self.job.id).state
        if state is JobState.CANCELLED:
            raise JobCancelled("The job was cancelled")
        if state is JobState.PAUSED:
            raise JobPaused("The job was paused")
        if state is not JobState.RUNNING:  # e.g. paused and resumed between two checks
            raise JobStopped(f"The job was {state.value} meanwhile")

    def _emit(self, state: JobState, chapter_title: str = "", message: str = "") -> None:
        progress = self._progress
        self._publish(JobEvent(
            job_id=self.job.id, state=state,
            chars_done=progress.chars_done, chars_total=progress.chars_total,
            chunks_done=progress.chunks_done, chunks_total=progress.chunks_total,
            run=self._run, eta_s=self._run.eta_s(progress.chars_total - progress.chars_done),
            chapter_title=chapter_title, provider=self.engine.device.describe(),
            message=message,
        ))
