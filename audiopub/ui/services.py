"""The one `Services` object of the UI process, shared by every page and tab.

    Services
     ├── store        JobStore in the data dir (jobs survive restarts)
     ├── bus          EventBus: the worker publishes progress on it
     ├── worker       ONE background thread running queued jobs, whatever the number of tabs
     ├── activity     the bus drained into a per-job log and the latest figures
     ├── gpu          GpuMonitor: NVML sampled on its own thread
     ├── downloads    VoiceDownloads: one voice download at a time, on its own thread
     ├── reader       BookReader: uploads read in worker processes, a few at a time
     ├── preferences  the UI's remembered settings
     └── mixes        Kokoro voice mixes saved under a name

Pages call `current()`; `app.setup()` installs it (tests install one built on a temporary data
dir, with a fake NVML). Methods that touch disks, engines or drivers block: call them through
`run.io_bound`.
"""

from __future__ import annotations

import io
import logging
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import numpy as np
import soundfile as sf

from audiopub import settings as defaults
from audiopub.atomic import scratch_dir
from audiopub.book.lexicon import Entry, Lexicon
from audiopub.book.models import Book, Cover
from audiopub.book.spoken import spoken_form
from audiopub.errors import AudiopubError, ModelMissing
from audiopub.export.audiobookshelf import export_audiobookshelf_zip
from audiopub.export.files import SUBTITLE_FORMATS, export_book_mp3, export_chapters_zip
from audiopub.export.read_aloud import export_read_aloud
from audiopub.export.subtitles import Cue, book_cues
from audiopub.export.timeline import book_timeline
from audiopub.gpu.monitor import DEFAULT_INTERVAL_S, GpuMonitor
from audiopub.jobs.events import EventBus
from audiopub.jobs.models import Job, JobSettings, JobState
from audiopub.jobs.store import JobStore, default_store_path
from audiopub.jobs.submission import submit_job
from audiopub.jobs.worker import Worker
from audiopub.tts import onnx_runtime, registry
from audiopub.tts.engine import SynthesisOptions, Voice, voice_of
from audiopub.ui.activity import JobActivity
from audiopub.ui.book_reading import BookReader, remove_stale_thumbnails
from audiopub.ui.chosen_forms import remove_made
from audiopub.ui.preferences import Preferences
from audiopub.ui.uploads import max_upload_bytes, remove_stale_uploads
from audiopub.ui.voice_downloads import VoiceDownloads
from audiopub.ui.voice_mixes import FILE_NAME as MIXES_FILE
from audiopub.ui.voice_mixes import KOKORO, VoiceMixes, with_saved_mixes

log = logging.getLogger(__name__)

ENGINE_LABELS: Final = {engine.name: engine.label for engine in registry.ENGINES}
PREVIEW_TEXT: Final = "Hello! This is how I will sound when I read your book."
SAY_PAUSE_S: Final = 0.5  # between the pieces `say` speaks (a word, then its sentence)
# Exports a library book offers in the page, kept beside its .m4b: kind → name suffix.
# What the library offers besides the .m4b, and the name each gets beside it.
LIBRARY_EXPORTS: Final = {"epub": " (read-aloud).epub", "mp3": " chapters.zip",
                          "m4a": " chapters (M4A).zip", "opus": " chapters (Opus).zip",
                          "mp3-book": ".mp3", "audiobookshelf": " (Audiobookshelf).zip"}
COVER_SUFFIXES: Final = {"image/jpeg": ".jpg", "image/png": ".png", "image/gif": ".gif",
                         "image/webp": ".webp", "image/svg+xml": ".svg"}


@dataclass(frozen=True)
class GpuSupport:
    """Whether the GPU switch can be offered; if not, why (shown next to the switch)."""

    usable: bool
    reason: str | None = None

    @classmethod
    def detect(cls) -> GpuSupport:
        if onnx_runtime.cuda_can_run():
            return cls(True)
        return cls(False, onnx_runtime.explain_cpu_fallback(onnx_runtime.available_providers()))


@dataclass(frozen=True)
class EngineChoice:
    """An engine as the settings panel offers it; `reason` says why it can't be used."""

    name: str
    label: str
    voices: tuple[Voice, ...] = ()
    uses_steps: bool = False
    reason: str | None = None
    missing: bool = False  # its model files are not installed: the Voices page gets them

    @property
    def available(self) -> bool:
        return self.reason is None


