"""A damaged job store, or one that can't be opened, through `audiopub jobs` and `audiopub
convert`: one message naming the file, what happened and what to do, never a traceback; the
damaged file is left as it was, and what can be read of it is saved beside it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from damaged_store import (
    STORE,
    TITLE,
    copy_data_dir,
    damage_header,
    damage_middle,
    made_data_dir,
    read_only,
)

from audiopub.cli import main
from audiopub.errors import JobStoreError
from audiopub.jobs.models import JobState
from audiopub.jobs.store import JobStore

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, shared_models_dir: Path) -> Path:
    return made_data_dir(tmp_path_factory.mktemp("finished"), shared_models_dir)


@pytest.fixture
def store(made: Path, data_dir: Path) -> Path:
    """This test's data dir: the finished book's store, not damaged yet."""
    return copy_data_dir(made, data_dir)


def recovered_path(store: Path) -> Path:
    return store.with_name("jobs.recovered.sqlite3")


def commands(tmp_path: Path, made: Path) -> dict[str, list[str]]:
    return {
        "jobs": ["jobs"],
        "convert": ["convert", str(made.parent / "book.epub"), "-o", str(tmp_path / "new.m4b")],
    }


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(argv)
    return status, capsys.readouterr().err


def one_message(err: str) -> str:
    assert err.startswith("audiopub: error: ") and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("command", ["jobs", "convert"])
def test_a_store_damaged_in_the_middle_is_named_and_what_it_held_is_saved(
    command: str, store: Path, made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage_middle(store)
    damaged = store.read_bytes()

    status, err = run(commands(tmp_path, made)[command], capsys)

    assert status == 1
    message = one_message(err)
    recovered = recovered_path(store)
    assert f"The job store {store} is damaged (database disk image is malformed)" in message
    assert f"What could still be read (1 job) was saved in {recovered}." in message
    assert f"move {STORE} (and its -wal and -shm files, if any) out of {store.parent}" in message
    assert "AUDIOPUB_DATA_DIR" in message
    assert f"(the web app's are in {store.parent / 'library'})" in message
    assert store.read_bytes() == damaged  # never written to, never deleted
    assert not (tmp_path / "new.m4b").exists()
    # The copy is a store Audiopub opens: the finished job's row survived the damage.
    with JobStore(recovered) as saved:
        (job,) = saved.queue.list_jobs()
    assert (job.title, job.state) == (TITLE, JobState.DONE)


def test_the_saved_copy_serves_the_next_command_as_it_is(
    store: Path, made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage_middle(store)
    run(["jobs"], capsys)
    recovered = recovered_path(store)
    made_at = recovered.stat().st_mtime_ns

    status, err = run(["jobs"], capsys)

    assert status == 1 and "(1 job) was saved" in one_message(err)
    assert recovered.stat().st_mtime_ns == made_at


@pytest.mark.parametrize("command", ["jobs", "convert"])
def test_a_store_with_a_damaged_header_is_named_and_left_alone(
    command: str, store: Path, made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damage_header(store)

    status, err = run(commands(tmp_path, made)[command], capsys)

    assert status == 1
    message = one_message(err)
    assert f"The job store {store} is damaged (" in message
    assert "Nothing could be read from it." in message
    assert f"out of {store.parent} to start with an empty job list" in message
    assert "AUDIOPUB_DATA_DIR" in message
    assert store.stat().st_size == 1000
    assert not recovered_path(store).exists()


@pytest.mark.parametrize("command", ["jobs", "convert"])
def test_a_data_folder_that_cant_be_written_is_named_with_what_to_do(
    command: str, store: Path, made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with read_only(store.parent):
        status, err = run(commands(tmp_path, made)[command], capsys)

    assert status == 1
    message = one_message(err)
    assert f"Audiopub can't open its job store {store} (unable to open database file)" in message
    assert f"the folder {store.parent} or the file can't be written by you" in message
    assert "set AUDIOPUB_DATA_DIR to a folder you can write to" in message


def test_a_data_folder_that_cant_be_made_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = tmp_path / "locked"
    parent.mkdir()
    monkeypatch.setenv("AUDIOPUB_DATA_DIR", str(parent / "data"))
    with read_only(parent):
        status, err = run(["jobs"], capsys)

    assert status == 1
    assert f"Audiopub can't open its job store {parent / 'data' / STORE} (" in one_message(err)


def test_a_store_damaged_while_open_refuses_all_work_after(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found damaged by one read, the store is read no more, nor written: every call says
    the same, and the file stays as it was."""
    with JobStore(store) as opened:
        (job,) = opened.queue.list_jobs()
        damage_middle(store)
        damaged = store.read_bytes()
        calls: list[Callable[[], object]] = [
            lambda: opened.ledger.progress(job.id),
            opened.queue.list_jobs,
            lambda: opened.queue.set_state(job.id, JobState.QUEUED),
        ]
        messages = []
        for call in calls:
            with pytest.raises(JobStoreError) as raised:
                call()
            messages.append(str(raised.value))
    assert len(set(messages)) == 1 and "is damaged" in messages[0]
    assert store.read_bytes() == damaged
