"""A disk that fills during a job pauses it with what to free; once freed, the same command
finishes the book. On a real small filesystem (a tmpfs, where mounting is allowed) and with
the kernel's own ENOSPC (/dev/full) or SQLite's own "database or disk is full"."""

from __future__ import annotations

import errno
import os
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from epub_factory import build_epub

from audiopub import cli
from audiopub.atomic import TEMP_MARK
from audiopub.audio import mux
from audiopub.audio.ffmpeg import probe, run_ffmpeg
from audiopub.book.epub.reader import read_epub
from audiopub.errors import DiskFull, MuxFailed
from audiopub.jobs import db
from audiopub.jobs.models import JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.worker import execute_job
from audiopub.tts.engine import Engine
from audiopub.tts.registry import get_engine

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")

PAUSE_MESSAGE = r"The disk is full \(.*\): free [\d,]+ MB and run the same command again"


@pytest.fixture(scope="module")
def engine(shared_models_dir: Path) -> Engine:
    """The engine the module's conversions find in the registry (`embedded_voice_loaded_once`)."""
    return get_engine("piper", model_dir=shared_models_dir / "piper")


def _book(path: Path, chapters: int = 2, paragraphs: int = 2) -> Path:
    """Every paragraph is its own chunk: two chapters of a heading and two sentences run past a
    full disk's pause and on (and last over 5 s); every chunk more is one more to speak."""
    return build_epub(
        path,
        [
            (
                f"Part {c + 1}",
                [
                    f"This is sentence {p + 1} of part {c + 1}, read aloud."
                    for p in range(paragraphs)
                ],
            )
            for c in range(chapters)
        ],
    )


