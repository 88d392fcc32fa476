"""Your own lexicon (`<data dir>/lexicon.tsv`): how to say words in every book.

The entries here come last of every scope (a book's own lexicon and the EPUB's hints win over
them, see `book.lexicons.lexicon`). Hear it and Save use the voice last chosen on the Convert page.
"""

from __future__ import annotations

from nicegui import run, ui

from audiopub import settings as defaults
from audiopub.book.lexicons.lexicon import Entry, layered, user_lexicon_path
from audiopub.jobs.models import JobSettings
from audiopub.ui.components.lexicon_editor import LexiconEditor
from audiopub.ui.engine_catalog import EngineChoice
from audiopub.ui.services import Services
from audiopub.ui.theme import frame, section_title


def page(services: Services) -> None:
    chosen: list[JobSettings] = []  # the voice to speak with, once the engines are known

    def user_scope(edited: list[Entry]) -> list[Entry]:
        return layered((), (), edited)  # no book here: only the user's entries

    with frame(services, "Lexicon", "/lexicon"), ui.card().classes("ap-card w-full gap-3"):
        section_title("Your lexicon", "spellcheck")
        ui.label(
            "How to say words in every book you convert. A book's own lexicon (under the "
            "book on the Convert page) and the EPUB's own hints come first."
        ).classes("ap-muted text-sm")
        voice_line = (
            ui.label("Loading the speech engines…")
            .classes("ap-muted text-sm")
            .mark("lexicon-voice")
        )
        LexiconEditor(
            services,
            user_lexicon_path(services.data_dir),
            lambda: chosen[0] if chosen else None,
            user_scope,
            empty_text="No entries yet: add a word.",
        )

    async def load_voice() -> None:
        catalog = await run.io_bound(services.catalog.engines)
        if catalog is None:  # the app is shutting down
            return
        settings = remembered_voice(services, catalog)
        if settings is None:
            voice_line.set_text(
                "No speech engine can run here: entries are checked for their "
                "form only, and cannot be heard."
            )
            return
        chosen[:] = [settings]
        label = next(c.label for c in catalog if c.name == settings.engine)
        voice_line.set_text(
            f"Heard and checked with {label} · {settings.voice}, the voice "
            "last chosen on the Convert page."
        )

    ui.timer(0.01, load_voice, once=True)


def remembered_voice(services: Services, catalog: tuple[EngineChoice, ...]) -> JobSettings | None:
    """The engine and voice the Convert page remembers, where they can still run; else the
    first that can."""
    saved = services.preferences.get()
    engines = {choice.name: choice for choice in catalog if choice.available}
    engine = engines.get(saved.engine) or next(iter(engines.values()), None)
    if engine is None:
        return None
    voices = [voice.id for voice in engine.voices]
    voice = saved.voice if saved.voice in voices else voices[0]
    return JobSettings(
        engine=engine.name,
        voice=voice,
        speed=saved.speed,
        steps=saved.steps if engine.uses_steps else defaults.DEFAULT_STEPS,
        use_gpu=saved.use_gpu,
    )
