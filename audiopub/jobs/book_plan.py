"""What of its book a job speaks, as every run plans it: the book kept with the job, the chapters
chosen, each cut into chunks the engine reads well with the words a narrator says for them, by
the pronunciation entries of every scope.

A run plans with these (`jobs.pipeline`), `convert --show-spoken` prints what they say, and
submission checks a book and a lexicon with them before a job exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from audiopub.book.chunks.chunking import chunk_paragraphs
from audiopub.book.lexicons.lexicon import (
    Lexicon,
    book_lexicon_path,
    layered,
    read_if_present,
    user_lexicon_path,
)
from audiopub.book.models import Book, Chapter, Chunk
from audiopub.book.reading import read_book
from audiopub.book.spoken import spoken_form
from audiopub.book.voicing import Voicing
from audiopub.jobs.models import Job, JobSettings
from audiopub.jobs.store import JobStore
from audiopub.tts.engine import Engine


def stored_book(store: JobStore, job: Job) -> Book:
    """The book the job was submitted with; a job from before books were kept with their
    jobs reads its EPUB copy once, and keeps what it read."""
    book = store.queue.book(job.id)
    if book is None:
        book = read_book(job.epub_path)
        store.queue.keep_book(job.id, book)
    return book


def plan_book(
    book: Book,
    max_chars: int,
    selection: Sequence[int] | None = None,
    language: str | None = None,
    lexicon: Lexicon | None = None,
    cast: Voicing | None = None,
) -> list[tuple[str, list[Chunk]]]:
    """The chapters to narrate, each cut into chunks the engine reads well, with the words a
    narrator says for each: as the `lexicon` says for what its entries claim, else numbers,
    numerals, abbreviations and units by the rules of the text's `language` (default: the
    book's). With a `cast`, quotations its characters read are chunks of their own, in their
    voices."""
    text_language = language or book.language

    def plain(text: str) -> str:
        return spoken_form(text, text_language)

    def speak(text: str) -> str:
        return lexicon.speak(text, plain) if lexicon else plain(text)

    return [
        (
            ch.title,
            chunk_paragraphs(
                ch.paragraphs,
                max_chars,
                ch.index,
                speak,
                cast.in_chapter(ch.index) if cast else None,
            ),
        )
        for ch in chosen_chapters(book, selection)
    ]


def chosen_chapters(book: Book, selection: Sequence[int] | None) -> list[Chapter]:
    """The chapters a 1-based selection names, in book order; all of them without one."""
    return [book.chapters[i - 1] for i in selection] if selection else list(book.chapters)


def job_lexicon(
    store: JobStore, epub: Path, book: Book, settings: JobSettings, engine: Engine
) -> Lexicon:
    """The entries of every scope for a job, first wins: its own, its book's, the EPUB's own
    hints, the user's — files read now, so an edit counts at the next run — checked against
    the voice."""
    data_dir = store.path.parent
    entries = layered(
        read_if_present(book_lexicon_path(data_dir, epub)),
        book.pronunciations,
        read_if_present(user_lexicon_path(data_dir)),
        own=settings.lexicon,
    )
    return Lexicon(entries, engine.phoneme_symbols(settings.voice or ""))
