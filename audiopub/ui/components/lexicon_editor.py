"""One pronunciation lexicon file in the page: rows to edit, "Hear it", and Save.

Each row is an entry (written form, how to say it — a respelling or /IPA/ —, the `case` and
`regex` options). "Hear it" speaks a word alone, then its first sentence in the book, in the
voice chosen in the settings panel, with the rows as they are now (saved or not) counting as
they would in a job: `layers` puts them among the other scopes (see `book.lexicons.lexicon`). Save
checks every row, and against that voice, before the file is written (`book.lexicons.lexicon_file`,
which keeps the file's comments); a bad row shows its message here and nothing is written.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path

from nicegui import run, ui

from audiopub.book.lexicons.lexicon import Entry
from audiopub.book.lexicons.lexicon_file import LexiconFile, Row, load, save
from audiopub.book.lexicons.names import first_use
from audiopub.book.models import Book
from audiopub.errors import AudiopubError, LexiconError
from audiopub.jobs.models import JobSettings
from audiopub.ui.blocking import run_blocking
from audiopub.ui.components.audio_player import AudioPlayer
from audiopub.ui.services import Services


class LexiconEditor:
    """`voice()` gives the settings to speak and check with (None: no voice is chosen yet);
    `layers(rows' entries)` gives every scope's entries in order (blocking: it may read
    files); `book` is where examples are found and whose language the rules follow;
    `on_change()` is called when `unsaved` changes."""

    def __init__(
        self,
        services: Services,
        path: Path,
        voice: Callable[[], JobSettings | None],
        layers: Callable[[list[Entry]], list[Entry]],
        book: Book | None = None,
        empty_text: str = "No entries yet.",
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self.services = services
        self.path = path
        self.voice = voice
        self.layers = layers
        self.book = book
        self.empty_text = empty_text
        self.on_change = on_change
        self.file: LexiconFile | None = None  # None until loaded, or when it can't be
        self.unsaved = False  # rows changed since loaded or saved: a job would not see them yet
        self.says: list[ui.input] = []

        with ui.column().classes("w-full gap-2").mark("lexicon-editor"):
            self.error = ui.label().classes("ap-banner ap-error w-full").mark("lexicon-error")
            self.error.style("white-space: pre-line")
            self.error.set_visibility(False)
            self.audio = AudioPlayer("lexicon-audio")
            self.rows = ui.column().classes("w-full gap-1").mark("lexicon-rows")
            with ui.row().classes("items-center gap-2"):
                self.add_button = ui.button("Add a word", icon="add", on_click=lambda: self.add())
                self.add_button.props("flat dense no-caps").mark("lexicon-add")
                self.save_button = ui.button("Save", icon="save", on_click=self._save)
                self.save_button.props("outline dense no-caps").mark("lexicon-save")
                ui.button(icon="refresh", on_click=self._load).props(
                    'flat dense round aria-label="Reload"'
                ).tooltip("Reload the file (changes not saved are dropped)").mark("lexicon-reload")
                self.unsaved_label = (
                    ui.label("Not saved yet").classes("ap-muted text-sm").mark("lexicon-unsaved")
                )
                self.unsaved_label.set_visibility(False)
                ui.label(str(path)).classes("ap-muted text-xs truncate").mark("lexicon-path")
        self._enable(False)
        ui.timer(0.01, self._load, once=True)

    # --- what the page asks ------------------------------------------------------------------

    def add(self, written: str = "") -> None:
        """A new row for `written`, or the row it already has; the cursor goes to how to say it."""
        if self.file is None:
            return
        existing = [
            i
            for i, row in enumerate(self.file.rows)
            if written and row.written.strip().casefold() == written.casefold()
        ]
        if not existing:
            self.file.add(written)
            self._changed()
            self._show_rows()
        index = existing[0] if existing else len(self.file.rows) - 1
        self.says[index].run_method("focus")

    async def hear(self, word: str, example: str = "") -> None:
        """`word` alone, then `example`, said with the rows as they are now."""
        await self._speak(lambda: [word, example], self._snapshot())

    # --- loading and the rows ------------------------------------------------------------------

    async def _load(self) -> None:
        self._show_error(None)
        try:
            loaded = await run.io_bound(load, self.path)
        except LexiconError as exc:
            self.file = None  # nothing to edit, nothing to save over the file
            self._enable(False)
            self._set_unsaved(False)
            self._show_rows()
            self._show_error(f"{exc}\nThis file can't be edited here until it is fixed.")
            return
        if loaded is None:  # the app is shutting down
            return
        self.file = loaded
        self._set_unsaved(False)
        self._enable(True)
        self._show_rows()

    def _show_rows(self) -> None:
        self.rows.clear()
        self.says = []
        with self.rows:
            if self.file is None:
                return
            if not self.file.rows:
                ui.label(self.empty_text).classes("ap-muted text-sm").mark("lexicon-empty")
            for number, row in enumerate(self.file.rows, start=1):
                self._row(number, row)

    def _row(self, number: int, row: Row) -> None:
        def set_field(name: str, value: object) -> None:
            setattr(row, name, value)
            self._changed()

        with ui.row().classes("w-full items-center no-wrap gap-2").mark("lexicon-row"):
            ui.label(str(number)).classes("ap-muted ap-figure w-6 text-right")
            ui.input(
                "Written", value=row.written, on_change=lambda e: set_field("written", e.value)
            ).props("dense outlined").classes("flex-1 min-w-0").mark(f"lexicon-written-{number}")
            say = ui.input(
                "How to say it",
                value=row.say,
                placeholder="her-MY-oh-nee or /IPA/",
                on_change=lambda e: set_field("say", e.value),
            )
            say.props("dense outlined").classes("flex-1 min-w-0").mark(f"lexicon-say-{number}")
            self.says.append(say)
            ui.checkbox(
                "case", value=row.case, on_change=lambda e: set_field("case", e.value)
            ).tooltip("Match the case exactly").mark(f"lexicon-case-{number}")
            ui.checkbox(
                "regex", value=row.regex, on_change=lambda e: set_field("regex", e.value)
            ).tooltip("The written form is a regular expression").mark(f"lexicon-regex-{number}")
            # Icon buttons: the label is what a screen reader (and a browser test) finds.
            hear = (
                ui.button(icon="volume_up")
                .props('flat dense round aria-label="Hear it"')
                .tooltip("Hear it: the word, then its first sentence in the book")
                .mark(f"lexicon-hear-{number}")
            )
            hear.on_click(lambda: self._hear_row(number - 1, hear))
            ui.button(icon="delete_outline", on_click=lambda: self._delete(number - 1)).props(
                'flat dense round aria-label="Delete"'
            ).tooltip("Delete this row").mark(f"lexicon-delete-{number}")

    def _delete(self, index: int) -> None:
        if self.file is not None:
            self.file.delete(index)  # its comments go to the next row
            self._changed()
            self._show_rows()

    def _changed(self) -> None:
        self._set_unsaved(True)

    def _set_unsaved(self, unsaved: bool) -> None:
        if unsaved != self.unsaved:
            self.unsaved = unsaved
            self.unsaved_label.set_visibility(unsaved)
            self.on_change()

    def _enable(self, enabled: bool) -> None:
        self.add_button.set_enabled(enabled)
        self.save_button.set_enabled(enabled)

    def _snapshot(self) -> LexiconFile:
        """The rows as they are now, for a worker thread (typing goes on meanwhile); none
        when the file could not be loaded."""
        return copy.deepcopy(self.file) or LexiconFile()

    # --- hearing -------------------------------------------------------------------------------

    async def _hear_row(self, index: int, button: ui.button) -> None:
        if self.file is None or index >= len(self.file.rows):
            return
        row = copy.deepcopy(self.file.rows[index])
        button.props("loading")
        try:
            await self._speak(lambda: self._row_texts(row), self._snapshot())
        finally:
            button.props(remove="loading")

    def _row_texts(self, row: Row) -> list[str]:
        """A row's word alone and its first sentence in the book (blocking: searches it)."""
        written = row.written.strip()
        if not written:
            raise AudiopubError("Write the word or phrase first")
        try:
            pattern = Entry(written, "", case=row.case, regex=row.regex).pattern()
        except re.error as exc:
            raise LexiconError(f"{written!r} is not a regular expression ({exc})") from None
        found = first_use(self.book, pattern) if self.book is not None else None
        if row.regex:
            if found is None:
                raise AudiopubError(
                    f"{written!r} is a regular expression, and "
                    + (
                        "nothing in the book matches it"
                        if self.book
                        else "there is no book to find what it matches in"
                    )
                )
            return list(found)
        return [written, found[1]] if found else [written]

    async def _speak(self, texts: Callable[[], list[str]], rows: LexiconFile) -> None:
        """Say `texts()` (blocking: may search the book) with `rows` among the scopes."""
        settings = self.voice()
        if settings is None:
            self._show_error("Choose an engine and a voice first")
            return
        self._show_error(None)

        def speak() -> bytes:
            # Rows still being typed don't count yet; a complete row must be right.
            entries = rows.entries(str(self.path), complete_only=True)
            return self.services.previews.say(
                texts(),
                settings.engine,
                settings.voice or "",
                settings.speed,
                settings.steps,
                self.layers(entries),
                self.book.language if self.book is not None else None,
            )

        await self.audio.speak(speak, show=self._show_error, failing="Speaking failed")

    # --- saving --------------------------------------------------------------------------------

    async def _save(self) -> None:
        if self.file is None:
            return
        settings = self.voice()
        rows = self._snapshot()

        def check(entries: list[Entry]) -> None:
            if settings is not None:  # else only the file's own rules: no voice to ask
                self.services.previews.check_lexicon(entries, settings.engine, settings.voice or "")

        self._show_error(None)
        entries = await run_blocking(
            save,
            self.path,
            rows,
            check,
            show=self._show_error,
            failing="Saving failed",
            busy=self.save_button,
        )
        if entries is None or self.file is None:  # said, shutting down, or reloaded meanwhile
            return
        self.file.loaded_text = rows.loaded_text  # what is on disk now
        self._set_unsaved(self.file.text() != rows.text())  # typed on while it saved
        count = len(entries)
        ui.notify(f"Saved {count} entr{'y' if count == 1 else 'ies'}", type="positive")

    def _show_error(self, message: str | None) -> None:
        self.error.set_text(message or "")
        self.error.set_visibility(bool(message))
