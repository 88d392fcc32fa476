"""`audiopub convert -o`: a file, a folder to write `<Title>.m4b` in, and a place that cannot
take the book, which is refused before anything is spoken."""

from __future__ import annotations

from pathlib import Path

import pytest
from epub_factory import build_epub

from audiopub.audio.ffmpeg import probe
from audiopub.cli import main
from audiopub.jobs.store import JobStore

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")


def _one_chapter_book(tmp_path: Path, title: str = "Coastline") -> Path:
    return build_epub(tmp_path / "book.epub", [("Arrival", ["The rain had stopped."])], title=title)


def test_an_existing_folder_gets_the_book_named_after_its_title_and_the_forms_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    assert (
        main(
            [
                "convert",
                str(_one_chapter_book(tmp_path)),
                "--format",
                "mp3",
                "--split",
                "chapters",
                "-o",
                str(folder),
            ]
        )
        == 0
    )

    book = folder / "Coastline.m4b"
    assert [c.title for c in probe(book).chapters] == ["Arrival"]
    printed = [Path(line) for line in capsys.readouterr().out.splitlines() if line.endswith(".mp3")]
    assert printed and all(path.is_file() and folder in path.parents for path in printed)


def test_a_title_unfit_for_a_file_name_gets_a_safe_one(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    epub = _one_chapter_book(tmp_path, title='AC/DC: "Live" at the <Hall>?')
    assert main(["convert", str(epub), "-o", str(folder)]) == 0
    assert [p.name for p in folder.iterdir()] == ["AC DC Live at the Hall.m4b"]


def test_a_trailing_slash_names_a_folder_to_make(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "books"
    assert main(["convert", str(_one_chapter_book(tmp_path)), "-o", f"{folder}/"]) == 0
    assert [p.name for p in folder.iterdir()] == ["Coastline.m4b"]


@pytest.mark.parametrize("below", ["notes.txt", "notes.txt/deeper"])
def test_a_folder_that_cannot_be_made_is_refused_before_anything_is_spoken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], below: str
) -> None:
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    out = tmp_path / below / "book.m4b"
    assert main(["convert", str(_one_chapter_book(tmp_path)), "-o", str(out)]) == 1

    err = capsys.readouterr().err
    assert (
        f"Cannot write the book in {out.parent}: {tmp_path / 'notes.txt'} is a file, not a "
        "folder (choose another -o)" in err
    )
    assert "Internal error" not in err
    with JobStore.open_default() as store:
        assert store.queue.list_jobs() == []  # no job: nothing was spoken
