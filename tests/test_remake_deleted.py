"""A finished book whose audiobook was deleted, asked for again with the same settings (the
command line's `convert`, the page's Generate): its job makes it again from the audio its
folder kept, speaking only what is missing there, and says so. One book, converted once for
the module with the embedded Piper voice into the library folder; each test deletes its
audiobook (and whatever else) and leaves it made again."""

from __future__ import annotations

import queue
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from epub_factory import build_epub

from audiopub.audio.ffmpeg import probe
from audiopub.book.epub.reader import read_epub
from audiopub.cli import main
from audiopub.errors import InvalidTransition
from audiopub.jobs.chunk_cache import CHUNKS_DIR
from audiopub.jobs.events import EventBus, JobEvent
from audiopub.jobs.models import Job, JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.worker import Worker
from audiopub.ui.activity import JobActivity
from audiopub.ui.job_control import JobControl
from audiopub.ui.library import Library

CHAPTERS = ["Arrival", "The Harbour", "Departure"]


@dataclass(frozen=True)
class Made:
    """The module's book: its EPUB, the data folder its job is in, where the book goes."""

    epub: Path
    data: Path
    output: Path

    def job(self) -> Job:
        with JobStore.open_default() as store:
            (job,) = store.queue.list_jobs()
            return job

    def attempts(self) -> dict[str, int]:
        with JobStore.open_default() as store:
            return {c.cache_key: c.attempts for c in store.ledger.all_chunks(self.job().id)}


@pytest.fixture(scope="module")
def module_made(
    tmp_path_factory: pytest.TempPathFactory, shared_models_dir: Path
) -> Iterator[Made]:
    folder = tmp_path_factory.mktemp("made-once")
    epub = build_epub(
        folder / "coastline.epub",
        [
            (CHAPTERS[0], ["The train reached the coast at noon.", "Gulls circled the pier."]),
            (CHAPTERS[1], ["Boats rocked in the grey water."]),
            (CHAPTERS[2], ["She left before the tide turned."]),
        ],
        title="Coastline",
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIOPUB_DATA_DIR", str(folder / "data"))
        patch.setenv("AUDIOPUB_MODELS_DIR", str(shared_models_dir))
        patch.setenv("AUDIOPUB_CPU_WORKERS", "1")
        with JobStore.open_default() as store:
            output = store.library_dir / "coastline.m4b"
        assert main(["convert", str(epub), "-o", str(output), "--chapters", "1-3"]) == 0
        yield Made(epub, folder / "data", output)


@pytest.fixture
def made(module_made: Made, monkeypatch: pytest.MonkeyPatch, shared_models_dir: Path) -> Made:
    monkeypatch.setenv("AUDIOPUB_DATA_DIR", str(module_made.data))
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(shared_models_dir))
    assert module_made.output.is_file() and module_made.job().state is JobState.DONE
    return module_made


def _convert(made: Made) -> list[str]:
    return ["convert", str(made.epub), "-o", str(made.output), "--chapters", "1-3"]


def _check_book(made: Made) -> None:
    assert [c.title for c in probe(made.output).chapters] == CHAPTERS


def test_convert_again_after_deleting_the_audiobook_makes_it_from_the_saved_audio(
    made: Made, capsys: pytest.CaptureFixture[str]
) -> None:
    job, attempts = made.job(), made.attempts()
    made.output.unlink()
    capsys.readouterr()
    assert main(_convert(made)) == 0
    err = capsys.readouterr().err
    assert f"making it again from the saved audio (job {job.id[:8]})" in err
    taken = re.search(
        r"The audiobook was deleted; made again from the saved audio in ([\d.]+) s", err
    )
    assert taken, err
    again = made.job()  # the same job, nothing spoken again
    assert again.id == job.id and again.state is JobState.DONE and made.attempts() == attempts
    _check_book(made)


