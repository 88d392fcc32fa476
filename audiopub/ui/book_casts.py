"""The casts of the books uploaded, for the Convert page's Cast panel: each book's `BookCast`
(its cast file in the data dir), kept while the app runs so a book is attributed once, and the
corrections the panel makes, one at a time per book.

Finding who speaks takes a second or two for a novel, and every call here reads or writes the
cast file or loads an engine: blocking, call them through `run.io_bound`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar

from audiopub.book.cast import attribute
from audiopub.book.cast.models import Gender, Quote
from audiopub.book.lexicons.lexicon import book_key
from audiopub.book.models import Book
from audiopub.book.voicing import Voicing
from audiopub.errors import AudiopubError
from audiopub.tts import registry
from audiopub.voices.casting import BookCast, Cast, quote_key

KEPT_BOOKS: Final = 4  # books whose casts stay in memory (a novel's quotations, a few MB)
HEARD_CHARS: Final = (20, 200)  # a line long enough to hear the voice, short to wait for

T = TypeVar("T")


@dataclass(frozen=True)
class QuoteInContext:
    """A quotation with its paragraph, to show it where it is said."""

    key: str  # `quote_key`: names it in the cast file
    quote: Quote
    before: str
    said: str
    after: str


class OpenCast:
    """One book's cast, its changes made one at a time (two tabs may edit the same book)."""

    def __init__(self, book_cast: BookCast, book: Book) -> None:
        self.book_cast = book_cast
        self.book = book
        self._lock = threading.Lock()

    def _locked(self, change: Callable[[], T]) -> T:
        with self._lock:
            return change()

    def cast(self, engine: str, narrator: str) -> tuple[Cast, bool]:
        """The cast with this engine's voices around the narrator (the previews' engine: it
        lists the same voices as the job's, and is loaded already when a voice was heard), and
        whether it has voices for the characters. With one voice (the embedded Piper voice of a
        fresh install) the characters and their lines are still there, no voice given."""
        tts = registry.get_preview_engine(engine)
        return self._locked(lambda: self.book_cast.listed(tts, narrator))

    def voicing(self, engine: str, use_gpu: bool, narrator: str) -> Voicing:
        """What a job keeps of the cast, made with the job's engine as `convert --cast` makes
        it."""
        tts = registry.get_engine(engine, use_gpu=use_gpu)
        return self._locked(lambda: self.book_cast.cast(tts, narrator).voicing(tts))

    def set_voice(self, name: str, voice: str | None, engine: str) -> None:
        tts = registry.get_preview_engine(engine)
        self._locked(lambda: self.book_cast.set_voice(name, voice, tts))

    def edit(self, name: str, new_name: str, gender: Gender | None) -> None:
        """Rename a character (to another character's name: the two are merged) and say their
        gender."""
        new_name = new_name.strip()
        if not new_name:
            raise AudiopubError("A character needs a name")

        def change() -> None:
            characters = {c.name: c for c in self.book_cast.file.corrected().characters}
            if new_name in characters and new_name != name:
                self.book_cast.merge(name, new_name)
            elif new_name != name:
                self.book_cast.rename(name, new_name)
            # Only a gender changed is written (a merge keeps the other's), and after the
            # rename: it is kept under the name the character has now.
            if name in characters and characters[name].gender != gender:
                self.book_cast.set_gender(new_name, gender)

        self._locked(change)

    def find_again(self) -> int:
        """Read the book afresh, keeping the corrections (`BookCast.find_again`): how many
        no longer match."""
        return self._locked(self.book_cast.find_again)

    def reassign(self, key: str, speaker: str | None) -> None:
        """Give the quotation `key` to `speaker` (None: no one, the narrator reads it)."""

        def change() -> None:
            quotes = [q for q in self.book_cast.file.attribution.quotes if quote_key(q) == key]
            if not quotes:
                raise AudiopubError(f"No quotation at {key} in this book")
            self.book_cast.reassign(quotes, speaker)

        self._locked(change)

    def in_context(self, quotes: list[Quote]) -> list[QuoteInContext]:
        """Each quotation with the paragraph around it."""
        chapters = {chapter.index: chapter for chapter in self.book.chapters}
        shown = []
        for quote in quotes:
            chapter = chapters.get(quote.chapter)
            if chapter is None or quote.paragraph >= len(chapter.paragraphs):
                continue
            text = chapter.paragraphs[quote.paragraph]
            shown.append(
                QuoteInContext(
                    quote_key(quote),
                    quote,
                    text[: quote.start],
                    text[quote.start : quote.end],
                    text[quote.end :],
                )
            )
        return shown


def line_to_hear(cast: Cast, name: str) -> str:
    """One of the character's own lines to hear their voice say: the first of a fair length,
    else their longest."""
    lines = [q.text.strip() for q in cast.attribution.of(name) if q.text.strip()]
    if not lines:
        raise AudiopubError(f"{name} has no line to hear")
    low, high = HEARD_CHARS
    fair = [line for line in lines if low <= len(line) <= high]
    return fair[0] if fair else max(lines, key=len)[:high]


class BookCasts:
    """The open casts, by book (`book_key`: the same book uploaded twice is one cast)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self._open: OrderedDict[str, OpenCast] = OrderedDict()
        self._lock = threading.Lock()

    def open(self, epub: Path, book: Book) -> OpenCast:
        """The book's cast; the first time, the book is attributed (a second or two for a
        novel) unless its cast file is kept from before."""
        key = book_key(epub)
        with self._lock:
            opened = self._open.get(key)
            if opened is None:
                opened = OpenCast(BookCast.of(self.data_dir, epub, book, attribute), book)
                self._open[key] = opened
            self._open.move_to_end(key)
            while len(self._open) > KEPT_BOOKS:
                self._open.popitem(last=False)
        opened._locked(lambda: opened.book_cast.file)  # attributed once, under its lock
        return opened
