"""The listening stage's thread and queue, with a stand-in for the listener's `hear` (what the
real model hears is tested with real weights in test_proof_listening.py): chunks are heard in
batches while the run goes on, a chapter waits for its own, a resumed run hears only what was
not heard, and listening that breaks never fails the book."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from epub_factory import build_epub

from audiopub.book.epub.reader import read_epub
from audiopub.book.models import Book, Chapter, Chunk
from audiopub.cli import main
from audiopub.errors import JobPaused, ListeningUnavailable
from audiopub.gpu.monitor import GpuInfo, GpuStatus
from audiopub.jobs import submission
from audiopub.jobs.chunk_cache import chunk_path, chunk_relpath, write_chunk
from audiopub.jobs.listening import NOT_HANDED_IN
from audiopub.jobs.models import ChunkRow, JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import listening_decision, submit_job
from audiopub.jobs.worker import execute_job
from audiopub.listen import Clip
from audiopub.listen.proof_listening import ProofListening
from audiopub.listen.stage import WhisperListening
from audiopub.tts.registry import get_engine

RATE = 16_000


class StandInEars:
    """Hears what `says` maps each clip's length to; can be held, or made to break."""

    size = "stand-in"

    def __init__(self, says: dict[int, str], broken: bool = False) -> None:
        self.says = says
        self.broken = broken
        self.batches: list[int] = []
        self.release = threading.Event()
        self.release.set()
        self.entered = threading.Event()  # it has a batch in hand

    def hear(self, clips: Sequence[Clip]) -> list[str]:
        self.entered.set()
        self.release.wait(30)
        if self.broken:
            raise RuntimeError("model file damaged")
        self.batches.append(len(clips))
        return [self.says.get(len(clip.audio), "") for clip in clips]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[JobStore]:
    with JobStore(tmp_path / "data" / "jobs.sqlite3") as opened:
        yield opened


def plan(store: JobStore, tmp_path: Path) -> tuple[str, list[ChunkRow], dict[int, str]]:
    """A job of two chapters, three chunks each, every chunk done with audio of its own
    length (so the stand-in knows which it hears); returns the job, its chunks, and what a
    listener hears in each (the last chunk of chapter 1: nothing)."""
    epub = tmp_path / "b.epub"
    epub.write_bytes(b"PK")
    book = Book("T", ("A",), "en", (Chapter(0, "One", ("x",)), Chapter(1, "Two", ("x",))))
    job = store.queue.create_job(
        epub, tmp_path / "b.m4b", JobSettings(voice="v", proof_listen=True), book=book
    )
    texts = [
        ["The first line is here.", "A second line follows it.", "Then a third."],
        ["Chapter two opens.", "It goes on a while.", "And it ends."],
    ]
    store.ledger.write_plan(
        job.id,
        [
            (f"C{c}", [Chunk(c, i, text, False) for i, text in enumerate(t)])
            for c, t in enumerate(texts)
        ],
    )
    says = {}
    for n, chunk in enumerate(store.ledger.all_chunks(job.id)):
        frames = RATE + 100 * n
        write_chunk(
            chunk_path(store.job_dir(job.id), chunk.cache_key), np.zeros(frames, np.float32), RATE
        )
        store.ledger.mark_chunk_done(
            job.id,
            chunk.cache_key,
            audio_path=chunk_relpath(chunk.cache_key),
            frames=frames,
            sample_rate=RATE,
            synth_s=0.1,
            provider="CPU",
        )
        says[frames] = "" if n == 2 else chunk.spoken
    return job.id, store.ledger.all_chunks(job.id), says


def stage(
    store: JobStore, job_id: str, ears: StandInEars, log: list[str] | None = None
) -> ProofListening:
    listening = ProofListening(
        store,
        job_id,
        store.job_dir(job_id),
        "en",
        ears,
        notify=(log if log is not None else []).append,
    )
    listening.start()
    return listening


def test_chunks_are_heard_in_batches_and_a_chapter_waits_for_its_own(
    store: JobStore, tmp_path: Path
) -> None:
    job_id, chunks, says = plan(store, tmp_path)
    ears = StandInEars(says)
    ears.release.clear()  # the first batch is held until all six are queued
    listening = stage(store, job_id, ears)
    try:
        for chunk in chunks:
            listening.chunk_done(chunk, store.job_dir(job_id) / chunk.audio_path)
        ears.release.set()
        listening.finish_chapter(0, lambda: None)
        heard = store.hearings.by_key(job_id)
        assert {chunks[i].cache_key for i in range(3)} <= set(heard)
        listening.finish_chapter(1, lambda: None)
    finally:
        listening.close()
    assert sum(ears.batches) == 6 and len(ears.batches) < 6  # some heard together
    heard = store.hearings.by_key(job_id)
    assert [heard[c.cache_key].flagged for c in chunks] == [False, False, True, False, False, False]
    assert heard[chunks[2].cache_key].reason  # says why, in words
    assert store.hearings.unheard_chunks(job_id, 0) == []
    assert store.hearings.unheard_chunks(job_id, 1) == []


