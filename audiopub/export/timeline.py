"""Where every passage of a finished book is heard: the timings exports are made of.

Exact: where each chunk's speech starts and ends in its chapter's audio. The stitcher records
it (in frames, silence trimmed, pauses excluded) as it writes the chapter, and a chapter's
place in the book is the sum of the chapters before it, each its exact frame count: ffmpeg
joins the chapter files back to back, and the book's chapter marks are made the same way.
Exact too, where known: where each word of a chunk starts, from the engine's own durations
(`book.chunks.words` says when the engine's words are the book's). Estimated (in `subtitles`): where
a sentence starts inside a chunk of several sentences whose words are not known.
"""

from __future__ import annotations

from dataclasses import dataclass

from audiopub.book.chunks.words import book_word_starts
from audiopub.errors import AudiopubError
from audiopub.jobs.models import ChunkRow, JobState
from audiopub.jobs.store import JobStore


@dataclass(frozen=True)
class Passage:
    """One chunk's speech: the book's own text for it (not its spoken form), and when it is
    heard, in seconds from the start of its chapter."""

    text: str
    start_s: float
    end_s: float
    # When each word of `text` (`book.chunks.words.text_words`) starts, in seconds from the start of
    # the chapter; None where the words' times are not known.
    word_starts_s: tuple[float, ...] | None = None


@dataclass(frozen=True)
class ChapterTimeline:
    number: int  # 1-based, in the audiobook's order
    title: str
    start_s: float  # in the whole book
    duration_s: float
    passages: tuple[Passage, ...]


def book_timeline(store: JobStore, job_id: str) -> list[ChapterTimeline]:
    """The finished job's chapters and passages on the audiobook's clock."""
    job = store.queue.get_job(job_id)
    if job.state is not JobState.DONE:
        raise AudiopubError(
            f"“{job.title}” is {job.state.value}: only a finished book has timings to export"
        )
    chapters, book_s = [], 0.0
    for chapter in store.ledger.chapters(job_id):
        chunks = store.ledger.chapter_chunks(job_id, chapter.idx)
        rate = chapter.sample_rate
        if (
            rate is None
            or chapter.frames is None
            or any(c.clip_start is None or c.clip_frames is None for c in chunks)
        ):
            raise AudiopubError(
                f"“{job.title}” was made before Audiopub kept its timings: convert the book "
                "again (the audio already made is reused, so it takes little time)"
            )
        passages = tuple(_passage(chunk, rate) for chunk in chunks)
        duration_s = chapter.frames / rate
        chapters.append(
            ChapterTimeline(chapter.idx + 1, chapter.title, book_s, duration_s, passages)
        )
        book_s += duration_s
    return chapters


def _passage(chunk: ChunkRow, rate: int) -> Passage:
    assert chunk.clip_start is not None and chunk.clip_frames is not None  # checked above
    words = book_word_starts(chunk.text, chunk.spoken, chunk.clip_word_starts)
    return Passage(
        chunk.text,
        chunk.clip_start / rate,
        (chunk.clip_start + chunk.clip_frames) / rate,
        None if words is None else tuple((chunk.clip_start + w) / rate for w in words),
    )
