"""`audiopub convert` with several books, or a folder of them: one job and one output per
book, a bad book said while the others are made, and the same command again resumes each."""

from __future__ import annotations

from pathlib import Path

import pytest
from epub_factory import build_epub

from audiopub.audio.ffmpeg import probe
from audiopub.cli import main
from audiopub.jobs import foreground
from audiopub.jobs.models import JobState
from audiopub.jobs.store import JobStore

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")


@pytest.fixture(autouse=True)
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "1")  # no engine processes: short books


@pytest.fixture
def shelf(tmp_path: Path) -> Path:
    folder = tmp_path / "shelf"
    folder.mkdir()
    build_epub(
        folder / "a.epub",
        [("Morning", ["The boat left at dawn."]), ("Evening", ["It came back at night."])],
        title="Boats",
    )
    build_epub(folder / "b.epub", [("Alone", ["A short second book."])], title="Second")
    (folder / "cover.jpg").write_bytes(b"\xff\xd8\xff not a book")
    return folder


def _states() -> dict[str, JobState]:
    with JobStore.open_default() as store:
        return {job.title: job.state for job in store.queue.list_jobs()}


def test_a_folder_makes_one_book_per_epub_and_a_bad_one_is_said(
    shelf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (shelf / "c.epub").write_text("not an epub either")
    out = tmp_path / "books"

    assert main(["convert", str(shelf), "-o", str(out)]) == 1  # one book failed

    assert sorted(path.name for path in out.iterdir()) == ["Boats.m4b", "Second.m4b"]
    assert [c.title for c in probe(out / "Boats.m4b").chapters] == ["Morning", "Evening"]
    assert [c.title for c in probe(out / "Second.m4b").chapters] == ["Alone"]
    assert _states() == {"Boats": JobState.DONE, "Second": JobState.DONE}
    captured = capsys.readouterr()
    assert "c.epub: not an EPUB" in captured.err
    lines = captured.out.splitlines()
    assert any(
        line.split()[:2] == ["done", "a.epub"]
        and str(out / "Boats.m4b") in line
        and "chars/s" in line
        for line in lines
    ), lines
    assert any(
        line.split()[:2] == ["failed", "c.epub"] and "not an EPUB" in line for line in lines
    ), lines
    assert any(line.startswith("Total: 2 of 3 books done;") for line in lines), lines


def test_books_named_one_by_one_and_a_missing_one(
    shelf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "books"
    assert (
        main(["convert", str(shelf / "b.epub"), str(tmp_path / "gone.epub"), "-o", str(out)]) == 1
    )
    assert [path.name for path in out.iterdir()] == ["Second.m4b"]
    assert "No such file" in capsys.readouterr().err


def test_two_books_of_one_title_get_two_files(tmp_path: Path) -> None:
    for name in ("x.epub", "y.epub"):
        build_epub(tmp_path / name, [("One", [f"Book {name[0]} says hello."])], title="Same")
    out = tmp_path / "books"
    assert (
        main(["convert", str(tmp_path / "x.epub"), str(tmp_path / "y.epub"), "-o", str(out)]) == 0
    )
    assert sorted(path.name for path in out.iterdir()) == ["Same (y).m4b", "Same.m4b"]


def test_several_books_need_a_folder_not_a_file(
    shelf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["convert", str(shelf), "-o", str(tmp_path / "one.m4b")]) == 1
    assert "-o names a folder" in capsys.readouterr().err
    assert _states() == {}


def test_the_same_command_again_resumes_each_book(
    shelf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "books"
    real_execute = foreground.execute_job
    runs: list[str] = []

    def interrupted_at_the_second_book(
        store: JobStore, job_id: str, *args: object, **options: object
    ) -> JobState:
        runs.append(job_id)
        if len(runs) == 2:
            raise KeyboardInterrupt  # Ctrl-C while the second book is being made
        return real_execute(store, job_id, *args, **options)

    monkeypatch.setattr(foreground, "execute_job", interrupted_at_the_second_book)
    assert main(["convert", str(shelf), "-o", str(out)]) == 130
    assert _states() == {"Boats": JobState.DONE, "Second": JobState.PAUSED}
    assert [path.name for path in out.iterdir()] == ["Boats.m4b"]
    capsys.readouterr()

    assert main(["convert", str(shelf), "-o", str(out)]) == 0
    # The finished book is left alone, the paused one resumed: no job was added.
    assert _states() == {"Boats": JobState.DONE, "Second": JobState.DONE}
    assert len(runs) == 3
    assert sorted(path.name for path in out.iterdir()) == ["Boats.m4b", "Second.m4b"]
    assert "Already made" in capsys.readouterr().err
