"""Read-aloud EPUBs of the real books in tests/data/epubs pass EPUBCheck.

Each book's first chapters are spoken by the tiny multi-speaker test voice (one sample per
phoneme id, not speech), which makes a whole job take seconds: what EPUBCheck judges is the
package (every page of the book, wrapped sentences, SMIL, audio, metadata), not the sound.
Leaves of Grass is left out because its source already fails EPUBCheck (402 × RSC-005, see
tests/data/epubs' README): a read-aloud book can be no more valid than the book it is made of.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from test_read_aloud import epubcheck_errors
from voices import SPEAKERS, add_multi_speaker_voice

from audiopub.cli import main
from audiopub.export.read_aloud import export_read_aloud
from audiopub.jobs.store import JobStore

BOOKS = Path(__file__).parent / "data" / "epubs"
# Each book with the chapters spoken: its first three, or where those are long, as many as make
# a title page and a whole chapter. Sherlock Holmes's chapters are whole stories (46,000 and
# 49,000 characters, against 5,500 a chapter of the Just So Stories): its first three took
# three times as long as another book's; the second story adds nothing to the package a first
# one does not (the same markup, more sentences).
VALID_SOURCES = (
    ("pg1661-adventures-of-sherlock-holmes.epub", "1-2"),  # EPUB 2: made EPUB 3 here
    ("pg2781-just-so-stories.epub", "1-3"),
    ("se-poe-poetry.epub", "1-3"),
    ("se-war-of-the-worlds.epub", "1-3"),
)


@pytest.mark.parametrize(("name", "chapters"), VALID_SOURCES, ids=[n for n, _ in VALID_SOURCES])
def test_a_real_books_read_aloud_export_passes_epubcheck(
    name: str, chapters: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "models"
    add_multi_speaker_voice(models / "piper", "en_US-tiny-medium")
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(models))
    monkeypatch.setenv("AUDIOPUB_LEVEL_CHAPTERS", "0")  # levels of a non-voice say nothing
    epub = tmp_path / name
    epub.write_bytes((BOOKS / name).read_bytes())
    assert (
        main(
            [
                "convert",
                str(epub),
                "--voice",
                f"en_US-tiny-medium#{SPEAKERS[0]}",
                "--chapters",
                chapters,
                "-o",
                str(tmp_path / "book.m4b"),
            ]
        )
        == 0
    )
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        made = export_read_aloud(store, job.id, tmp_path / "read-aloud.epub")
    assert made.sentences > 0 and made.placed > 0.9 * made.sentences
    with zipfile.ZipFile(made.path) as book:
        overlays = [n for n in book.namelist() if n.endswith(".smil")]
    assert overlays
    assert epubcheck_errors(made.path) == []
