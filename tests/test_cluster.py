"""Books made on a real Ray cluster (2 CPUs, loopback only, started once for the module): the
same books as made here, a worker killed mid-run loses nothing, and a cluster that goes away
pauses the job, which then finishes on this machine."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from epub_factory import build_epub
from ray_cluster import ADDRESS, Cluster, audiopub, end_cluster, start_cluster

from audiopub import settings
from audiopub.audio.ffmpeg import probe
from audiopub.cli import main
from audiopub.jobs.models import JobState
from audiopub.jobs.store import JobStore

# A cluster's actors each start an engine on a 2-CPU cluster sharing the machine with the rest of
# the run: on a busy machine their first chunk took minutes. The waits below are generous deadlines
# (a passing run returns as soon as it can), and the module's tests get the time they need.
PATIENCE_S = 600
pytestmark = pytest.mark.timeout(2 * PATIENCE_S)

SENTENCES = [
    "The rain had stopped by the time the train reached the coast.",
    "She counted the lighthouses as they passed, one for every mile.",
    "Nobody on the platform seemed to expect anyone at all.",
    "A dog slept in the shade of the ticket office.",
]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed (pip install 'audiopub[cluster]')")
    started = start_cluster()
    try:
        yield started
    finally:
        end_cluster(started)


def _long_book(path: Path, title: str) -> Path:
    """Long enough that a run is still speaking a second after its first chunk: 15 chunks (a
    heading and four lines a part) on 2 actors that each have at most 2 in flight."""
    # Every line its own text: chunks of one text share their audio, which is made once.
    return build_epub(
        path,
        [
            (
                f"Part {n}",
                [f"Line {line} of part {n}. {sentence}" for line, sentence in enumerate(SENTENCES)],
            )
            for n in (1, 2, 3)
        ],
        title=title,
    )


def _job(title: str) -> tuple[JobState, int, int, str]:
    with JobStore.open_default() as store:
        (job,) = [job for job in store.queue.list_jobs() if job.title == title]
        progress = store.ledger.progress(job.id)
        return job.state, progress.chunks_done, progress.chunks_total, job.error or ""


def _wait_for_chunks(title: str, done: int, run: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline and run.poll() is None:
        try:
            if _job(title)[1] >= done:
                return
        except ValueError:  # not submitted yet
            pass
        time.sleep(0.2)
    raise AssertionError(f"no {done} chunks done: {run.communicate()}")


def test_without_ray_the_option_says_what_to_install(
    three_chapter_epub: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` finds when not installed
    assert main(["convert", str(three_chapter_epub), "--ray", "auto"]) == 1
    assert "pip install 'audiopub[cluster]'" in capsys.readouterr().err
    with JobStore.open_default() as store:
        assert store.queue.list_jobs() == []


def test_two_books_on_the_cluster_match_the_same_books_made_here(
    cluster: Cluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    books = [
        build_epub(
            tmp_path / "a.epub",
            [("Arrival", SENTENCES[:2]), ("Departure", SENTENCES[2:])],
            title="Coast",
        ),
        build_epub(tmp_path / "b.epub", [("Alone", SENTENCES[1:3])], title="Second"),
    ]
    made = cluster.run(
        audiopub(
            "convert",
            *map(str, books),
            "-o",
            str(tmp_path / "ray"),
            "--seed",
            "7",
            "--ray",
            ADDRESS,
        ),
        timeout=PATIENCE_S,
    )
    assert made.returncode == 0, made.stderr
    assert "ran on: Ray cluster at 127.0.0.1:6379: 2 CPU actors" in made.stdout
    assert "node 127.0.0.1: " in made.stdout and "Total: 2 of 2 books done" in made.stdout
    assert main(["jobs", "--details"]) == 0
    details = capsys.readouterr().out
    assert details.count("node 127.0.0.1: ") == 2 and "(wall clock, speaking only)" in details

    # Here, in another data directory: the cluster's chunk audio is not reused.
    monkeypatch.setenv("AUDIOPUB_DATA_DIR", str(tmp_path / "here-data"))
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "1")
    assert main(["convert", *map(str, books), "-o", str(tmp_path / "here"), "--seed", "7"]) == 0
    assert "node " not in capsys.readouterr().out  # one machine: no figures per node
    for name in ("Coast.m4b", "Second.m4b"):
        on_cluster, here = probe(tmp_path / "ray" / name), probe(tmp_path / "here" / name)
        assert [c.title for c in on_cluster.chapters] == [c.title for c in here.chapters]
        assert on_cluster.duration_s == pytest.approx(here.duration_s, rel=0.01)


def test_a_worker_killed_mid_run_loses_nothing(cluster: Cluster, tmp_path: Path) -> None:
    book = _long_book(tmp_path / "long.epub", "Long")
    out = tmp_path / "long.m4b"
    run = cluster.start(
        audiopub("convert", str(book), "-o", str(out), "--batch-size", "1", "--ray", ADDRESS)
    )
    _wait_for_chunks("Long", 1, run)
    (victim, *_) = cluster.actor_pids()
    os.kill(victim, signal.SIGKILL)
    stdout, stderr = run.communicate(timeout=PATIENCE_S)
    assert run.returncode == 0, stderr
    state, done, total, _ = _job("Long")
    assert state is JobState.DONE and done == total
    assert [c.title for c in probe(out).chapters] == ["Part 1", "Part 2", "Part 3"]
    assert victim not in cluster.actor_pids()  # Ray started its actor again elsewhere


def test_the_cluster_gone_pauses_the_job_and_this_machine_finishes_it(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Last in the module: the cluster does not come back."""
    # The same 15 chunks: the cluster is killed at once after the first, so most are left to
    # finish here (twice as many took this machine twice as long to finish).
    book = _long_book(tmp_path / "long.epub", "Stopped")
    out = tmp_path / "stopped.m4b"
    run = cluster.start(
        audiopub("convert", str(book), "-o", str(out), "--batch-size", "1", "--ray", ADDRESS)
    )
    _wait_for_chunks("Stopped", 1, run)
    cluster.stop()
    stdout, stderr = run.communicate(timeout=PATIENCE_S)
    assert run.returncode == 1, (stdout, stderr)
    state, done, total, error = _job("Stopped")
    assert state is JobState.PAUSED and 0 < done < total
    assert "The Ray cluster at 127.0.0.1:6379 can't be reached" in error
    assert "is paused: The Ray cluster" in stderr and "Traceback" not in stderr

    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "1")
    assert main(["convert", str(book), "-o", str(out), "--batch-size", "1"]) == 0
    state, done_after, total, _ = _job("Stopped")
    assert state is JobState.DONE and done_after == total
    assert len(probe(out).chapters) == 3


@pytest.mark.parametrize(
    "argv",
    [
        ["--ray", "10.0.0.7:6379"],
        ["serve", "--ray", "10.0.0.7:6379"],
        ["--ray", "10.0.0.7:6379", "serve"],
    ],
)
def test_the_web_app_speaks_on_the_cluster_it_is_given(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed (pip install 'audiopub[cluster]')")
    monkeypatch.setenv(settings.RAY_ADDRESS_ENV, "")  # none but the option
    # By module name: after the web UI tests, the `audiopub` package may lack its `ui` attribute.
    app_module = importlib.import_module("audiopub.ui.app")
    served: list[str | None] = []
    monkeypatch.setattr(app_module, "main", lambda **options: served.append(settings.ray_address()))
    assert main(argv) == 0
    assert served == ["10.0.0.7:6379"]
    assert settings.ray_address() is None  # the command's own: not left in the environment