def test_a_resumed_run_hears_only_what_was_not_heard(
    store: JobStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job_id, chunks, says = plan(store, tmp_path)
    ears = StandInEars(says)
    ears.release.clear()  # chunk 0 is being heard while the chapter's unheard ones are read
    listening = stage(store, job_id, ears)
    unheard = store.hearings.unheard_chunks

    def read_then_let_the_hearing_finish(job: str, chapter: int) -> list[ChunkRow]:
        found = unheard(job, chapter)  # chunk 0 among them: not recorded yet
        ears.release.set()
        deadline = time.monotonic() + 1.0  # time enough for its hearing to be recorded
        while listening._keys_in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        return found

    listening.chunk_done(chunks[0], store.job_dir(job_id) / chunks[0].audio_path)
    assert ears.entered.wait(10)
    monkeypatch.setattr(store.hearings, "unheard_chunks", read_then_let_the_hearing_finish)
    listening.finish_chapter(0, lambda: None)  # the other two: made by an "earlier run"
    monkeypatch.undo()
    listening.close()
    assert sum(ears.batches) == 3  # chunk 0 once, though it was unheard when the chapter was read
    before = store.hearings.by_key(job_id)

    again = StandInEars(says)
    listening = stage(store, job_id, again)
    listening.finish_chapter(0, lambda: None)
    listening.finish_chapter(1, lambda: None)
    listening.close()
    assert sum(again.batches) == 3  # chapter 2 only
    after = store.hearings.by_key(job_id)
    assert all(after[key] == hearing for key, hearing in before.items())


def test_a_pause_stops_the_wait_and_unheard_chunks_wait_for_the_next_run(
    store: JobStore, tmp_path: Path
) -> None:
    job_id, chunks, says = plan(store, tmp_path)
    ears = StandInEars(says)
    ears.release.clear()  # the listener is busy with its first batch

    def paused() -> None:
        raise JobPaused("The job was paused")

    listening = stage(store, job_id, ears)
    for chunk in chunks:
        listening.chunk_done(chunk, store.job_dir(job_id) / chunk.audio_path)
        assert ears.entered.wait(30)  # the first chunk is in hand before the next comes
    with pytest.raises(JobPaused):
        listening.finish_chapter(1, paused)
    listening.close(timeout=0.1)  # the run stops; the batch in hand is heard, no more
    ears.release.set()
    listening.close()
    assert ears.batches == [1]
    assert list(store.hearings.by_key(job_id)) == [chunks[0].cache_key]
    unheard = store.hearings.unheard_chunks(job_id, 0) + store.hearings.unheard_chunks(job_id, 1)
    assert unheard == chunks[1:]  # for the next run


def test_listening_that_breaks_says_so_and_stops_without_failing_the_run(
    store: JobStore, tmp_path: Path
) -> None:
    job_id, chunks, says = plan(store, tmp_path)
    log: list[str] = []
    listening = stage(store, job_id, StandInEars(says, broken=True), log)
    for chunk in chunks[:3]:
        listening.chunk_done(chunk, store.job_dir(job_id) / chunk.audio_path)
    listening.finish_chapter(0, lambda: None)  # returns: nothing more will be heard
    listening.finish_chapter(1, lambda: None)
    listening.close()
    assert not listening.working
    assert log == [
        "Proof-listening stopped (RuntimeError('model file damaged')); the rest "
        "of the book is made without it"
    ]
    assert store.hearings.by_key(job_id) == {}


# --- when a job listens, and a job whose listening breaks --------------------------------------


def test_the_decision_is_made_at_submission_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "no-models"))
    whisper = WhisperListening()
    # The CPU: off unless asked for; asked for without a model: what to install, at once.
    assert listening_decision(JobSettings(), listening=whisper) is False
    with pytest.raises(ListeningUnavailable, match="audiopub voices download whisper:base"):
        listening_decision(JobSettings(proof_listen=True), listening=whisper)
    # A resumed job keeps its decision unless the person says otherwise.
    assert listening_decision(JobSettings(), JobSettings(proof_listen=True), whisper) is True
    assert (
        listening_decision(JobSettings(proof_listen=False), JobSettings(proof_listen=True), whisper)
        is False
    )
    # A GPU job: on where a GPU is there and a listening model is installed.
    one_gpu = GpuStatus(True, gpus=(GpuInfo(0, "Test GPU", "550.54", "12.4", "8.6", 8192.0),))
    monkeypatch.setattr(submission, "query_gpu_info", lambda: one_gpu)
    assert listening_decision(JobSettings(use_gpu=True), listening=whisper) is False  # no model
    (tmp_path / "no-models" / "whisper-base").mkdir(parents=True)
    for name in ("model.bin", "config.json", "tokenizer.json", "vocabulary.txt"):
        (tmp_path / "no-models" / "whisper-base" / name).write_text("{}")
    assert listening_decision(JobSettings(use_gpu=True), listening=whisper) is True
    assert listening_decision(JobSettings(use_gpu=False), listening=whisper) is False
    # Nothing handed in: a job that did not say does not listen.
    assert listening_decision(JobSettings(use_gpu=True)) is False
    monkeypatch.setattr(submission, "query_gpu_info", lambda: GpuStatus(False, "no driver"))
    assert listening_decision(JobSettings(use_gpu=True), listening=whisper) is False


