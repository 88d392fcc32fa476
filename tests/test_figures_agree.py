"""One book, one run: a figure shown in two places is the same figure, or is labelled so that
it says why it differs."""

from __future__ import annotations

from pathlib import Path

import pytest
from epub_factory import build_epub

from audiopub.audio.ffmpeg import probe
from audiopub.book.epub.reader import read_epub
from audiopub.cli import main
from audiopub.figures import estimate_speech_s
from audiopub.jobs.book_plan import plan_book
from audiopub.jobs.models import JobSettings
from audiopub.jobs.store import JobStore

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")

LONG = (
    "The rain had stopped by the time the train reached the coast, and she counted the "
    "lighthouses as they passed. Nobody on the platform seemed to expect anyone at all. "
    "A dog slept in the shade of the ticket office; the harbour smelled of tar and salt."
)


def test_a_book_and_its_job_count_the_same_characters(tmp_path: Path) -> None:
    """The page shows the book's count before the job exists, the job card the job's: chunks
    are cut at spaces, and the spaces count in both."""
    epub = build_epub(tmp_path / "b.epub", [("One", [LONG, LONG[:90]]), ("Two", [LONG] * 3)])
    book = read_epub(epub)
    with JobStore.open_default() as store:
        job = store.queue.create_job(epub, tmp_path / "b.m4b", JobSettings(voice="v"), book=book)
        # Many cuts inside paragraphs.
        store.ledger.write_plan(job.id, plan_book(book, max_chars=40))
        progress = store.ledger.progress(job.id)
    assert [c.chars_total for c in progress.chapters] == [c.char_count for c in book.chapters]
    assert progress.chars_total == book.char_count


def test_chunks_that_share_their_audio_count_their_own_characters_done(tmp_path: Path) -> None:
    """Chunks with the same spoken words share one audio file, and are marked done together,
    but need not count alike: "He said." cut inside a paragraph counts the space after it,
    ending one does not; "Dr." is said as "Doctor". Done ends at the total, not past it."""
    cut = "The rain had stopped long before the train came. He said. Nobody expected anyone."
    epub = build_epub(
        tmp_path / "b.epub",
        [("One", [cut, "He said.", "Doctor Watson came in.", "Dr. Watson came in."])],
    )
    book = read_epub(epub)
    with JobStore.open_default() as store:
        job = store.queue.create_job(epub, tmp_path / "b.m4b", JobSettings(voice="v"), book=book)
        plan = plan_book(book, max_chars=40)
        store.ledger.write_plan(job.id, plan)
        pending = store.ledger.pending_chunks(job.id)
        assert len(pending) < len(plan[0][1])  # some chunks share their audio
        done = 0
        for chunk in pending:  # as a run records them: once per shared audio file
            marked = store.ledger.mark_chunk_done(
                job.id,
                chunk.cache_key,
                audio_path=f"chunks/{chunk.cache_key}.flac",
                frames=100,
                sample_rate=1000,
                synth_s=0.1,
                provider="CPU",
            )
            done += marked.chars
        progress = store.ledger.progress(job.id)
    assert done == progress.chars_done == progress.chars_total == book.char_count


def _line(lines: list[str], start: str) -> str:
    (found,) = [line.strip() for line in lines if line.strip().startswith(start)]
    return found


def test_the_summary_and_jobs_details_agree_on_the_speed_or_label_their_clocks(
    three_chapter_epub: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["convert", str(three_chapter_epub), "-o", str(tmp_path / "b.m4b")]) == 0
    summary = capsys.readouterr().out.splitlines()
    assert main(["jobs", "--details"]) == 0
    details = capsys.readouterr().out.splitlines()

    # The job's speed on the time spent speaking: the same words in both places.
    speaking = _line(details, "speaking: ")
    assert speaking.endswith("(wall clock, speaking only)")
    assert _line(summary, "speaking: ") == speaking
    # The command's own time includes loading, planning, stitching and encoding: it says so.
    assert _line(summary, "this run: ").endswith("(wall clock, start to finish)")


def test_a_voice_that_finished_a_book_estimates_that_book_at_its_length(
    three_chapter_epub: Path, tmp_path: Path
) -> None:
    out = tmp_path / "b.m4b"
    assert main(["convert", str(three_chapter_epub), "--speed", "1.2", "-o", str(out)]) == 0
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        pace = store.ledger.speech_pace(job.settings.engine, job.settings.voice or "")
        assert store.ledger.speech_pace(job.settings.engine, "another voice") is None
    chars = read_epub(three_chapter_epub).char_count
    assert estimate_speech_s(chars, 1.2, pace) == pytest.approx(probe(out).duration_s, abs=0.5)
