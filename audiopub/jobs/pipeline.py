"""One job from EPUB to .m4b, resumable at every chunk.

    plan      the book (read once, when the job was submitted, and kept with it) cut into
              chunks from the job's current settings, on every run, before any audio
    speak     each pending chunk → engine → chunk WAV (atomic) → marked done in the store
    listen    with proof-listening on, each chunk made is heard meanwhile by the run's
              `listening.ListeningStage`, which the `Listening` handed to the run starts
              (Whisper's: `audiopub.listen.stage`); before a chapter is stitched its
              flagged chunks are spoken again
    stitch    a chapter's chunk WAVs, in order, with pauses → chapter WAV → chapter done
    mux       chapter WAVs → AAC .m4b with chapters, tags and cover (atomic) → job done

Every step starts by trusting only what the store marks done *and* what is on disk, so a run
killed at any point continues where it stopped. The CLI and the background worker both run
a job through `jobs.worker.execute_job`, which runs a `JobRun`.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import soundfile as sf

from audiopub import settings as defaults
from audiopub.audio.ffmetadata import book_tags
from audiopub.audio.levels import level_chapter, measure_levels
from audiopub.audio.mux import chapter_marks, mux_m4b
from audiopub.audio.stitch import stitch_chapter
from audiopub.errors import (
    DiskFull,
    JobCancelled,
    JobPaused,
    JobStopped,
    SynthesisFailed,
)
from audiopub.figures import ENGINE_START, Clock, Speed, estimate_left_s, seconds_short
from audiopub.jobs.book_plan import job_lexicon, plan_book, stored_book
from audiopub.jobs.chunk_cache import (
    chunk_relpath,
    chunks_folder,
    remove_stale_temp_files,
    remove_unused_chunk_files,
    reuse_other_jobs_audio,
    verify_done_chapters,
    verify_done_chunks,
)
from audiopub.jobs.chunk_executor import ExecutorFactory
from audiopub.jobs.chunk_work import ChunkResult
from audiopub.jobs.disk_full import disk_full, is_disk_full
from audiopub.jobs.events import JobEvent
from audiopub.jobs.listening import NO_LISTENING, Listening, ListeningStage
from audiopub.jobs.models import ChapterState, ChunkRow, JobProgress, JobState
from audiopub.jobs.recorded_speed import machine_speed
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import (
    ENCODE_STAGE,
    audiobook_deleted,
    language_note,
    space_to_finish,
)
from audiopub.jobs.synthesis_plan import plan_synthesis
from audiopub.tts.engine import Engine

log = logging.getLogger(__name__)

CHAPTERS_DIR = "chapters"  # chapter WAVs inside the job's folder

Publish = Callable[[JobEvent], None]

# What a run is doing, in words: published from its first second, so a job that loads a voice
# or starts engine processes for half a minute says so instead of sitting at 0 %.
LOADING_VOICE = "Loading the voice…"
READING_BOOK = "Reading the book…"
PREPARING_TEXT = "Preparing the text…"
STARTING_ENGINE = "Starting the speech engine…"
SPEAKING = "Speaking “{chapter}”"
JOINING = "Joining the chapter’s audio…"
LOADING_EARS = "Loading the listening model…"
LISTENING = "Listening to “{chapter}”…"
ENCODING = "Encoding the audiobook…"


class JobRun:
    """Runs one job that is already in the `running` state."""

    def __init__(
        self,
        store: JobStore,
        job_id: str,
        engine: Engine | None = None,
        publish: Publish | None = None,
        stop_requested: Callable[[], bool] = lambda: False,
        keep_warm: bool = False,
        executors: ExecutorFactory | None = None,
        listening: Listening = NO_LISTENING,
    ) -> None:
        self.store = store
        self.job = store.queue.get_job(job_id)
        self.dir = store.job_dir(job_id)
        self._publish = publish or (lambda event: None)
        self._stop_requested = stop_requested
        self._keep_warm = keep_warm  # the engine processes stay for the next job when spoken
        self._recorded_speed: float | None = None  # chars/s this machine's benchmark found
        self._progress: JobProgress | None = None  # counted once the job is planned
        self._stage = ""
        # Its audiobook was made once and deleted: this run makes it again from the audio kept
        # in the job's folder, and says so when it is done.
        self._remaking = audiobook_deleted(self.job)
        self._set_stage(LOADING_VOICE)
        began = self._began = time.perf_counter()
        # An injected engine (tests, benchmarks) runs in this process; else `executors` makes
        # the executor (None: this machine's).
        self.plan = plan_synthesis(self.job.settings, engine, executors)
        self._loading_s = time.perf_counter() - began  # part of the engine's start-up
        self.engine = self.plan.engine
        self.executor = self.plan.executor
        self._handed_back = False  # the executor closed, once
        self._set_stage(READING_BOOK)
        self.book = stored_book(store, self.job)
        self._listening = listening  # what starts the stage of a job that listens
        self._listening_stage: ListeningStage | None = None  # started by `run` if it listens

    # --- the steps -------------------------------------------------------------------

    def run(self) -> Path:
        """Plan, speak what is missing, stitch, mux; returns the finished book.

        The executor is handed back once the audio is spoken, or when the run stops earlier.
        """
        try:
            return self._run()
        finally:
            self._hand_back_executor()

    def _run(self) -> Path:
        """The steps of `run`.

        The job is planned on every run from its current settings (chapter selection, voice,
        speed, ...): chunks whose audio is already made under those settings are kept, so a
        resume redoes exactly what a change altered, and nothing else.
        """
        began = time.perf_counter()
        settings = self.job.settings
        self._set_stage(PREPARING_TEXT)
        self.store.ledger.write_plan(
            self.job.id,
            plan_book(
                self.book,
                self.engine.max_chunk_chars,
                settings.chapters,
                settings.language,
                job_lexicon(self.store, self.job.epub_path, self.book, settings, self.engine),
                settings.cast,
            ),
        )
        # Text preparation: cutting the chapters into chunks and writing the plan.
        self.store.queue.set_job_stage_times(self.job.id, {"prepare": time.perf_counter() - began})
        chunks_folder(self.dir).mkdir(parents=True, exist_ok=True)
        (self.dir / CHAPTERS_DIR).mkdir(parents=True, exist_ok=True)
        self.store.queue.set_job_info(self.job.id, device=self._device())
        remove_stale_temp_files(chunks_folder(self.dir))
        verify_done_chunks(self.store, self.job.id, self.dir)
        verify_done_chapters(self.store, self.job.id, self.dir)
        reused = reuse_other_jobs_audio(self.store, self.job.id, self.dir)
        if reused:
            log.info("job %s: %d chunk(s) share audio other jobs made", self.job.id, reused)
        # Audio of an earlier plan or settings that this plan no longer uses.
        remove_unused_chunk_files(self.store, self.job.id, self.dir)
        # Counted once, then kept up to date per chunk: a store-wide count after every chunk
        # would cost O(chunks) each time, O(n²) over a long book.
        self._progress = self.store.ledger.progress(self.job.id)
        self._run_speed = Speed(0, 0.0, 0.0, Clock.WALL)  # what this run has made so far
        self._recorded_speed = machine_speed(
            settings.engine,
            self.plan.voice.id,
            settings.use_gpu,
            settings.steps if self.engine.uses_steps else None,
        )
        kept_chunks = self._progress.chunks_done
        if kept_chunks < self._progress.chunks_total:
            self._start_engine()
        else:  # every chunk's audio is there: stitched and encoded without the engine
            self.store.queue.set_job_stage_times(self.job.id, {ENGINE_START: self._loading_s})
            self._run_began = self._last_chunk_at = time.perf_counter()
        log.info("job %s: %s", self.job.id, self.plan.describe())
        note = language_note(settings.language, self.plan.voice)
        if note:
            self._emit(JobState.RUNNING, message=note)  # into the job's log
        # A model that can't load, or no listening handed in, fails the job before any speech.
        if settings.proof_listen:
            self._start_listening()
        try:
            self._speak_and_stitch()
            self._check_still_running()
            self._mux()
        except (OSError, DiskFull) as exc:
            if is_disk_full(exc):
                raise self._disk_full(exc) from exc
            raise
        self.store.queue.set_job_info(self.job.id, device=self._device())
        self.store.queue.set_state(self.job.id, JobState.DONE)
        self._remove_intermediate_files()
        # The library's file names are ids: say the book's title, and where a person finds it.
        where = (
            "in the Library"
            if self.job.output_path.parent == self.store.library_dir
            else str(self.job.output_path)
        )
        title = self.job.title or "the audiobook"
        if self._remaking:
            spoken = self._progress.chunks_done - kept_chunks
            again = (
                f" ({spoken} missing chunk{'s' if spoken != 1 else ''} spoken again)"
                if spoken
                else ""
            )
            message = (
                f"{title}: the audiobook was deleted; made again from the saved audio in "
                f"{seconds_short(time.perf_counter() - self._began)}{again} — {where}"
            )
        else:
            message = f"Finished: {title} — {where}"
        self._emit(JobState.DONE, message=message)
        return self.job.output_path

    def _start_engine(self) -> None:
        """Start the engine processes and load the voice: with loading the engine (the plan),
        a stage of its own, timed apart, so that no chunk's wall time, and so no speed or
        estimate, holds it (a pool of processes took 11-30 s of a short job there). The run's
        clock starts once it is done."""
        self._set_stage(STARTING_ENGINE)
        began = time.perf_counter()
        self.executor.start(self.plan.voice.id)
        # This run's: a resume starts the engine again, and says how long that took.
        self.store.queue.set_job_stage_times(
            self.job.id, {ENGINE_START: self._loading_s + time.perf_counter() - began}
        )
        self._run_began = self._last_chunk_at = time.perf_counter()

    def _device(self) -> str:
        """Where the chunks are spoken: the engine's device, or the cluster that speaks them."""
        return self.executor.describe().where

    def _disk_full(self, error: OSError | DiskFull) -> DiskFull:
        """How much to free for the rest of the job, where the disk filled up."""
        where = getattr(error, "filename", None) or getattr(error, "path", None) or self.dir
        folder = Path(where) if Path(where).is_dir() else Path(where).parent
        progress = self.store.ledger.progress(self.job.id)
        return disk_full(
            folder,
            space_to_finish(
                progress.chars_done, progress.chars_total, self.plan.sample_rate, self.plan.speed
            ),
        )

    def _speak_and_stitch(self) -> None:
        try:
            for chapter in self.store.ledger.chapters(self.job.id):
                if chapter.state is not ChapterState.DONE:
                    self._speak_chapter(chapter.idx, chapter.title)
                    self._proofread_chapter(chapter.idx, chapter.title)
                    self._stitch_chapter(chapter.idx, chapter.title)
        finally:  # spoken, or stopped: either way the engine processes are no longer needed
            self._stop_listening()
            if self.executor.peak_vram_mb:
                self.store.queue.record_peak_vram(self.job.id, self.executor.peak_vram_mb)
            self._hand_back_executor()

    def _hand_back_executor(self) -> None:
        if not self._handed_back:
            self._handed_back = True
            self.executor.close(keep_warm=self._keep_warm)

    def _speak_chapter(self, chapter_idx: int, title: str) -> None:
        self._check_still_running()
        pending = self.store.ledger.pending_chunks(self.job.id, chapter_idx)
        tasks = [self.plan.task(chunk, self.dir) for chunk in pending]
        # A chunk's wall time runs from the one before it, in this chapter: the previous
        # chapter's proof-listening and stitching are not speaking.
        self._last_chunk_at = time.perf_counter()
        results = self.executor.map(
            tasks, notify=lambda line: self._emit(JobState.RUNNING, message=line)
        )
        try:
            for chunk, result in zip(pending, results):
                self._record(chunk, result, title)
                self._check_still_running()
        finally:
            results.close()  # abandons chunks not yet started when the job stops

    def _record(self, chunk: ChunkRow, result: ChunkResult, chapter_title: str) -> None:
        if result.error is not None:
            self.store.ledger.mark_chunk_failed(self.job.id, chunk.cache_key, result.error)
            raise SynthesisFailed(result.error)
        now = time.perf_counter()
        marked = self.store.ledger.mark_chunk_done(
            self.job.id,
            chunk.cache_key,
            audio_path=chunk_relpath(chunk.cache_key),
            frames=result.frames,
            sample_rate=result.sample_rate,
            synth_s=result.synth_s,
            provider=result.provider,
            stage_times=result.stages,
            wall_s=now - self._last_chunk_at,
            word_starts=result.word_starts,
        )
        self._last_chunk_at = now
        if self._listening_stage is not None and marked.chunks:
            self._listening_stage.chunk_done(chunk, self.dir / chunk_relpath(chunk.cache_key))
        # Every chunk with this text shares the audio, so all of them are done now: each
        # counted with its own characters, which may not be this one's.
        progress = self._progress
        assert progress is not None  # counted when the job was planned, before any chunk
        self._progress = replace(
            progress,
            chunks_done=progress.chunks_done + marked.chunks,
            chars_done=progress.chars_done + marked.chars,
        )
        self._run_speed = Speed(
            self._run_speed.chars + chunk.char_count,
            now - self._run_began,
            self._run_speed.audio_s + result.frames / result.sample_rate,
            Clock.WALL,
        )
        self._stage = SPEAKING.format(chapter=chapter_title)
        self._emit(JobState.RUNNING, chapter_title=chapter_title)

    def _start_listening(self) -> None:
        self._set_stage(LOADING_EARS)
        began = time.perf_counter()
        self._listening_stage = self._listening.start(
            self.store,
            self.job,
            self.dir,
            self.plan,
            # No language known: "" lets Whisper detect it and the judge use neutral rules.
            self.job.settings.language or self.book.language or "",
            lambda line: self._emit(JobState.RUNNING, message=line),
        )
        self.store.queue.set_job_stage_times(
            self.job.id, {"listen": time.perf_counter() - began}, add=True
        )

    def _proofread_chapter(self, chapter_idx: int, title: str) -> None:
        """Wait until the chapter's chunks are heard, then speak again those flagged."""
        listening = self._listening_stage
        if listening is None or not listening.working:
            return
        self._set_stage(LISTENING.format(chapter=title))
        listening.finish_chapter(chapter_idx, self._check_still_running)
        began = time.perf_counter()
        repairs = listening.repair_chapter(chapter_idx, self._check_still_running)
        if repairs.spoken_again:
            self.store.queue.set_job_stage_times(
                self.job.id, {"retakes": time.perf_counter() - began}, add=True
            )
            self._emit(JobState.RUNNING, message=repairs.describe(title))

    def _stop_listening(self) -> None:
        if self._listening_stage is not None:
            self._listening_stage.close()
            self.store.queue.set_job_stage_times(
                self.job.id, {"listen": self._listening_stage.heard_s}, add=True
            )
            self._listening_stage = None

    def _stitch_chapter(self, chapter_idx: int, title: str) -> None:
        self._set_stage(JOINING)
        chunks = self.store.ledger.chapter_chunks(self.job.id, chapter_idx)
        relpath = f"{CHAPTERS_DIR}/{chapter_idx:04d}.wav"
        began = time.perf_counter()
        # The chapter is written at the rate its chunks were spoken at: the voice's own, as
        # each chunk file records it (16 kHz and 22.05 kHz Piper voices both exist).
        sample_rate = (
            sf.info(str(_done_audio(self.dir, chunks[0]))).samplerate
            if chunks
            else self.plan.sample_rate
        )
        # Where each chunk's speech lies in the chapter audio is kept for exports (`export`).
        stitched = stitch_chapter(
            [(_done_audio(self.dir, c), c.ends_paragraph) for c in chunks],
            sample_rate,
            self.dir / relpath,
        )
        synth_s = sum(c.synth_s or 0.0 for c in chunks)
        engine_stages: Counter[str] = Counter()
        for chunk in chunks:
            engine_stages.update(chunk.stage_times)
        stitched_at = time.perf_counter()
        levels = self._level(self.dir / relpath, title)
        speed = Speed(sum(c.char_count for c in chunks), synth_s, stitched.duration_s, Clock.ENGINE)
        self.store.ledger.mark_chapter_done(
            self.job.id,
            chapter_idx,
            audio_path=relpath,
            duration_s=stitched.duration_s,
            synth_s=synth_s,
            chars_per_s=speed.chars_per_s,
            rtf=speed.rtf,
            stage_times={
                "synthesis": synth_s,
                "stitch": stitched_at - began,
                "level": time.perf_counter() - stitched_at,
                **{f"engine.{name}": seconds for name, seconds in engine_stages.items()},
            },
            frames=stitched.frames,
            sample_rate=sample_rate,
            clips=stitched.clips,
            leads=stitched.leads,
            levels=levels,
        )

    def _level(self, wav: Path, title: str) -> dict[str, dict[str, float | None]]:
        """Measure the chapter's levels and bring them to the audiobook standard (in place:
        gain and limiter change no sample's position); the job's log names a chapter that is
        still out of range."""
        if defaults.level_chapters():
            before, after = level_chapter(wav)
        else:
            before = after = measure_levels(wav)
        problems = after.problems()
        if problems:
            self._emit(
                JobState.RUNNING,
                message=f"Chapter {title!r} is outside the audiobook levels: {'; '.join(problems)}",
            )
        return {"before": before.to_dict(), "after": after.to_dict()}

    def _mux(self) -> None:
        chapters = self.store.ledger.chapters(self.job.id)
        wavs = [self.dir / chapter.audio_path for chapter in chapters if chapter.audio_path]
        # Marks from each chapter file's exact length: back to back, as ffmpeg joins them.
        marks = chapter_marks([chapter.title for chapter in chapters], wavs)
        self._stage = ENCODING
        self._emit(JobState.RUNNING, message="Encoding the audiobook")
        self.job.output_path.parent.mkdir(parents=True, exist_ok=True)
        # Checked while ffmpeg runs too: a cancel or pause during encoding stops it at once.
        began = time.perf_counter()
        mux_m4b(
            wavs,
            marks,
            book_tags(self.book, self.job.settings.narrator),
            self.book.cover,
            self.job.output_path,
            progress=lambda fraction: self._check_still_running(),
        )
        self.store.queue.set_job_stage_times(
            self.job.id, {ENCODE_STAGE: time.perf_counter() - began}
        )

    def _remove_intermediate_files(self) -> None:
        """Chapter WAVs are remade from chunk audio in seconds; chunk audio is kept unless the
        user says otherwise, for later jobs of the same text (see `chunk_cache`)."""
        if not defaults.keep_intermediate_files():
            shutil.rmtree(self.dir / CHAPTERS_DIR, ignore_errors=True)
        if not defaults.keep_chunk_audio():
            shutil.rmtree(chunks_folder(self.dir), ignore_errors=True)

    # --- control and reporting -------------------------------------------------------

    def _check_still_running(self) -> None:
        """Cancel and pause are state changes made by others (UI, CLI); honour them here."""
        if self._stop_requested():
            raise JobStopped("Audiopub is shutting down; the job continues at the next start")
        state = self.store.queue.get_job(self.job.id).state
        if state is JobState.CANCELLED:
            raise JobCancelled("The job was cancelled")
        if state is JobState.PAUSED:
            raise JobPaused("The job was paused")
        if state is not JobState.RUNNING:  # e.g. paused and resumed between two checks
            raise JobStopped(f"The job was {state.value} meanwhile")

    def _set_stage(self, stage: str) -> None:
        self._stage = stage
        self._emit(JobState.RUNNING)

    def _emit(self, state: JobState, chapter_title: str = "", message: str = "") -> None:
        progress = self._progress
        if progress is None:  # before the plan: nothing counted yet, only what is happening
            self._publish(
                JobEvent(job_id=self.job.id, state=state, message=message, stage=self._stage)
            )
            return
        self._publish(
            JobEvent(
                job_id=self.job.id,
                state=state,
                chars_done=progress.chars_done,
                chars_total=progress.chars_total,
                chunks_done=progress.chunks_done,
                chunks_total=progress.chunks_total,
                run=self._run_speed,
                eta_s=estimate_left_s(
                    self._run_speed,
                    progress.chars_total - progress.chars_done,
                    self._recorded_speed,
                ),
                chapter_title=chapter_title,
                provider=self.engine.device.describe(),
                message=message,
                stage=self._stage if state is JobState.RUNNING else "",
            )
        )


def _done_audio(job_dir: Path, chunk: ChunkRow) -> Path:
    """A done chunk's audio file: a chapter is stitched only once all its chunks are done."""
    assert chunk.audio_path is not None
    return job_dir / chunk.audio_path