def test_a_job_stored_before_proof_listening_never_listened_and_resumes_so() -> None:
    stored = {k: v for k, v in JobSettings(voice="v").to_dict().items() if k != "proof_listen"}
    settings = JobSettings.from_dict(stored)
    assert settings.proof_listen is False
    # Resumed without saying: the same settings, so no "settings changed" and no new plan.
    assert listening_decision(JobSettings(voice="v"), settings) is False


def test_convert_asked_to_listen_without_a_model_says_so_before_any_speech(
    tmp_path: Path,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "no-models"))
    epub = build_epub(tmp_path / "b.epub", [("One", ["A line to say."])])
    assert main(["convert", "--proof-listen", str(epub), "-o", str(tmp_path / "b.m4b")]) == 1
    error = capsys.readouterr().err
    assert error.startswith("audiopub: error: Proof-listening needs a listening model")
    assert "Traceback" not in error
    with JobStore.open_default() as store:
        assert store.queue.list_jobs() == []  # no job, nothing spoken


def test_a_job_whose_listening_breaks_is_still_made(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = WhisperListening(lambda use_gpu: StandInEars({}, broken=True))
    engine = get_engine("piper")
    epub = build_epub(tmp_path / "b.epub", [("One", ["A line to say."]), ("Two", ["Another."])])
    log: list[str] = []
    with JobStore.open_default() as store:
        job = submit_job(
            store,
            epub,
            read_epub(epub),
            tmp_path / "b.m4b",
            JobSettings(proof_listen=False),
            engine,
        )
        store.queue.update_settings(
            job.id, JobSettings.from_dict({**job.settings.to_dict(), "proof_listen": True})
        )  # as decided on a GPU machine
        store.queue.set_state(job.id, JobState.RUNNING)
        state = execute_job(
            store, job.id, lambda event: log.append(event.message), engine, listening=broken
        )
        assert state is JobState.DONE, store.queue.get_job(job.id).error
        assert store.hearings.by_key(job.id) == {}
    assert any(
        line.startswith("Proof-listening stopped (RuntimeError('model file damaged'))")
        for line in log
    ), log


def test_a_job_that_asks_to_listen_with_nothing_to_hear_it_fails_saying_so(
    tmp_path: Path, data_dir: Path
) -> None:
    """A caller that hands in no listening: asking for it at submission is refused, and a job
    that listens is failed before anything is spoken, never made without listening."""
    engine = get_engine("piper")
    epub = build_epub(tmp_path / "b.epub", [("One", ["A line to say."])])
    with JobStore.open_default() as store:
        with pytest.raises(ListeningUnavailable, match="proof-listening off"):
            submit_job(
                store,
                epub,
                read_epub(epub),
                tmp_path / "b.m4b",
                JobSettings(proof_listen=True),
                engine,
            )
        job = submit_job(store, epub, read_epub(epub), tmp_path / "b.m4b", JobSettings(), engine)
        store.queue.update_settings(
            job.id, JobSettings.from_dict({**job.settings.to_dict(), "proof_listen": True})
        )  # as decided where the page or the command line submitted it
        store.queue.set_state(job.id, JobState.RUNNING)
        assert execute_job(store, job.id, engine=engine) is JobState.FAILED
        failed = store.queue.get_job(job.id)
        assert failed.error == NOT_HANDED_IN
        assert store.ledger.progress(job.id).chunks_done == 0
        assert not (tmp_path / "b.m4b").exists()