def test_what_is_missing_from_the_saved_audio_is_spoken_again(
    made: Made, capsys: pytest.CaptureFixture[str]
) -> None:
    job, attempts = made.job(), made.attempts()
    with JobStore.open_default() as store:
        lost = store.ledger.done_chunks(job.id)[1]
        assert lost.audio_path is not None
        (store.job_dir(job.id) / lost.audio_path).unlink()
    made.output.unlink()
    assert main(_convert(made)) == 0
    assert "made again from the saved audio" in capsys.readouterr().err
    assert made.job().id == job.id
    assert made.attempts() == {**attempts, lost.cache_key: attempts[lost.cache_key] + 1}
    _check_book(made)


def test_a_whole_lost_folder_of_chunks_is_spoken_again_by_the_same_job(made: Made) -> None:
    job, attempts = made.job(), made.attempts()
    with JobStore.open_default() as store:
        shutil.rmtree(store.job_dir(job.id) / CHUNKS_DIR)
    made.output.unlink()
    assert main(_convert(made)) == 0
    assert made.job().id == job.id
    assert made.attempts() == {key: count + 1 for key, count in attempts.items()}
    _check_book(made)


def test_a_finished_job_whose_audiobook_is_there_stays_done(made: Made) -> None:
    with JobStore.open_default() as store:
        with pytest.raises(InvalidTransition, match="its audiobook is there"):
            store.queue.remake(made.job().id)
        with pytest.raises(InvalidTransition):
            store.queue.set_state(made.job().id, JobState.QUEUED)
    assert made.job().state is JobState.DONE


def test_other_settings_after_deleting_the_audiobook_are_a_new_job(
    made: Made, tmp_path: Path
) -> None:
    job = made.job()
    made.output.unlink()
    other = tmp_path / "faster.m4b"
    assert main([*_convert(made)[:-4], "-o", str(other), "--speed", "1.2"]) == 0
    with JobStore.open_default() as store:
        jobs = store.queue.list_jobs()
        assert [j.id for j in jobs][0] == job.id and len(jobs) == 2
        store.queue.delete_job(jobs[1].id)  # the module's store keeps its one job
    assert main(_convert(made)) == 0  # made again from its audio, for the next test
    assert made.job().id == job.id


def test_generate_again_after_deleting_the_audiobook_makes_it_from_the_saved_audio(
    made: Made,
) -> None:
    """The page's Generate, with the book uploaded again and the settings it was made with."""
    job = made.job()
    made.output.unlink()
    with JobStore.open_default() as store:
        bus = EventBus()
        inbox = bus.subscribe()
        worker = Worker(store, bus)
        control = JobControl(store, worker, JobActivity(bus), Library(store))
        upload = made.data.parent / "upload.epub"
        shutil.copyfile(made.epub, upload)
        worker.start()
        try:
            again = control.submit(upload, read_epub(upload), job.settings)
            assert again.id == job.id
            said = control.submitted_text(again)
            done = _finished(inbox, job.id)
        finally:
            worker.stop()
    assert "its audiobook deleted: making it again from the saved audio" in said or (
        said.startswith("Starting")  # the worker had already made it
    )
    assert done.state is JobState.DONE, done.message
    assert re.search(r"the audiobook was deleted; made again from the saved audio in", done.message)
    _check_book(made)
    assert made.job().id == job.id


def test_generate_with_other_settings_is_a_new_job(made: Made) -> None:
    job = made.job()
    made.output.unlink()
    with JobStore.open_default() as store:
        worker = Worker(store, EventBus())  # not started: the job only waits in the queue
        control = JobControl(store, worker, JobActivity(EventBus()), Library(store))
        other = control.submit(
            made.epub, read_epub(made.epub), JobSettings(voice=job.settings.voice, speed=1.3)
        )
        assert other.id != job.id and other.state is JobState.QUEUED
        store.queue.delete_job(other.id)
    assert main(_convert(made)) == 0
    assert made.job().id == job.id


def _finished(inbox: queue.Queue[JobEvent], job_id: str) -> JobEvent:
    while (event := inbox.get(timeout=300)).job_id != job_id or event.state is JobState.RUNNING:
        pass
    return event
