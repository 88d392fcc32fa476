"""A conversion killed with SIGKILL part-way through a chapter resumes with every chunk once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from epub_factory import build_epub

from audiopub.audio.ffmpeg import probe
from audiopub.jobs.store import JobStore

pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX"),
    pytest.mark.engine_processes,
]  # killed as a conversion runs by default

CHAPTER_CHUNKS = 12  # one heading + 11 one-sentence paragraphs: long enough to kill inside
# The second chapter only has to exist after the killed one: every chunk more is one more to speak.
SECOND_CHAPTER_CHUNKS = 3


def _two_chapters(path: Path) -> Path:
    return build_epub(
        path,
        [
            (
                f"Chapter {c}",
                [f"Sentence number {p} of chapter {c} is spoken here." for p in range(chunks - 1)],
            )
            for c, chunks in (("One", CHAPTER_CHUNKS), ("Two", SECOND_CHAPTER_CHUNKS))
        ],
    )


def _done_in_first_chapter(db: Path) -> int:
    if not db.exists():
        return 0
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
        try:
            row = conn.execute(
                "SELECT count(*) FROM chunks WHERE chapter_idx = 0 AND state = 'done'"
            ).fetchone()
        except sqlite3.OperationalError:  # the schema is not written yet
            return 0
    return row[0]


def _convert(
    epub: Path, out: Path, data_dir: Path, *options: str, cpu_workers: str | None = None
) -> subprocess.Popen[str]:
    """`convert` in a process of its own; with its engine processes, unless `cpu_workers`."""
    env = {**os.environ, "AUDIOPUB_DATA_DIR": str(data_dir)}
    if cpu_workers is not None:
        env["AUDIOPUB_CPU_WORKERS"] = cpu_workers
    return subprocess.Popen(
        [sys.executable, "-m", "audiopub", "convert", str(epub), "-o", str(out), *options],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sigkill_mid_chapter_then_resume(tmp_path: Path, data_dir: Path) -> None:
    epub = _two_chapters(tmp_path / "book.epub")
    out = tmp_path / "book.m4b"
    db = data_dir / "jobs.sqlite3"

    first = _convert(epub, out, data_dir)
    deadline = time.monotonic() + 120
    while _done_in_first_chapter(db) < 3:
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "no progress within 2 minutes"
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.communicate()
    done_at_kill = _done_in_first_chapter(db)
    assert 3 <= done_at_kill < CHAPTER_CHUNKS, "the kill must land inside the first chapter"
    assert not out.exists()

    second = _convert(epub, out, data_dir)
    stdout, stderr = second.communicate(timeout=300)
    assert second.returncode == 0, stderr
    assert f"({done_at_kill} chunks already made)" in stderr

    with JobStore(db) as store:
        (job,) = store.queue.list_jobs()
        chunks = store.ledger.all_chunks(job.id)
        chapters = store.ledger.chapters(job.id)
    assert len(chunks) == CHAPTER_CHUNKS + SECOND_CHAPTER_CHUNKS
    # Every chunk was made exactly once: the one in flight at the kill was never marked done,
    # so it counts once, in the second run.
    assert [c.attempts for c in chunks] == [1] * len(chunks)
    places = [(c.chapter_idx, c.idx) for c in chunks]
    assert places == sorted(places)

    print(
        f"resume after SIGKILL: {len(chunks)} chunks planned, {done_at_kill} done before the "
        f"kill, {len(chunks) - done_at_kill} made after it, each exactly once"
    )
    book = probe(out)
    assert [c.title for c in book.chapters] == ["Chapter One", "Chapter Two"]
    # the book holds each chunk once: its length is the chapters', which are the chunks' plus pauses
    assert book.duration_s == pytest.approx(sum(c.duration_s for c in chapters), abs=0.15)
    speech = sum(c.duration_s for c in chunks)
    assert speech < book.duration_s < speech + len(chunks) * 1.0 + 2 * 1.5


def test_killed_then_run_with_another_chapter_selection_makes_the_new_one(
    tmp_path: Path, data_dir: Path
) -> None:
    """Killed mid-chapter, the job is still marked running; the next command's selection wins."""
    epub = _two_chapters(tmp_path / "book.epub")
    out = tmp_path / "book.m4b"
    db = data_dir / "jobs.sqlite3"

    # Speaking in the command's own process: a kill among engine processes is the test above's,
    # here the chapters chosen are what counts (two engine processes less to start per run).
    first = _convert(epub, out, data_dir, "--chapters", "1", cpu_workers="1")
    deadline = time.monotonic() + 120
    while _done_in_first_chapter(db) < 3:
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "no progress within 2 minutes"
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.communicate()

    second = _convert(epub, out, data_dir, "--chapters", "2", cpu_workers="1")
    _, stderr = second.communicate(timeout=300)
    assert second.returncode == 0, stderr
    assert "settings changed" in stderr
    assert [c.title for c in probe(out).chapters] == ["Chapter Two"]


def test_jobs_shows_a_killed_conversion_as_interrupted(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A job its killed process left `running` is listed as interrupted, with how to go on;
    while its process lives it is listed as running."""
    from audiopub.cli import main

    epub = build_epub(
        tmp_path / "book.epub",
        [("Chapter One", [f"Sentence number {p} is spoken here." for p in range(11)])],
    )
    db = data_dir / "jobs.sqlite3"
    env = {**os.environ, "AUDIOPUB_DATA_DIR": str(data_dir), "AUDIOPUB_CPU_WORKERS": "1"}
    first = subprocess.Popen(
        [sys.executable, "-m", "audiopub", "convert", str(epub), "-o", str(tmp_path / "book.m4b")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while _done_in_first_chapter(db) < 1:
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "no progress within 2 minutes"
            time.sleep(0.05)
        assert main(["jobs"]) == 0
        alive = capsys.readouterr().out
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()

    assert main(["jobs"]) == 0
    after = capsys.readouterr().out

    assert alive.split()[1] == "running"
    assert after.split()[1] == "interrupted", after
    job_id = after.split()[0]
    assert "no Audiopub process is making it (was it killed?)" in after
    assert f"audiopub resume {job_id}" in after
    with JobStore(db) as store:  # listing it changed nothing: the next runner requeues it
        (job,) = store.queue.list_jobs()
    assert job.state.value == "running"