def _mount_tmpfs(folder: Path, size: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if os.name != "posix" or os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small filesystem needs root")
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {result.stderr.strip()}")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 24 MB filesystem of its own."""
    folder = tmp_path / "small-disk"
    _mount_tmpfs(folder, "24m")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path, leave: int = 0) -> Path:
    """Take every byte free on `folder`'s filesystem but `leave`; returns the filler."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        block = b"\0" * 65536
        while (room := shutil.disk_usage(folder).free - leave) > 0:
            try:
                os.write(fd, block[: min(room, len(block))])
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
    finally:
        os.close(fd)
    return filler


def test_a_disk_that_fills_mid_job_pauses_it_and_the_same_command_finishes_the_book(
    small_disk: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    engine: Engine,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = small_disk / "data"
    monkeypatch.setenv("AUDIOPUB_DATA_DIR", str(data))
    epub, out = _book(tmp_path / "book.epub", 2, 4), tmp_path / "out" / "book.m4b"
    with JobStore.open_default() as store:  # queued with room for it, as `convert` would
        job = submit_job(store, epub, read_epub(epub), out.resolve(), JobSettings(), engine)
    # Room for a few chunks, not for the book.
    filler = _fill(small_disk, leave=150_000)

    assert cli.main(["convert", str(epub), "-o", str(out)]) == 1
    said = capsys.readouterr().err
    assert "Traceback" not in said and "Internal error" not in said
    assert f"job {job.id[:8]} is paused: " in said
    assert re.search(PAUSE_MESSAGE, said), said
    assert not out.exists()

    # Still full: the job list answers, read-only, and the same command says what to free.
    _fill(small_disk)
    assert cli.main(["jobs"]) == 0
    listed = capsys.readouterr().out
    assert f"{job.id[:8]}  paused" in listed  # the store had room to say so, and why
    assert re.search(PAUSE_MESSAGE, listed), listed
    assert cli.main(["convert", str(epub), "-o", str(out)]) == 1
    said = capsys.readouterr().err
    assert "Traceback" not in said and re.search(PAUSE_MESSAGE, said), said

    filler.unlink()  # space is freed
    assert cli.main(["convert", str(epub), "-o", str(out)]) == 0
    assert probe(out).duration_s > 10
    with JobStore.open_default() as store:
        assert store.queue.get_job(job.id).state is JobState.DONE
        progress = store.ledger.progress(job.id)
        assert progress.chunks_done == progress.chunks_total


def test_a_chunk_write_that_finds_no_room_pauses_the_job_with_what_to_free(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    with JobStore.open_default() as store:
        job = submit_job(
            store,
            _book(tmp_path / "b.epub"),
            read_epub(tmp_path / "b.epub"),
            tmp_path / "b.m4b",
            JobSettings(),
            engine,
        )
        written: list[Path] = []
        real_write_bytes = Path.write_bytes

        def full_after_two(path: Path, data: bytes) -> int:
            if "chunks" in path.parts and len(written) == 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            written.append(path)
            return real_write_bytes(path, data)

        monkeypatch.setattr(Path, "write_bytes", full_after_two)
        store.queue.set_state(job.id, JobState.RUNNING)
        assert execute_job(store, job.id, engine=engine) is JobState.PAUSED
        stopped = store.queue.get_job(job.id)
        assert stopped.state is JobState.PAUSED
        assert stopped.error is not None
        assert re.search(PAUSE_MESSAGE, stopped.error), stopped.error
        assert len(store.ledger.done_chunks(job.id)) == 2
        chunks = store.job_dir(job.id) / "chunks"
        assert not [p for p in chunks.iterdir() if TEMP_MARK in p.name]

        monkeypatch.setattr(Path, "write_bytes", real_write_bytes)  # space was freed
        store.queue.set_state(job.id, JobState.QUEUED)
        store.queue.set_state(job.id, JobState.RUNNING)
        assert execute_job(store, job.id, engine=engine) is JobState.DONE
        assert all(c.attempts == 1 for c in store.ledger.all_chunks(job.id))


def test_a_store_that_can_not_grow_pauses_the_job_and_the_command_says_what_to_free(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    engine: Engine,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SQLite's own "database or disk is full", from a page limit on every connection."""
    epub, out = _book(tmp_path / "b.epub", 3, 8), tmp_path / "b.m4b"
    with JobStore.open_default() as store:
        job = submit_job(store, epub, read_epub(epub), out, JobSettings(), engine)
    real_connect = db.StoreDatabase._connect

    def at_its_size(self: db.StoreDatabase) -> sqlite3.Connection:
        conn = real_connect(self)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    monkeypatch.setattr(db.StoreDatabase, "_connect", at_its_size)
    # The plan of 24 chunks does not fit: the run pauses before any audio.
    assert cli.main(["convert", str(epub), "-o", str(out)]) == 1
    said = capsys.readouterr().err
    assert "Traceback" not in said and re.search(PAUSE_MESSAGE, said), said
    assert cli.main(["jobs"]) == 0
    assert job.id[:8] in capsys.readouterr().out
    with JobStore.open_default() as store:
        assert store.queue.get_job(job.id).state is not JobState.FAILED

    monkeypatch.setattr(db.StoreDatabase, "_connect", real_connect)  # space was freed
    assert cli.main(["convert", str(epub), "-o", str(out)]) == 0
    assert out.is_file()


def test_ffmpeg_writing_to_a_full_disk_is_a_full_disk() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with pytest.raises(DiskFull, match="The disk filled up while ffmpeg tried to encode"):
        run_ffmpeg(
            [
                "-f",
                "lavfi",
                "-i",
                "anullsrc=r=22050:cl=mono",
                "-t",
                "1",
                "-f",
                "wav",
                "-y",
                "/dev/full",
            ],
            "encode",
        )
    with pytest.raises(MuxFailed):  # other failures stay what they are
        run_ffmpeg(["-i", "/nonexistent.wav", "-f", "wav", "-y", "/dev/null"], "encode")


