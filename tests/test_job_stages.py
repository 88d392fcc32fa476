"""What a job says it is doing from its first second, and how its log says it finished."""

from __future__ import annotations

from pathlib import Path

import pytest
from epub_factory import build_epub

from audiopub.book.epub.reader import read_epub
from audiopub.jobs import pipeline
from audiopub.jobs.events import JobEvent
from audiopub.jobs.models import JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.worker import execute_job
from audiopub.tts.engine import Engine
from audiopub.tts.registry import get_engine


@pytest.fixture(scope="module")
def engine() -> Engine:
    return get_engine("piper")


@pytest.fixture
def store(data_dir: Path) -> JobStore:
    with JobStore.open_default() as opened:
        yield opened


def _book(path: Path) -> Path:
    return build_epub(
        path, [("Part One", ["The first sentence.", "The second one."])], title="A Stage Book"
    )


def _run(store: JobStore, engine: Engine, epub: Path, output: Path) -> list[JobEvent]:
    job = submit_job(store, epub, read_epub(epub), output, JobSettings(), engine)
    store.queue.set_state(job.id, JobState.RUNNING)
    events: list[JobEvent] = []
    assert execute_job(store, job.id, events.append, engine) is JobState.DONE
    return events


def test_a_running_job_names_each_stage_before_its_first_chunk(store, engine, tmp_path) -> None:
    events = _run(store, engine, _book(tmp_path / "b.epub"), tmp_path / "b.m4b")
    first_chunk = next(n for n, e in enumerate(events) if e.chunks_done)
    before = [e.stage for e in events[:first_chunk]]
    assert before == [
        pipeline.LOADING_VOICE,
        pipeline.READING_BOOK,
        pipeline.PREPARING_TEXT,
        pipeline.STARTING_ENGINE,
    ]
    # Once planned, the stage comes with the totals: a progress bar can start from zero.
    starting = events[first_chunk - 1]
    assert starting.chars_done == 0 and starting.chars_total > 0 and starting.chunks_total > 0
    later = {e.stage for e in events[first_chunk:] if e.state is JobState.RUNNING}
    assert later == {"Speaking “Part One”", pipeline.JOINING, pipeline.ENCODING}
    assert events[-1].state is JobState.DONE and events[-1].stage == ""


def test_the_log_says_the_title_and_where_the_book_is(store, engine, tmp_path) -> None:
    epub = _book(tmp_path / "b.epub")
    outside = _run(store, engine, epub, tmp_path / "b.m4b")
    assert outside[-1].message == f"Finished: A Stage Book — {tmp_path / 'b.m4b'}"
    library = store.library_dir / "0123456789abcdef.m4b"  # the web UI names its books by id
    assert (
        _run(store, engine, epub, library)[-1].message == "Finished: A Stage Book — in the Library"
    )
