"""`audiopub convert` run again on a book it left unfinished: whatever state the interruption
left the job in, the settings of the new command win (here: another chapter selection).

The book is interrupted once for the module; each test resumes its own copy of the job."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from conftest import SENTENCES
from epub_factory import build_epub, tiny_png

from audiopub.audio.ffmpeg import probe
from audiopub.cli import main
from audiopub.jobs import foreground
from audiopub.jobs.events import JobEvent
from audiopub.jobs.models import JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.worker import runner_lock

Q, R, P, F, C = (
    JobState.QUEUED,
    JobState.RUNNING,
    JobState.PAUSED,
    JobState.FAILED,
    JobState.CANCELLED,
)


def _interrupted_job(epub: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A job of chapter 2 with one chunk made, paused by a Ctrl-C; its id."""
    real_show = foreground.ProgressBar.show

    def show(bar: foreground.ProgressBar, event: JobEvent) -> None:
        real_show(bar, event)
        if event.chunks_done and event.state is JobState.RUNNING:
            raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(foreground.ProgressBar, "show", show)
        assert main(["convert", str(epub), "--chapters", "2", "-o", str(out)]) == 130
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        assert job.state is P and store.ledger.progress(job.id).chunks_done == 1
    return job.id


@pytest.fixture(scope="module")
def left_unfinished(
    tmp_path_factory: pytest.TempPathFactory, shared_models_dir: Path
) -> tuple[Path, Path, str]:
    """The book's chapter 2 interrupted after one chunk, once for the module: its data dir,
    its EPUB and its job."""
    folder = tmp_path_factory.mktemp("interrupted")
    data = folder / "audiopub-data"
    epub = build_epub(
        folder / "book.epub",
        [
            ("Arrival", SENTENCES[:3]),
            ("The Harbour; at dusk", SENTENCES[3:5]),
            ("Departure", SENTENCES[5:]),
        ],
        title="Coastline",
        author="Ann Author",
        cover=tiny_png(),
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIOPUB_DATA_DIR", str(data))
        # the models folder of `embedded_voice_loaded_once`: the tests find its voice loaded
        patch.setenv("AUDIOPUB_MODELS_DIR", str(shared_models_dir))
        patch.setenv("AUDIOPUB_CPU_WORKERS", "1")
        job_id = _interrupted_job(epub, folder / "b.m4b", patch)
    return data, epub, job_id


@pytest.fixture
def interrupted(
    left_unfinished: tuple[Path, Path, str],
    embedded_voice_loaded_once: None,
    data_dir: Path,
    tmp_path: Path,
) -> tuple[Path, Path, str]:
    """The interrupted job copied into this test's data dir, its book to be written to this
    test's folder: the EPUB, the output and the job's id."""
    data, epub, job_id = left_unfinished
    shutil.copytree(data, data_dir, dirs_exist_ok=True)
    out = tmp_path / "b.m4b"
    with closing(sqlite3.connect(data_dir / "jobs.sqlite3")) as conn, conn:
        conn.execute("UPDATE jobs SET output_path = ? WHERE id = ?", (str(out), job_id))
    return epub, out, job_id


def _move(job_id: str, *states: JobState) -> None:
    with JobStore.open_default() as store:
        for state in states:
            store.queue.set_state(job_id, state)


def _book_chapters(out: Path) -> list[str]:
    return [c.title for c in probe(out).chapters]


@pytest.mark.parametrize(
    "left_as",
    [
        pytest.param((R,), id="running, its process killed"),  # e.g. SIGINT, then SIGKILL
        pytest.param((), id="paused"),
        pytest.param((Q, R, F), id="failed"),
        pytest.param((C,), id="cancelled"),
        pytest.param((Q,), id="queued"),
    ],
)
def test_the_new_chapter_selection_wins_whatever_state_the_job_was_left_in(
    interrupted: tuple[Path, Path, str],
    capsys: pytest.CaptureFixture[str],
    left_as: tuple[JobState, ...],
) -> None:
    epub, out, job_id = interrupted
    if left_as and left_as[0] is R:
        left_as = (Q, R)  # paused → queued → running: as a run killed mid-chunk leaves it
    _move(job_id, *left_as)
    capsys.readouterr()

    assert main(["convert", str(epub), "--chapters", "3", "-o", str(out)]) == 0

    err = capsys.readouterr().err
    assert "Resuming job" in err and "settings changed" in err
    assert _book_chapters(out) == ["Departure"]
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        assert job.id == job_id and job.state is JobState.DONE
        assert job.settings.chapters == (3,) and job.error is None


@pytest.mark.parametrize(
    "state",
    [
        pytest.param(R, id="running there"),
        pytest.param(P, id="paused, its runner not yet at its next chunk"),
    ],
)
def test_a_job_another_process_makes_is_taken_over_with_the_new_settings(
    interrupted: tuple[Path, Path, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    state: JobState,
) -> None:
    """Another CLI conversion holds the runner lock and makes the job: the new command gives
    the job back to the queue with its settings, that runner lets it go after its chunk and
    stops, and the new command makes it."""
    epub, out, job_id = interrupted
    _move(job_id, *((Q, R) if state is R else ()))
    seen: list[tuple[JobState, tuple[int, ...] | None]] = []

    with JobStore.open_default() as store:
        other_runner = runner_lock(store)
        other_runner.acquire()

        def other_runner_lets_go(seconds: float) -> None:
            job = store.queue.get_job(job_id)
            seen.append((job.state, job.settings.chapters))
            if len(seen) > 3:
                raise AssertionError("the command is still waiting on a runner that stopped")
            if other_runner.is_locked:
                other_runner.release()  # it saw the job queued and let it go

        try:
            monkeypatch.setattr(foreground.time, "sleep", other_runner_lets_go)
            status = main(["convert", str(epub), "--chapters", "3", "-o", str(out)])
        finally:
            if other_runner.is_locked:
                other_runner.release()

    assert seen[0] == (Q, (3,)), seen  # what the other runner saw after its chunk
    assert status == 0, capsys.readouterr().err
    assert "following this job there" in capsys.readouterr().err
    assert _book_chapters(out) == ["Departure"]


def test_the_same_command_again_follows_a_job_another_process_makes_without_stopping_it(
    interrupted: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    epub, out, job_id = interrupted
    _move(job_id, Q, R)
    seen: list[JobState] = []

    with JobStore.open_default() as store:
        other_runner = runner_lock(store)
        other_runner.acquire()

        def ctrl_c(seconds: float) -> None:
            seen.append(store.queue.get_job(job_id).state)
            raise KeyboardInterrupt

        try:
            monkeypatch.setattr(foreground.time, "sleep", ctrl_c)
            assert main(["convert", str(epub), "--chapters", "2", "-o", str(out)]) == 130
        finally:
            other_runner.release()
    assert seen == [R]  # still the other runner's, undisturbed