def test_a_book_that_finds_no_room_pauses_and_leaves_no_book(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    """ffmpeg meets the kernel's own ENOSPC (it writes to /dev/full) while muxing."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    out = tmp_path / "out" / "b.m4b"
    real_command = mux.build_mux_command

    def into_a_full_disk(ffmpeg, concat, metadata, cover, temp_path, *rest, **options):
        return real_command(ffmpeg, concat, metadata, cover, Path("/dev/full"), *rest, **options)

    with JobStore.open_default() as store:
        job = submit_job(
            store,
            _book(tmp_path / "b.epub"),
            read_epub(tmp_path / "b.epub"),
            out,
            JobSettings(),
            engine,
        )
        monkeypatch.setattr(mux, "build_mux_command", into_a_full_disk)
        store.queue.set_state(job.id, JobState.RUNNING)
        assert execute_job(store, job.id, engine=engine) is JobState.PAUSED
        assert re.search(PAUSE_MESSAGE, store.queue.get_job(job.id).error or "")
        assert not out.exists() and not list(out.parent.glob(f"*{TEMP_MARK}*"))

        monkeypatch.setattr(mux, "build_mux_command", real_command)
        store.queue.set_state(job.id, JobState.QUEUED)
        store.queue.set_state(job.id, JobState.RUNNING)
        assert execute_job(store, job.id, engine=engine) is JobState.DONE
        assert probe(out).duration_s > 5
        assert all(c.attempts == 1 for c in store.ledger.all_chunks(job.id))


def test_the_book_on_a_full_filesystem_pauses_and_leaves_no_half_written_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    out_dir = tmp_path / "books"
    _mount_tmpfs(out_dir, "2m")
    try:
        out = out_dir / "b.m4b"
        with JobStore.open_default() as store:
            job = submit_job(
                store,
                _book(tmp_path / "b.epub"),
                read_epub(tmp_path / "b.epub"),
                out,
                JobSettings(),
                engine,
            )
            filler = _fill(out_dir, leave=20_000)
            store.queue.set_state(job.id, JobState.RUNNING)
            assert execute_job(store, job.id, engine=engine) is JobState.PAUSED
            error = store.queue.get_job(job.id).error or ""
            assert re.search(PAUSE_MESSAGE, error) and str(out_dir) in error, error
            assert sorted(p.name for p in out_dir.iterdir()) == ["filler"]

            filler.unlink()
            store.queue.set_state(job.id, JobState.QUEUED)
            store.queue.set_state(job.id, JobState.RUNNING)
            assert execute_job(store, job.id, engine=engine) is JobState.DONE
            assert probe(out).duration_s > 5
    finally:
        subprocess.run(["umount", "-l", str(out_dir)], check=False)


def test_a_chapter_wav_that_finds_no_room_is_a_full_disk(small_disk: Path) -> None:
    import numpy as np

    from audiopub.audio.stitch import ChapterWriter

    _fill(small_disk, leave=50_000)
    with pytest.raises(DiskFull):
        with ChapterWriter(small_disk / "0001.wav", 22050) as chapter:
            for _ in range(10):
                chapter.add(np.full(22050, 0.1, dtype=np.float32), 0.2)
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]


def test_the_web_worker_outlives_a_store_it_can_not_write_and_runs_the_job_once_it_can(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    from audiopub.jobs import worker as worker_module
    from audiopub.jobs.events import EventBus
    from audiopub.jobs.worker import Worker

    with JobStore.open_default() as store:
        job = submit_job(
            store,
            _book(tmp_path / "b.epub", 1, 2),
            read_epub(tmp_path / "b.epub"),
            tmp_path / "b.m4b",
            JobSettings(),
            engine,
        )
        real_requeue, real_claim = store.queue.requeue_interrupted, store.queue.claim_next_job
        refused: list[str] = []

        def full(real):  # its first write finds no room, as on a full disk
            def write(*args, **kwargs):
                if real.__name__ not in refused:
                    refused.append(real.__name__)
                    raise DiskFull("The disk is full")
                return real(*args, **kwargs)

            return write

        monkeypatch.setattr(worker_module, "DISK_FULL_RETRY_S", 0.1)
        monkeypatch.setattr(store.queue, "requeue_interrupted", full(real_requeue))
        monkeypatch.setattr(store.queue, "claim_next_job", full(real_claim))
        bus = EventBus()
        events = bus.subscribe()
        worker = Worker(store, bus, engine)
        worker.start()
        try:
            while (event := events.get(timeout=120)).state is not JobState.DONE:
                assert event.state is not JobState.FAILED, event.message
        finally:
            worker.stop()
        assert refused == ["requeue_interrupted", "claim_next_job"]
        assert store.queue.get_job(job.id).state is JobState.DONE
