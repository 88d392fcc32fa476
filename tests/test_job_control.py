"""Deleting a book from the web app's library (`JobControl.delete`): a running job loses
nothing, a stopped one takes its book, its cover and the forms made beside it along."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from epub_factory import build_epub

from audiopub.book.epub.reader import read_epub
from audiopub.errors import InvalidTransition
from audiopub.jobs.events import EventBus
from audiopub.jobs.models import Job, JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.worker import Worker
from audiopub.ui.activity import JobActivity
from audiopub.ui.chosen_forms import MADE_LIST
from audiopub.ui.job_control import JobControl
from audiopub.ui.library import Library


def _made_beside(store: JobStore, job: Job) -> list[Path]:
    """A book in the library with forms made beside it: an MP3 and a folder of chapters."""
    job.output_path.write_bytes(b"m4b")
    single = job.output_path.with_suffix(".mp3")
    single.write_bytes(b"mp3")
    chapters = job.output_path.with_name(f"{job.output_path.stem}-chapters")
    chapters.mkdir()
    (chapters / "01.mp3").write_bytes(b"mp3")
    made = [single, chapters]
    record = {"made": [str(p) for p in made], "downloads": []}
    (store.job_dir(job.id) / MADE_LIST).write_text(json.dumps(record), encoding="utf-8")
    return [job.output_path, *made]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[JobStore]:
    with JobStore(tmp_path / "data" / "jobs.sqlite") as opened:
        yield opened


def _control(store: JobStore) -> JobControl:
    bus = EventBus()
    return JobControl(store, Worker(store, bus), JobActivity(bus), Library(store))


def _job(store: JobStore, tmp_path: Path) -> Job:
    epub = build_epub(tmp_path / "book.epub", [("One", ["Text."])], title="Harbour")
    store.library_dir.mkdir(parents=True, exist_ok=True)
    output = store.library_dir / "harbour.m4b"
    return store.queue.create_job(epub, output, JobSettings(), book=read_epub(epub))


def test_a_running_job_is_refused_before_anything_of_it_is_deleted(
    store: JobStore, tmp_path: Path
) -> None:
    job = _job(store, tmp_path)
    files = _made_beside(store, job)
    assert store.queue.claim_next_job() is not None  # the worker has taken it
    with pytest.raises(InvalidTransition, match="Cancel or pause"):
        _control(store).delete(job.id)
    assert all(path.exists() for path in files)
    assert (store.job_dir(job.id) / MADE_LIST).is_file()
    assert store.queue.get_job(job.id).state is JobState.RUNNING


def test_a_stopped_job_takes_its_book_and_what_was_made_beside_it(
    store: JobStore, tmp_path: Path
) -> None:
    job = _job(store, tmp_path)
    files = _made_beside(store, job)
    said = _control(store).delete(job.id)
    assert said == "Deleted “Harbour”"
    assert not any(path.exists() for path in files)
    assert not store.job_dir(job.id).exists()
    assert store.queue.list_jobs() == []
