"""The Cast panel of the Convert page: with its switch on, the book's characters are read each
in a voice of their own (docs/cast.md).

Once a book is uploaded and the switch is on, the book is attributed off the event loop (a
second or two for a novel; then kept in its cast file) and its characters are listed with
their lines and gender, a voice each from the chosen engine's voices in the book's language
(the narrator's own among them), a Hear button speaking one of their lines in that voice,
renaming (or merging, under another character's name) and their quotations in context, each
of which can be given to another character or to the narrator. Every change is saved to the
book's cast file (`BookCast`), which is what Generate then speaks with. Find again has the
finder read the book afresh, the changes kept. With an engine of one voice the characters are
listed all the same, without voices, beside what a cast of voices needs.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Final

from nicegui import ui

from audiopub.book.models import Book
from audiopub.book.voicing import Voicing
from audiopub.jobs.models import JobSettings
from audiopub.tts.engine import Voice
from audiopub.ui.blocking import run_blocking
from audiopub.ui.book_casts import OpenCast, QuoteInContext, line_to_hear
from audiopub.ui.components.audio_player import AudioPlayer
from audiopub.ui.components.settings_panel import SettingsPanel
from audiopub.ui.services import Services
from audiopub.ui.theme import section_title
from audiopub.voices.casting import NO_ONE_SPEAKS, Cast, cast_voices, speaking_order

NARRATOR_CHOICE: Final = "\u2063narrator"  # the speaker select's "no speaker" (no name is it)
QUOTES_SHOWN: Final = 200  # a character's quotations listed at once
GENDERS: Final = {"female": "female", "male": "male", "": "unknown"}
# Said where the engine has only the narrator's voice: the characters are listed all the same.
CAST_NEEDS: Final = (
    "A cast of voices needs Kokoro or a multi-speaker Piper voice: download one on the Voices "
    "page. Until then each character is listed with their lines, to check and correct."
)


class CastPanel:
    """The switch, and the cast of the book shown once it is on."""

    def __init__(
        self, services: Services, settings: SettingsPanel, on_change: Callable[[], None]
    ) -> None:
        self.services = services
        self.settings = settings
        self.on_change = on_change
        self.path: Path | None = None
        self.book: Book | None = None
        self.opened: OpenCast | None = None  # the book's cast, once attributed
        self.cast: Cast | None = None  # as spoken with the engine and narrator chosen
        self.voiced = False  # the engine has voices for the characters
        self._shown_for: tuple[object, ...] = ()  # what the cast shown was made for
        self._loading = 0  # loads started: only the latest one's result is shown
        self._loading_for: tuple[object, ...] = ()  # what the load under way is for

        with ui.card().classes("ap-card w-full gap-3").mark("cast-panel") as self.card:
            section_title("Cast of voices", "groups")
            self.switch = ui.switch(
                "Read each character's dialogue in a voice of their own",
                value=False,
                on_change=self._switched,
            ).mark("cast-switch")
            self.hint = ui.label().classes("ap-muted text-sm").mark("cast-hint")
            with ui.row().classes("items-center gap-3") as self.busy:
                ui.spinner(size="1.5em")
                ui.label("Finding who speaks…").classes("ap-muted")
            self.busy.set_visibility(False)
            self.error = ui.label().classes("ap-banner ap-error").mark("cast-error")
            self.error.set_visibility(False)
            with ui.row().classes("items-center gap-2") as self.summary_row:
                self.summary = ui.label().classes("ap-muted text-sm").mark("cast-summary")
                self.again = ui.button("Find again", icon="refresh", on_click=self._find_again)
                self.again.props("flat dense no-caps").mark("cast-again")
                self.again.tooltip("Read the book afresh for who speaks, keeping your changes")
            self.rows = ui.column().classes("w-full gap-2").mark("cast-characters")
            self.audio = AudioPlayer("cast-audio")
        self._show_state()
        ui.context.client.on_delete(self._let_go)

    def _let_go(self) -> None:
        """The tab is gone: the book and its cast go now, as the book panel lets go of its
        book, not when Python next looks for cycles among the page's elements."""
        self.path, self.book, self.opened, self.cast = None, None, None, None

    # --- what the page asks ----------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        """Generate speaks with the cast."""
        return bool(self.switch.value) and self.book is not None

    async def voicing(self, settings: JobSettings, show: Callable[[str], None]) -> Voicing | None:
        """What the job keeps of the cast (None where it failed: said through `show`)."""
        if self.path is None or self.book is None:
            return None
        path, book = self.path, self.book

        def make() -> Voicing:
            opened = self.services.casts.open(path, book)
            return opened.voicing(settings.engine, settings.use_gpu, settings.voice or "")

        return await run_blocking(make, show=show, failing="Casting the book failed")

    def follow(self, path: Path | None, book: Book | None) -> None:
        """The book shown and the settings as they are now: the cast follows them."""
        if path != self.path:
            self.path, self.book = path, book
            self.opened = self.cast = None
            self._shown_for = ()
            self.rows.clear()  # another book's characters
        self._show_state()
        wanted = self._wanted()
        if self.switch.value and wanted not in (self._shown_for, self._loading_for):
            with self.card:
                ui.timer(0.01, self._load, once=True)

    # --- loading ---------------------------------------------------------------------------

    def _wanted(self) -> tuple[object, ...]:
        return (self.path, self.settings.engine.value, self.settings.voice.value)

    def _switched(self) -> None:
        self.follow(self.path, self.book)
        self.on_change()

    def _show_state(self) -> None:
        on = bool(self.switch.value)
        if self.book is None:
            self.hint.set_text("Upload a book to see who speaks in it." if on else "")
        elif on and not self.settings.ready:
            self.hint.set_text("Choose an engine and a voice for the narrator.")
        else:
            self.hint.set_text("")
        self.hint.set_visibility(bool(self.hint.text))
        visible = on and self.book is not None
        self.rows.set_visibility(visible)
        self.summary_row.set_visibility(visible and self.cast is not None)
        if not on:
            self.error.set_visibility(False)

    async def _load(self) -> None:
        """Attribute the book (once) and cast it with the engine and narrator chosen."""
        if not self.switch.value or self.path is None or self.book is None:
            return
        if not self.settings.ready:
            return
        wanted = self._wanted()
        path, book = self.path, self.book
        engine, narrator = self.settings.engine.value, self.settings.voice.value
        self._loading += 1
        mine = self._loading
        self._loading_for = wanted
        self.busy.set_visibility(True)
        self.error.set_visibility(False)

        def load() -> tuple[OpenCast, tuple[Cast, bool]]:
            opened = self.services.casts.open(path, book)
            return opened, opened.cast(engine, narrator)

        try:
            loaded = await run_blocking(load, show=self._failed, failing="Casting the book failed")
        finally:
            if mine == self._loading:
                self.busy.set_visibility(False)
                self._loading_for = ()
        if loaded is None or mine != self._loading or wanted != self._wanted():
            return
        self.opened, (self.cast, self.voiced) = loaded
        self._shown_for = wanted
        self._show_cast()

    async def _recast(self) -> None:
        """The cast again after a change saved to its file."""
        self._shown_for = self._loading_for = ()
        await self._load()

    async def _find_again(self) -> None:
        """The finder reads the book afresh (a newer Audiopub may find more); the changes made
        here are kept."""
        if self.opened is None:
            return
        unmatched = await run_blocking(
            self.opened.find_again,
            show=self._failed,
            failing="Finding the cast failed",
            busy=self.again,
        )
        if unmatched:
            ui.notify(
                f"{unmatched} of your changes name a character or line not found this time; "
                "they are kept in the book's cast file"
            )
        if unmatched is not None:
            await self._recast()

    def _failed(self, message: str) -> None:
        self.error.set_text(message)
        self.error.set_visibility(True)

    # --- the characters --------------------------------------------------------------------

    def _show_cast(self) -> None:
        cast = self.cast
        assert cast is not None
        self.summary.set_text(cast.summary() if self.voiced else CAST_NEEDS)
        self._show_state()
        self.rows.clear()
        characters = speaking_order(cast.attribution.characters)
        with self.rows:
            if not characters:
                sentence = f"{NO_ONE_SPEAKS[0].upper()}{NO_ONE_SPEAKS[1:]}."
                ui.label(sentence).classes("ap-muted").mark("cast-empty")
            for index, character in enumerate(characters):
                with ui.row().classes("w-full items-center gap-3 no-wrap").mark("cast-character"):
                    with ui.column().classes("gap-0 w-48 min-w-0"):
                        ui.label(character.name).classes("font-semibold truncate").mark(
                            "cast-name", f"cast-name-{index}"
                        )
                        lines = f"{character.lines} line{'' if character.lines == 1 else 's'}"
                        gender = character.gender or "gender unknown"
                        ui.label(f"{lines} · {gender}").classes("ap-muted text-sm").mark(
                            f"cast-facts-{index}"
                        )
                    if self.voiced:
                        self._voice_row(cast, character.name, index)
                    else:
                        ui.space()
                    ui.button(
                        icon="edit",
                        on_click=lambda _, name=character.name: self._edit(name),
                    ).props("flat round dense").tooltip("Rename, merge into another, gender").mark(
                        f"cast-rename-{index}"
                    )
                    ui.button(
                        icon="format_quote",
                        on_click=lambda _, name=character.name: self._show_quotes(name),
                    ).props("flat round dense").tooltip("Their lines, to reassign").mark(
                        f"cast-quotes-{index}"
                    )

    def _voice_row(self, cast: Cast, name: str, index: int) -> None:
        """A character's voice, to choose, and a line of theirs to hear in it."""
        voice = cast.voices.get(name, cast.narrator)
        ui.select(
            self._voice_options(cast, voice),
            value=voice,
            label=f"Voice for {name}",
            with_input=True,
            on_change=lambda e: self._set_voice(name, e.value),
        ).classes("flex-1 min-w-[12rem]").props("outlined dense").mark(f"cast-voice-{index}")
        hear = ui.button("Hear", icon="play_circle").props("outline no-caps")
        hear.mark(f"cast-hear-{index}")
        hear.on_click(lambda: self._hear(name, hear))

    def _voice_options(self, cast: Cast, current: str) -> dict[str, str]:
        """The engine's voices a character may take (the book's language, the narrator's
        sample rate; mixes where the engine mixes), the narrator's own first."""
        choice = self.settings.engines.get(cast.engine)
        voices: list[Voice] = list(choice.voices) if choice is not None else []
        narrator = next((v for v in voices if v.id == cast.narrator), None)
        options = {cast.narrator: f"{cast.narrator} (the narrator's voice)"}
        if narrator is not None:
            language = self.book.language if self.book is not None else None
            for voice in cast_voices(voices, narrator, language):
                options[voice.id] = f"{voice.name} · {voice.language}"
        options.setdefault(current, current)
        return options

    async def _set_voice(self, name: str, voice: str) -> None:
        if self.opened is None or self.cast is None or not voice:
            return
        if self.cast.voices.get(name) == voice:
            return
        saved = await run_blocking(
            self._saved(self.opened.set_voice),
            name,
            voice,
            self.cast.engine,
            show=self._failed,
            failing="Saving the voice failed",
        )
        if saved:
            await self._recast()

    @staticmethod
    def _saved(change: Callable[..., None]) -> Callable[..., bool]:
        """`change`, saying True once it is done (run_blocking's None says it failed)."""

        def done(*args: object) -> bool:
            change(*args)
            return True

        return done

    async def _hear(self, name: str, button: ui.button) -> None:
        cast = self.cast
        if cast is None or not self.settings.ready:
            return
        settings = self.settings.job_settings(None)
        voice = cast.voices.get(name, cast.narrator)
        language = self.book.language if self.book is not None else None

        def speak() -> bytes:
            return self.services.previews.say(
                [line_to_hear(cast, name)],
                cast.engine,
                voice,
                settings.speed,
                settings.steps,
                language=language,
            )

        await self.audio.speak(speak, show=self._failed, failing="Hearing it failed", busy=button)

    async def _edit(self, name: str) -> None:
        """Rename (or merge) a character and say their gender."""
        if self.opened is None or self.cast is None:
            return
        characters = {c.name: c for c in self.cast.attribution.characters}
        others = [other for other in characters if other != name]
        with ui.dialog() as dialog, ui.card().classes("ap-card gap-3 min-w-[20rem]"):
            ui.label(name).classes("font-semibold")
            ui.label("Give the name of another character to make the two one (a merge).").classes(
                "ap-muted text-sm"
            )
            field = (
                ui.input("Name", value=name, autocomplete=others)
                .classes("w-full")
                .props("outlined dense")
                .mark("cast-rename-input")
            )
            gender = (
                ui.select(GENDERS, value=characters[name].gender or "", label="Gender")
                .classes("w-full")
                .props("outlined dense")
                .mark("cast-gender-input")
            )
            with ui.row().classes("w-full justify-end gap-2"):
                ui.button("Cancel", on_click=lambda: dialog.submit(None)).props("flat no-caps")
                ui.button(
                    "Save", on_click=lambda: dialog.submit((field.value, gender.value))
                ).props("unelevated no-caps").mark("cast-rename-save")
        answer = await dialog
        dialog.delete()
        if not answer or self.opened is None:
            return
        new_name, new_gender = answer
        saved = await run_blocking(
            self._saved(self.opened.edit),
            name,
            str(new_name or ""),
            new_gender or None,
            show=self._failed,
            failing="Saving the character failed",
        )
        if saved:
            await self._recast()

    # --- quotations ------------------------------------------------------------------------

    async def _show_quotes(self, name: str) -> None:
        opened, cast = self.opened, self.cast
        if opened is None or cast is None:
            return
        quotes = list(cast.attribution.of(name))[:QUOTES_SHOWN]
        shown = await run_blocking(
            opened.in_context, quotes, show=self._failed, failing="Showing the lines failed"
        )
        if shown is None:
            return
        speakers = {NARRATOR_CHOICE: "No speaker (the narrator reads it)"}
        speakers.update({c.name: c.name for c in speaking_order(cast.attribution.characters)})
        changed = False
        with (
            ui.dialog().props("maximized=false") as dialog,
            ui.card().classes("ap-card gap-3 w-full max-w-3xl").mark("cast-quotes"),
        ):
            ui.label(f"{name}'s lines").classes("font-semibold")
            ui.label("Each in its paragraph. Give a line to whoever really says it.").classes(
                "ap-muted text-sm"
            )
            with ui.scroll_area().classes("w-full h-[60vh]"):
                for index, quote in enumerate(shown):
                    with ui.row().classes("w-full items-start gap-3 no-wrap"):
                        ui.html(_highlighted(quote)).classes("flex-1 text-sm").mark(
                            f"cast-quote-{index}"
                        )

                        async def reassign(event: object, key: str = quote.key) -> None:
                            nonlocal changed
                            value = getattr(event, "value", None)
                            speaker = None if value == NARRATOR_CHOICE else value
                            done = await run_blocking(
                                self._saved(opened.reassign),
                                key,
                                speaker,
                                show=self._failed,
                                failing="Reassigning the line failed",
                            )
                            changed = changed or bool(done)

                        ui.select(
                            speakers, value=name, label="Said by", on_change=reassign
                        ).classes("w-56").props("outlined dense").mark(
                            f"cast-quote-speaker-{index}"
                        )
            ui.button("Close", on_click=dialog.close).props("unelevated no-caps").mark(
                "cast-quotes-close"
            )
        await dialog
        dialog.delete()
        if changed:
            await self._recast()


def _highlighted(quote: QuoteInContext) -> str:
    """The paragraph as HTML, the quotation marked."""
    before, said, after = (
        html.escape(part, quote=False) for part in (quote.before, quote.said, quote.after)
    )
    return f"{before}<mark class='ap-said'>{said}</mark>{after}"
