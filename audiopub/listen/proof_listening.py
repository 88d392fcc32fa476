"""Proof-listening during a job: every chunk made is heard while the next ones are spoken.

    speak (the run's thread)  ── a chunk is done ──▶  queue  ──▶  listening thread:
        read its audio file, hear a batch (`Ears.hear`), judge each against the chunk's
        spoken text (`judge`), keep the verdict in the store (`JobHearings.record_hearing`)
    before a chapter is stitched: wait until its chunks are heard, then speak again the
        flagged ones (`retakes.Retakes`), so the chapter is made of the kept takes

The pipeline drives it as its `jobs.listening.ListeningStage` (`stage.ListeningRun`, with the
retakes), handed in from above: jobs import nothing of `audiopub.listen`. A thread, not a
process: CTranslate2 runs outside the GIL, and the engine's own processes keep speaking
meanwhile. Verdicts are in the store, so a resumed job hears only what it has not. Listening
that breaks mid-job (a model file gone bad) stops listening for the rest of the run and says
so in the job's log; the book is still made.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import soundfile as sf

from audiopub.errors import AudiopubError, ListeningUnavailable
from audiopub.jobs.hearings import Hearing
from audiopub.jobs.models import ChunkRow
from audiopub.jobs.store import JobStore
from audiopub.listen import Clip, judge

log = logging.getLogger(__name__)

BATCH_CHUNKS = 8  # chunks heard in one batch at most: what is ready, never waited for
WAIT_SLICE_S = 0.5  # how often a wait for the listening thread checks for a pause or cancel


class Ears(Protocol):
    """What the stage needs of a listener: a model's size for the record, and what it hears
    in a batch of clips. `Listener` is one (`ready.load_listener`); the tests hear with
    stand-ins."""

    size: str

    def hear(self, clips: Sequence[Clip]) -> list[str]: ...


@dataclass
class _Chunk:
    """A finished chunk to hear: its audio file and the words it should say."""

    chunk: ChunkRow
    path: Path


@dataclass
class _Request:
    """Clips to hear now (a repair's take), answered through `answer`."""

    clips: list[Clip]
    answer: Future[list[str]]


class ProofListening:
    """The listening thread of one run of one job. `start`, then `chunk_done` for each chunk
    made, `finish_chapter` before stitching it, `close` at the end of the run."""

    def __init__(
        self,
        store: JobStore,
        job_id: str,
        job_dir: Path,
        language: str,
        ears: Ears,
        notify: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.store = store
        self.job_id = job_id
        self.job_dir = Path(job_dir)
        self.language = language
        self.ears = ears
        self._notify = notify
        self._queue: queue.Queue[_Chunk | _Request | None] = queue.Queue()
        self._changed = threading.Condition(threading.RLock())  # chunk_done runs under it too
        self._in_flight: Counter[int] = Counter()  # chapter index → its chunks not yet heard
        self._keys_in_flight: set[str] = set()  # queued or being heard: not to be queued again
        self._closing = False
        self.failure: str | None = None  # why listening stopped, if it broke
        self.heard_s = 0.0  # seconds spent hearing, this run
        self._thread = threading.Thread(
            target=self._loop, daemon=True, name=f"audiopub-listen-{job_id[:8]}"
        )

    @property
    def working(self) -> bool:
        return self.failure is None

    def start(self) -> None:
        self._thread.start()

    def close(self, timeout: float = 60.0) -> None:
        """Stop after the batch in hand; chunks not heard yet are heard by the next run."""
        with self._changed:
            self._closing = True
        self._queue.put(None)
        self._thread.join(timeout)

    # --- the run's side ------------------------------------------------------------------

    def chunk_done(self, chunk: ChunkRow, audio_path: Path) -> None:
        """Hear a chunk just made (its audio file is written and marked done)."""
        if not self.working:
            return
        with self._changed:
            if chunk.cache_key in self._keys_in_flight:
                return
            self._keys_in_flight.add(chunk.cache_key)
            self._in_flight[chunk.chapter_idx] += 1
        self._queue.put(_Chunk(chunk, audio_path))

    def finish_chapter(self, chapter_idx: int, check: Callable[[], None]) -> None:
        """Hear whatever of the chapter is not heard yet (chunks made by an earlier run or
        shared by another job) and wait until all of it is. `check` raises to stop waiting
        (a pause, a cancel)."""
        if not self.working:
            return
        # Read and queue under the lock: a chunk being heard now is either recorded already
        # (so not unheard) or still in flight (so not queued again), never settled in between.
        with self._changed:
            for chunk in self.store.hearings.unheard_chunks(self.job_id, chapter_idx):
                if chunk.audio_path:
                    self.chunk_done(chunk, self.job_dir / chunk.audio_path)
        while True:
            with self._changed:
                if self._in_flight[chapter_idx] <= 0 or not self.working:
                    return
                self._changed.wait(WAIT_SLICE_S)
            check()

    def hear_now(self, clips: list[Clip], check: Callable[[], None]) -> list[str]:
        """What is heard in `clips`, by the listening thread, ahead of nothing (call when the
        chapter's chunks are heard). Raises ListeningUnavailable if listening broke."""
        if not self.working:
            raise ListeningUnavailable(self.failure or "Proof-listening stopped")
        answer: Future[list[str]] = Future()
        self._queue.put(_Request(clips, answer))
        while True:
            try:
                return answer.result(WAIT_SLICE_S)
            except TimeoutError:
                check()

    # --- the listening thread --------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch = [item]
            while len(batch) < BATCH_CHUNKS:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._queue.put(None)  # seen after this batch
                    break
                batch.append(more)
            if self._closing or not self.working:
                self._drop(batch)
                continue
            try:
                self._hear(batch)
            except Exception as exc:  # noqa: BLE001 — listening must never fail the book
                self._stop_listening(exc, batch)

    def _hear(self, batch: list[_Chunk | _Request]) -> None:
        chunks = [item for item in batch if isinstance(item, _Chunk)]
        for request in (item for item in batch if isinstance(item, _Request)):
            began = time.perf_counter()
            request.answer.set_result(self.ears.hear(request.clips))
            self.heard_s += time.perf_counter() - began
        if not chunks:
            return
        began = time.perf_counter()
        readable = [(item, audio) for item in chunks if (audio := _read(item.path)) is not None]
        heard = self.ears.hear([Clip(audio, rate, self.language) for _, (audio, rate) in readable])
        self.heard_s += time.perf_counter() - began
        for (item, _), text in zip(readable, heard, strict=True):
            verdict = judge(item.chunk.spoken, text, self.language)
            self.store.hearings.record_hearing(
                self.job_id,
                Hearing(
                    item.chunk.cache_key,
                    text,
                    verdict.wer,
                    verdict.missing_run,
                    verdict.flagged,
                    verdict.reason,
                    first_flagged=verdict.flagged,
                    takes=1,
                    model=self.ears.size,
                ),
            )
        self._settle(chunks)

    def _settle(self, chunks: Sequence[_Chunk]) -> None:
        with self._changed:
            for item in chunks:
                self._in_flight[item.chunk.chapter_idx] -= 1
                self._keys_in_flight.discard(item.chunk.cache_key)
            self._changed.notify_all()

    def _drop(self, batch: list[_Chunk | _Request]) -> None:
        for item in batch:
            if isinstance(item, _Request):
                item.answer.set_exception(ListeningUnavailable("The job stopped"))
        self._settle([item for item in batch if isinstance(item, _Chunk)])

    def _stop_listening(self, error: Exception, batch: list[_Chunk | _Request]) -> None:
        reason = str(error) if isinstance(error, AudiopubError) else repr(error)
        log.warning(
            "job %s: proof-listening stopped: %s",
            self.job_id,
            reason,
            exc_info=not isinstance(error, AudiopubError),
        )
        self.failure = (
            f"Proof-listening stopped ({reason}); the rest of the book is made without it"
        )
        self._notify(self.failure)
        for item in batch:
            if isinstance(item, _Request) and not item.answer.done():
                item.answer.set_exception(ListeningUnavailable(self.failure))
        with self._changed:  # nobody waits for chunks that will not be heard
            self._in_flight.clear()
            self._keys_in_flight.clear()
            self._changed.notify_all()


def _read(path: Path) -> tuple[np.ndarray, int] | None:
    """A chunk's audio as float32 mono; None if it is gone (reset meanwhile: not heard)."""
    try:
        audio, rate = sf.read(str(path), dtype="float32", always_2d=False)
    except (OSError, sf.SoundFileError, RuntimeError):
        return None
    return (audio if audio.ndim == 1 else audio.mean(axis=1)), int(rate)
