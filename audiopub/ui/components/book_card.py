"""Upload an EPUB and see what will be narrated: cover, title, author, language, chapters,
the names to check (each to hear, and to fix in the book's lexicon) and that lexicon's editor.

The upload is saved under a random name (`uploads.save_upload`) and read in a worker process
(`book_reading`), with the cover as a small thumbnail served by URL; a file that is not a
readable EPUB gets its reason in the page, never a traceback.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from nicegui import events, ui

from audiopub import figures as fmt
from audiopub.book.lexicons.lexicon import Entry, layered, read_if_present, user_lexicon_path
from audiopub.book.lexicons.names import NameCandidate
from audiopub.book.models import Book, Chapter
from audiopub.book.reading import BOOK_SUFFIXES, UPLOAD_TYPES
from audiopub.errors import AudiopubError, StoreDamaged
from audiopub.jobs.models import JobSettings
from audiopub.ui.book_reading import ReadFailed, UploadedBook, remove_thumbnail
from audiopub.ui.components.lexicon_editor import LexiconEditor
from audiopub.ui.services import Services
from audiopub.ui.theme import section_title
from audiopub.ui.uploads import MAX_NAME_CHARS, display_name, save_upload

log = logging.getLogger(__name__)

ROWS_PER_BATCH = 200  # chapter rows built before the event loop gets a turn
# q-uploader's hooks: which files it takes, and what it says of those it refused or could
# not send (each refused file's reason, e.g. "max-file-size", and name).
_NAME_FILTER = f"files => files.filter(file => file.name.length <= {MAX_NAME_CHARS})"
_REJECTED = "(entries) => emit(entries.map(e => [e.failedPropValidation, e.file.name]))"


def _on_failed(uploader: int) -> str:
    """Drops the file it could not send (ready for the next one), then reports it."""
    return (
        f"(info) => {{ runMethod({uploader}, 'removeQueuedFiles', []);"
        " emit(info.xhr.status, info.files.map(file => file.name)); }"
    )


def _on_uploaded(uploader: int) -> str:
    """Drops the file it sent: ready for the next one."""
    return f"() => runMethod({uploader}, 'removeUploadedFiles', [])"


class BookPanel:
    """The book to convert, and which of its chapters to narrate; `voice()` gives the voice
    chosen in the settings panel (None: none yet), to hear names and check the lexicon with."""

    def __init__(
        self,
        services: Services,
        on_change: Callable[[], None],
        voice: Callable[[], JobSettings | None] = lambda: None,
    ) -> None:
        self.services = services
        self.on_change = on_change
        self.voice = voice
        self.book: Book | None = None
        self.lexicon: LexiconEditor | None = None  # the book's, once a book is shown
        self.lexicon_expansion: ui.expansion | None = None
        self.path: Path | None = None
        self.reading: Path | None = None  # an upload being read, not yet shown
        self.thumbnail: str | None = None  # the cover shown, in the reader's thumbnails folder
        self.file_name = ""
        self.speed = 1.0
        self.pace: float | None = None  # the voice's measured pace; None: a rough guess
        self.checkboxes: list[ui.checkbox] = []
        self.durations: list[ui.label] = []
        self._default: set[int] = set()  # the chapters ticked when a book is shown
        limit = services.upload_limit_bytes

        with ui.card().classes("ap-card w-full gap-3").mark("book-panel"):
            section_title("Book", "menu_book")
            self.error = ui.label().classes("ap-banner ap-error").mark("upload-error")
            self.error.set_visibility(False)
            self.upload = (
                ui.upload(
                    label=(
                        "Drop a book here or click to choose one: EPUB, PDF, Word, "
                        f"OpenDocument, FB2, HTML, Markdown or text (up to {fmt.size(limit)})"
                    ),
                    auto_upload=True,
                    max_file_size=limit,
                    max_files=1,
                    on_upload=self._handle_upload,
                )
                .props(f'accept="{UPLOAD_TYPES}" flat')
                .classes("ap-upload")
                .mark("upload")
            )
            # A name the server could not take is refused before a byte is sent.
            self.upload.props(f':filter="{_NAME_FILTER}"')
            self.upload.on("rejected", self._handle_rejected, js_handler=_REJECTED)
            # The uploader is made ready for the next file in the browser, once it has the
            # server's answer: the server ignores a hidden uploader's events (it is hidden when
            # the book is shown, which can come first), and a reset() from the server would
            # abort whatever upload is in flight when its message arrives.
            self.upload.on("failed", self._handle_failed, js_handler=_on_failed(self.upload.id))
            self.upload.on("uploaded", js_handler=_on_uploaded(self.upload.id))
            with ui.row().classes("items-center gap-3") as self.busy:
                ui.spinner(size="1.5em")
                ui.label("Reading the book…").classes("ap-muted")
                self.place = ui.label().classes("ap-muted text-sm").mark("upload-place")
            self.busy.set_visibility(False)
            self.details = ui.column().classes("w-full gap-4").mark("book-card")
            self.details.set_visibility(False)

        ui.context.client.on_delete(self._let_go)

    # --- what the rest of the page asks --------------------------------------------------

    @property
    def lexicon_unsaved(self) -> bool:
        """The book's lexicon has edits a conversion would not use yet."""
        return self.lexicon is not None and self.lexicon.unsaved

    def selected(self) -> list[int]:
        """1-based numbers of the ticked chapters, in book order."""
        return [n for n, box in enumerate(self.checkboxes, start=1) if box.value]

    def set_speed(self, speed: float) -> None:
        """Estimated durations follow the speed slider, at the pace the chosen voice kept in
        the books it finished (a rough guess until it has finished one)."""
        self.speed = speed
        chosen = self.voice()
        try:
            self.pace = (
                self.services.store.ledger.speech_pace(chosen.engine, chosen.voice)
                if chosen is not None and chosen.voice
                else None
            )
        except StoreDamaged:  # estimates at the usual pace; the page's banner says why
            self.pace = None
        if self.book is not None:
            for label, chapter in zip(self.durations, self.book.chapters):
                seconds = fmt.estimate_speech_s(chapter.char_count, speed, self.pace)
                label.set_text(fmt.approx_duration(seconds))
            self._update_summary()

    # --- upload ----------------------------------------------------------------------------

    async def _handle_upload(self, event: events.UploadEventArguments) -> None:
        name = display_name(event.file.name)
        self._show_error(None)
        self.busy.set_visibility(True)
        try:
            path = await save_upload(
                event.file, self.services.uploads_dir, self.services.upload_limit_bytes
            )
        except AudiopubError as exc:
            self.busy.set_visibility(False)
            self._show_error(str(exc))
            return
        self.place.set_text("")
        self.reading = path
        try:
            read = await self.services.reader.read(path, name, self._show_place)
        except asyncio.CancelledError:
            path.unlink(missing_ok=True)
            raise
        except AudiopubError as exc:
            self._fail(path, str(exc))
            return
        except ReadFailed as exc:  # a reader bug must still end in a message, not a dead page
            log.error("reading upload %s (%s) failed:\n%s", path.name, name, exc.details)
            self._fail(path, f"{name} could not be read as a book ({exc})")
            return
        finally:
            self.reading = None
        if self.upload.is_deleted:  # the tab closed while the book was read: nobody will use it
            path.unlink(missing_ok=True)
            remove_thumbnail(self.services.data_dir, read.thumbnail)
            return
        self.busy.set_visibility(False)
        self._discard_upload()
        self.path, self.file_name, self.thumbnail = path, name, read.thumbnail
        if await self._show_book(read) and not self.upload.is_deleted:
            # Only now: a conversion started from half a chapter list would lose chapters.
            self.book = read.book
            self._update_summary()
            self.on_change()

    def _show_place(self, ahead: int | None) -> None:
        if ahead is None:  # its turn has come
            self.place.set_text("")
        else:
            self.place.set_text(
                "next in line, after the books being read"
                if ahead == 0
                else f"{ahead} book{'s' if ahead > 1 else ''} before it in line"
            )

    def _handle_rejected(self, event: events.GenericEventArguments) -> None:
        for reason, name in event.args:
            if reason == "filter":
                self._show_error(
                    f"{display_name(name)}: its name is too long to upload "
                    f"({fmt.count(len(name))} characters; at most "
                    f"{MAX_NAME_CHARS}). Rename the file and choose it again."
                )
                return
        self._show_error(
            f"That file was refused: only books ({', '.join(BOOK_SUFFIXES)}) up to "
            f"{fmt.size(self.services.upload_limit_bytes)} are accepted."
        )

    def _handle_failed(self, event: events.GenericEventArguments) -> None:
        """The browser sent the file and the server refused it (or never answered)."""
        status, names = event.args
        name = display_name(names[0] if names else None)
        answer = f"the server answered HTTP {status}" if status else "the connection was lost"
        self._show_error(f"{name} could not be uploaded ({answer}). Choose it again.")

    def _fail(self, path: Path, message: str) -> None:
        path.unlink(missing_ok=True)
        self.busy.set_visibility(False)
        self._show_error(message)

    def _show_error(self, message: str | None) -> None:
        self.error.set_text(message or "")
        self.error.set_visibility(bool(message))

    def _discard_upload(self) -> None:
        """The upload is only needed until a job copies it; drop it, and its cover's
        thumbnail, when replaced or closed."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None
        remove_thumbnail(self.services.data_dir, self.thumbnail)
        self.thumbnail = None

    def _let_go(self) -> None:
        """The tab is gone: its upload and thumbnail go, and its book now, not when Python
        next looks for cycles among the page's elements (which may be long after, with a
        book's text and cover held meanwhile). The rest of the page, and the memory, go with
        the tab (`memory.release_soon`). An upload still being read goes too: a PDF's page
        reader stops as soon as its file is gone."""
        if self.reading is not None:
            self.reading.unlink(missing_ok=True)
        self._discard_upload()
        self.book = None
        if self.lexicon is not None:
            self.lexicon.book = None

    def clear(self) -> None:
        self._discard_upload()
        self.book, self.lexicon, self.lexicon_expansion = None, None, None
        self.checkboxes, self.durations = [], []
        self.details.clear()
        self.details.set_visibility(False)
        self.upload.set_visibility(True)
        self.on_change()

    # --- the card --------------------------------------------------------------------------

    async def _show_book(self, read: UploadedBook) -> bool:
        """Build the card; False if it went away while its chapter list was being built."""
        book, names = read.book, read.names
        self.upload.set_visibility(False)
        self.details.clear()
        self.checkboxes, self.durations = [], []
        with self.details:
            with ui.row().classes("w-full gap-5 no-wrap items-start"):
                with ui.element("div").classes("ap-cover").mark("book-cover"):
                    if read.thumbnail is not None:
                        ui.image(f"/covers/{read.thumbnail}").classes("w-full h-full").props(
                            "fit=cover no-spinner"
                        )
                    else:
                        ui.icon("menu_book").classes("text-5xl ap-muted")
                with ui.column().classes("gap-1 min-w-0 flex-1"):
                    ui.label(book.title).classes("text-xl font-semibold").mark("book-title")
                    ui.label(book.author or "Unknown author").classes("ap-muted").mark(
                        "book-author"
                    )
                    with ui.row().classes("items-center gap-2 mt-1"):
                        ui.label(book.language or "language not stated").classes("ap-chip").mark(
                            "book-language"
                        )
                        ui.label(self.file_name).classes("ap-muted text-xs truncate")
                    self.summary = ui.label().classes("ap-muted text-sm mt-2").mark("book-summary")
                    with ui.row().classes("gap-2 mt-2"):
                        ui.button("All", on_click=lambda: self._tick_all(True)).props(
                            "flat dense no-caps"
                        ).mark("select-all")
                        ui.button("None", on_click=lambda: self._tick_all(False)).props(
                            "flat dense no-caps"
                        ).mark("select-none")
                        ui.button("Another book", icon="swap_horiz", on_click=self.clear).props(
                            "flat dense no-caps"
                        ).mark("another-book")
            if book.warnings:  # read anyway, but the user should know what was left out
                _warnings(book.warnings)
            if names:  # to check before hours of synthesis (docs/lexicons-and-spoken-forms.md)
                _names(names, self._hear_name, self._fix_name)
            self._lexicon_editor(book, read.lexicon_path)
            chapter_list = ui.column().classes("ap-chapters gap-0").mark("chapter-list")
        self.details.set_visibility(True)
        self._default = set(book.default_selection)
        # A row is four elements, and a book can have 9,000 chapters: the rows are built a
        # batch at a time, and the event loop serves the other tabs in between.
        for start in range(0, len(book.chapters), ROWS_PER_BATCH):
            with chapter_list:
                for number in range(start + 1, min(start + ROWS_PER_BATCH, len(book.chapters)) + 1):
                    self._chapter_row(number, book.chapters[number - 1])
            await asyncio.sleep(0)
            if chapter_list.is_deleted:  # "Another book", or the tab closed
                return False
        return True

    def _chapter_row(self, number: int, chapter: Chapter) -> None:
        with ui.row().classes("ap-chapter-row items-center no-wrap gap-2"):
            # Title pages and dedications are listed unticked, as `convert` leaves them out.
            box = ui.checkbox(
                chapter.title,
                value=chapter.index + 1 in self._default,
                on_change=self._chapters_changed,
            )
            box.classes("flex-1 min-w-0").mark(f"chapter-{number}")
            ui.label(f"{fmt.count(chapter.char_count)} chars").classes(
                "ap-muted text-sm ap-figure"
            ).mark(f"chapter-chars-{number}")
            duration = ui.label(
                fmt.approx_duration(
                    fmt.estimate_speech_s(chapter.char_count, self.speed, self.pace)
                )
            )
            duration.classes("ap-muted text-sm ap-figure w-24 text-right")
            duration.mark(f"chapter-duration-{number}")
        self.checkboxes.append(box)
        self.durations.append(duration)

    def _lexicon_editor(self, book: Book, path: Path) -> None:
        data_dir = self.services.data_dir
        pronunciations = book.pronunciations  # not the whole book: `_let_go` drops it

        def layers(edited: list[Entry]) -> list[Entry]:
            # As a job of this book would have them: the rows are the book's file.
            return layered(edited, pronunciations, read_if_present(user_lexicon_path(data_dir)))

        with (
            ui.expansion(
                "How to say words in this book",
                icon="spellcheck",
                caption="This book's lexicon: every conversion of it says these "
                "words so, before your own lexicon's",
            )
            .classes("w-full ap-expansion text-sm")
            .mark("book-lexicon") as expansion
        ):
            self.lexicon = LexiconEditor(
                self.services,
                path,
                self.voice,
                layers,
                book,
                empty_text="No entries yet: add a word, or press Fix beside a name above.",
                on_change=self.on_change,
            )
        self.lexicon_expansion = expansion

    async def _hear_name(self, name: NameCandidate) -> None:
        if self.lexicon is not None and self.lexicon_expansion is not None:
            self.lexicon_expansion.open()  # where the player and any message are
            await self.lexicon.hear(name.word, name.example)

    def _fix_name(self, name: NameCandidate) -> None:
        if self.lexicon is not None and self.lexicon_expansion is not None:
            self.lexicon_expansion.open()
            self.lexicon.add(name.word)

    def _tick_all(self, value: bool) -> None:
        for box in self.checkboxes:
            box.value = value  # each box's on_change updates the summary

    def _chapters_changed(self) -> None:
        self._update_summary()
        self.on_change()

    def _update_summary(self) -> None:
        if self.book is None:
            return
        chosen = [self.book.chapters[n - 1] for n in self.selected()]
        chars = sum(c.char_count for c in chosen)
        total = len(self.book.chapters)
        source = (
            "at this voice's pace in the books it finished"
            if self.pace
            else "a rough guess, until this voice has finished a book"
        )
        self.summary.set_text(
            f"{len(chosen)} of {total} chapters · {fmt.count(chars)} characters · "
            f"{fmt.approx_duration(fmt.estimate_speech_s(chars, self.speed, self.pace))} of "
            f"audio ({source})"
            if chosen
            else f"No chapters selected (of {total})"
        )


def _names(
    names: list[NameCandidate],
    hear: Callable[[NameCandidate], Awaitable[None]],
    fix: Callable[[NameCandidate], None],
) -> None:
    with (
        ui.expansion(
            f"Names to check: {', '.join(n.word for n in names[:5])}"
            + (" …" if len(names) > 5 else ""),
            icon="record_voice_over",
            caption="Words the voice may not know, most frequent first; a lexicon "
            "entry says how to pronounce one",
        )
        .classes("w-full ap-expansion text-sm")
        .mark("book-names")
    ):
        for name in names:
            with ui.row().classes("w-full no-wrap gap-3 items-baseline").mark("book-name"):
                ui.label(name.word).classes("font-semibold w-40 shrink-0 truncate")
                ui.label(f"{name.count}×").classes("ap-muted ap-figure w-10 shrink-0")
                ui.button(icon="volume_up", on_click=lambda n=name: hear(n)).props(
                    'flat dense round size=sm aria-label="Hear it"'
                ).classes("shrink-0").tooltip("Hear it: the name, then this sentence").mark(
                    f"name-hear-{name.word}"
                )
                ui.button("Fix", icon="edit", on_click=lambda n=name: fix(n)).props(
                    "flat dense no-caps size=sm"
                ).classes("shrink-0").tooltip("Add it to this book's lexicon").mark(
                    f"name-fix-{name.word}"
                )
                ui.label(name.example).classes("ap-muted text-xs min-w-0")


def _warnings(warnings: tuple[str, ...]) -> None:
    count = len(warnings)
    with (
        ui.expansion(
            f"{count} note{'s' if count > 1 else ''} on reading this book",
            icon="info_outline",
            caption=warnings[0],
        )
        .classes("w-full ap-banner ap-warn ap-expansion text-sm")
        .mark("book-warnings")
    ):
        for warning in warnings:
            ui.label(warning).classes("text-sm").style("white-space: pre-line").mark("book-warning")