# Engines are looked up at every page view: log why one is unavailable once, not every time.
_logged_unavailable: set[tuple[str, str]] = set()


def load_engine_choice(name: str) -> EngineChoice:
    """Load the engine (on the CPU, cached by the registry) to learn its voices."""
    label = ENGINE_LABELS.get(name, name.title())
    try:
        engine = registry.get_engine(name)
        voices = tuple(engine.voices())
    # Shown next to the engine list: a broken engine must not hide the working ones.
    except Exception as exc:  # noqa: BLE001
        reason = str(exc) or type(exc).__name__
        missing = isinstance(exc, ModelMissing)
        if (name, reason) not in _logged_unavailable:
            _logged_unavailable.add((name, reason))
            # An engine whose files nobody installed is the normal state of a first start.
            log.log(logging.INFO if missing else logging.WARNING,
                    "engine %s is unavailable: %s", name, reason)
        return EngineChoice(name, label, reason=reason, missing=missing)
    if not voices:
        return EngineChoice(name, label, reason="no voices are installed")
    return EngineChoice(name, label, voices, engine.uses_steps)


class Services:
    def __init__(self, data_dir: Path, *, nvml: Any = None, gpu_support: GpuSupport | None = None,
                 gpu_interval_s: float = DEFAULT_INTERVAL_S,
                 upload_limit_bytes: int | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.store = JobStore(self.data_dir / default_store_path().name)
        self.bus = EventBus()
        self.activity = JobActivity(self.bus)
        self.worker = Worker(self.store, self.bus)
        self.gpu = GpuMonitor(nvml, interval_s=gpu_interval_s)
        self.downloads = VoiceDownloads()
        self.reader = BookReader(self.data_dir)
        self.preferences = Preferences(self.data_dir / "ui-settings.json")
        self.mixes = VoiceMixes(self.data_dir / MIXES_FILE)
        # This process's: a killed server's uploads go at the next start (`atomic.scratch_dir`).
        self.uploads_dir = scratch_dir(self.data_dir) / "uploads"
        self.library_dir = self.store.library_dir
        self.upload_limit_bytes = upload_limit_bytes or max_upload_bytes()
        self._gpu_support = gpu_support
        self._worker_started = False
        self._stopped = False
        # start() runs off the event loop and can still be starting when shutdown calls stop():
        # one lock orders them, so a worker is never started on a closed store.
        self._lifecycle = threading.Lock()
        self.gpu_started = False  # True once the monitor has tried NVML (found a GPU or not)
        self.previews_warm = threading.Event()  # set once the preview voice is loaded (or not)
        self._warmup: threading.Thread | None = None

    @classmethod
    def from_environment(cls) -> Services:
        return cls(defaults.data_dir())

    # --- lifecycle (blocking) -------------------------------------------------------------

    def start(self) -> None:
        """Start the worker and the GPU monitor (NVML initialisation can take a second)."""
        with self._lifecycle:
            if self._worker_started or self._stopped:
                return
            # Where uploads were kept before they went in the scratch folder.
            removed = remove_stale_uploads(self.data_dir / "uploads")
            removed += remove_stale_thumbnails(self.data_dir)
            if removed:
                log.info("removed %d old upload(s) and cover thumbnail(s)", removed)
            self.gpu.start()
            self.gpu_started = True
            self.worker.start()
            self._worker_started = True
            # No daemon, joined by `stop`: one inside ORT at exit aborts the process (exit 134).
            self._warmup = threading.Thread(target=self._warm_preview_engine,
                                            name="audiopub-preview-warmup")
            self._warmup.start()

    def stop(self) -> None:
        """Stop after the current chunk; a running job goes back to the queue for next time."""
        with self._lifecycle:
            self._stopped = True
            self.downloads.stop()  # what it fetched stays staged; nothing half-installed
            self.reader.close()
            if self._worker_started:
                self.worker.stop()
                self._worker_started = False
            self.gpu.stop()
            if self._warmup is not None:
                self._warmup.join()  # one word, spoken; a second or two after a start
            self.activity.close()
            self.store.close()

    # --- what can run here (blocking) ---------------------------------------------------------

    def _warm_preview_engine(self) -> None:
        """Load the remembered voice into the previews' engine and say a word with it (the
        model's session and the phonemiser start on first use): the first Preview or Hear it
        then starts in about a second, not after the voice loads."""
        saved = self.preferences.get()
        try:
            tts = registry.get_preview_engine(saved.engine)
            voices = [v.id for v in tts.voices()]
            voice = saved.voice if saved.voice in voices else voices[0]
            tts.synthesize(["Hello."], voice, SynthesisOptions())
        except Exception as exc:  # noqa: BLE001 — the first preview will load it, and say why not
            log.info("the preview voice was not loaded ahead: %s", exc)
        finally:
            self.previews_warm.set()

    def gpu_support(self) -> GpuSupport:
        if self._gpu_support is None:
            self._gpu_support = GpuSupport.detect()
        return self._gpu_support

    def engine_catalog(self) -> tuple[EngineChoice, ...]:
        """The engines and their voices as they are now: voices dropped into the models folder
        show up without a restart. Cheap once the registry has loaded the engines; an engine
        that failed to load is tried again (its model files may have been added since)."""
        choices = [load_engine_choice(n) for n in registry.ENGINE_NAMES]
        return tuple(replace(c, voices=with_saved_mixes(c.voices, self.mixes))
                     if c.name == KOKORO and c.available else c for c in choices)

    def preview(self, engine: str, voice: str, speed: float, steps: int) -> bytes:
        """One sentence in `voice`, as WAV bytes."""
        return self.say([PREVIEW_TEXT], engine, voice, speed, steps)

    def say(self, texts: Sequence[str], engine: str, voice: str, speed: float, steps: int,
            lexicon_entries: Sequence[Entry] = (), language: str | None = None) -> bytes:
        """`texts` one after the other, a short pause between, in `voice`, as WAV bytes.

        Said as a job would say them: what the lexicon's entries claim as they say it, the rest
        with numbers and abbreviations as words by the rules of `language` (default: the
        voice's). An entry the voice cannot say is a LexiconError, nothing is spoken then.
        Spoken by the previews' own engine, on the CPU, whatever device jobs use: a preview
        never waits for a running job's engine nor takes from it (the voice sounds the same).
        """
        tts = registry.get_preview_engine(engine)
        lexicon = Lexicon(lexicon_entries, tts.phoneme_symbols(voice))
        rules = language or voice_of(tts, voice).language

        def plain(text: str) -> str:
            return spoken_form(text, rules)

        spoken = [lexicon.speak(text, plain) for text in texts if text.strip()]
        if not spoken:
            raise AudiopubError("There is nothing to say")
        results = tts.synthesize(spoken, voice, SynthesisOptions(speed=speed, steps=steps,
                                                                 language=language))
        rate = results[0].sample_rate
        pause = np.zeros(int(SAY_PAUSE_S * rate), dtype=np.float32)
        audio = np.concatenate([part for result in results for part in (pause, result.audio)][1:])
        buffer = io.BytesIO()
        sf.write(buffer, audio, rate, format="WAV", subtype="PCM_16")
        return buffer.getvalue()

    def check_lexicon(self, entries: Sequence[Entry], engine: str, voice: str) -> Lexicon:
        """`entries` checked as a job would check them: a LexiconError names one the voice
        cannot say (an IPA symbol it lacks, IPA for a voice that takes none)."""
        tts = registry.get_preview_engine(engine)
        return Lexicon(entries, tts.phoneme_symbols(voice))

    # --- jobs (blocking) ------------------------------------------------------------------

    def submit(self, epub: Path, book: Book, settings: JobSettings) -> Job:
        """Queue a job for an uploaded book and wake the worker."""
        engine = registry.get_engine(settings.engine, use_gpu=settings.use_gpu)
        self.library_dir.mkdir(parents=True, exist_ok=True)
        output = self.library_dir / f"{uuid.uuid4().hex}.m4b"
        job = submit_job(self.store, epub, book, output, settings, engine)
        if book.cover is not None:
            _save_cover(book.cover, output)
        self.worker.wake()
        return job

    def submitted_text(self, job: Job) -> str:
        """What is true of a job just submitted: it starts now, or waits for the jobs before it
        (the worker runs one at a time, oldest first)."""
        jobs = self.store.list_jobs((JobState.RUNNING, JobState.QUEUED))
        ids = [other.id for other in jobs]
        queued_before = ids[:ids.index(job.id)] if job.id in ids else ids
        ahead = sum(1 for other in jobs if other.id != job.id
                    and (other.state is JobState.RUNNING or other.id in queued_before))
        if not ahead:  # the worker was woken for it, and may have taken it already
            return f"Starting “{job.title}”…"
        return (f"“{job.title}” is in the queue: it starts after "
                f"{'the job' if ahead == 1 else f'the {ahead} jobs'} before it")

    def pause(self, job_id: str) -> Job:
        return self.store.set_state(job_id, JobState.PAUSED)

    def cancel(self, job_id: str) -> Job:
        return self.store.set_state(job_id, JobState.CANCELLED)

    def resume(self, job_id: str) -> Job:
        job = self.store.set_state(job_id, JobState.QUEUED)
        self.worker.wake()
        return job

    def delete(self, job_id: str) -> str:
        """Forget a stopped job. Its book is deleted only if Audiopub's library holds it."""
        job = self.store.get_job(job_id)
        in_library = self._in_library(job.output_path)
        if in_library:  # their list is in the job's folder, which goes with the job
            remove_made(self.store, job)
        self.store.delete_job(job_id)
        self.activity.forget(job_id)
        if in_library:
            job.output_path.unlink(missing_ok=True)
            for cover in self._covers(job.output_path):
                cover.unlink(missing_ok=True)
            for kind in LIBRARY_EXPORTS:
                self.export_path(job, kind).unlink(missing_ok=True)
            return f"Deleted “{job.title}”"
        return f"Removed “{job.title}” from the list; {job.output_path} was kept"

    def finished_book(self, job_id: str) -> Job:
        """The job of a finished book whose file exists (for the download routes)."""
        job = self.store.get_job(job_id)
        if job.state is not JobState.DONE or not job.output_path.is_file():
            raise FileNotFoundError(f"Job {job_id} has no finished book")
        return job

    def book_cues(self, job_id: str) -> list[Cue]:
        """The finished book's sentences and when each is heard (for reading along); empty
        for a book finished before Audiopub kept timings."""
        try:
            return book_cues(book_timeline(self.store, job_id))
        except AudiopubError:
            return []

    def subtitles(self, job_id: str, fmt: str) -> str:
        """The finished book's subtitles as SRT or WebVTT text (AudiopubError if it has no
        timings)."""
        return SUBTITLE_FORMATS[fmt](book_cues(book_timeline(self.store, job_id)))

    def export_path(self, job: Job, kind: str) -> Path:
        """Where a library book's export of `kind` (see LIBRARY_EXPORTS) lives: beside its
        .m4b."""
        return job.output_path.with_name(job.output_path.stem + LIBRARY_EXPORTS[kind])

    def export_file(self, job_id: str, kind: str) -> Path:
        """The finished book's read-aloud EPUB ("epub"), one MP3 with chapters ("mp3-book"),
        a file per chapter in a zip ("mp3", "m4a", "opus") or its Audiobookshelf folder in a
        zip ("audiobookshelf"), made the first time it is asked for; AudiopubError if it can't
        be made."""
        job = self.finished_book(job_id)
        path = self.export_path(job, kind)
        if not path.is_file():
            if kind == "epub":
                export_read_aloud(self.store, job.id, path)
            elif kind == "audiobookshelf":
                export_audiobookshelf_zip(self.store, job.id, path)
            elif kind == "mp3-book":
                export_book_mp3(self.store, job.id, path.parent, job.output_path.stem)
            else:
                export_chapters_zip(self.store, job.id, kind, path)
        return path

    def cover_of(self, job: Job) -> Path | None:
        if not self._in_library(job.output_path):
            return None
        return next(iter(self._covers(job.output_path)), None)

    def _in_library(self, path: Path) -> bool:
        return path.resolve().parent == self.library_dir.resolve()

    @staticmethod
    def _covers(output: Path) -> list[Path]:
        return [output.with_name(f"{output.stem}-cover{s}") for s in COVER_SUFFIXES.values()
                if output.with_name(f"{output.stem}-cover{s}").is_file()]


def _save_cover(cover: Cover, output: Path) -> None:
    suffix = COVER_SUFFIXES.get(cover.media_type)
    if suffix is None:
        return  # an image type browsers may not show; the .m4b still carries it
    output.with_name(f"{output.stem}-cover{suffix}").write_bytes(cover.data)


_current: Services | None = None


def current() -> Services:
    if _current is None:
        raise RuntimeError("The UI services are not set up: call audiopub.ui.app.setup() first")
    return _current


def current_or_none() -> Services | None:
    return _current


def set_current(services: Services | None) -> None:
    global _current
    _current = services
