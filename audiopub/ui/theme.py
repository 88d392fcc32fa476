"""The shared page frame: header with navigation and the dark-mode switch, calm colours.

Every page calls `with frame(services, title, path):` and builds its content inside. Styles
live in `static/audiopub.css` and fonts come with NiceGUI, so nothing is fetched from the
internet.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from nicegui import ui

from audiopub.jobs.store import JobStore
from audiopub.ui.preferences import Preferences
from audiopub.ui.services import Services

PAGES: Final = (
    ("/", "Convert", "auto_stories"),
    ("/library", "Library", "library_music"),
    ("/voices", "Voices", "record_voice_over"),
    ("/lexicon", "Lexicon", "spellcheck"),
)
STORE_CHECK_S: Final = 1.0  # how soon a page says the job store was found damaged
# Dark mode cycles: follow the system → dark → light → follow the system.
DARK_MODES: Final = (
    (None, "brightness_auto", "Theme: follows the system"),
    (True, "dark_mode", "Theme: dark"),
    (False, "light_mode", "Theme: light"),
)


@contextmanager
def frame(services: Services, title: str, path: str) -> Iterator[None]:
    preferences = services.preferences
    ui.page_title(f"{title} · Audiopub")
    ui.colors(
        primary="#3e6e7e",
        secondary="#62767f",
        accent="#b7844b",
        positive="#4d8b61",
        negative="#b4534b",
        warning="#b8902a",
        info="#4a7aa0",
        dark="#1b2125",
        dark_page="#13171a",
    )
    ui.add_head_html('<link rel="stylesheet" href="/static/audiopub.css">')
    dark = ui.dark_mode(preferences.get().dark)

    with (
        ui.header(elevated=False).classes("ap-header"),
        ui.row().classes("w-full max-w-7xl mx-auto items-center no-wrap gap-3 px-4"),
    ):
        ui.image("/static/icon.svg").classes("w-7 h-7").props("no-spinner no-transition")
        ui.label("Audiopub").classes("text-lg font-semibold tracking-wide")
        with ui.row().classes("gap-1 ml-4 no-wrap"):
            for href, label, icon in PAGES:
                active = " ap-nav-active" if href == path else ""
                link = ui.link(target=href).classes(f"ap-nav{active}")
                with link.mark(f"nav-{label.lower()}"):
                    ui.icon(icon).classes("text-lg")
                    ui.label(label)
        ui.space()
        _dark_mode_button(dark, preferences)

    with ui.column().classes("ap-content w-full max-w-7xl mx-auto gap-5"):
        _store_damage_banner(services.store)
        yield


def _store_damage_banner(store: JobStore) -> None:
    """What to do about a damaged job store, on every page, from the moment it is found (by
    the worker, or by a list of jobs)."""
    banner = ui.label().classes("ap-banner ap-error").mark("store-damaged")

    def show() -> None:
        damage = store.db.damage
        banner.set_text(str(damage) if damage is not None else "")
        banner.set_visibility(damage is not None)
        if damage is not None:
            timer.deactivate()  # it stays damaged until a restart

    timer = ui.timer(STORE_CHECK_S, show)
    show()


def _dark_mode_button(dark: ui.dark_mode, preferences: Preferences) -> None:
    def mode_of(value: bool | None) -> tuple[bool | None, str, str]:
        return next(m for m in DARK_MODES if m[0] is value)

    def cycle() -> None:
        index = DARK_MODES.index(mode_of(dark.value))
        value, icon, text = DARK_MODES[(index + 1) % len(DARK_MODES)]
        dark.set_value(value)
        button.props(f"icon={icon}")
        tooltip.set_text(text)
        preferences.update(dark=value)

    _, icon, text = mode_of(dark.value)
    button = ui.button(icon=icon, on_click=cycle).props("flat round").classes("ap-icon-button")
    button.mark("dark-toggle")
    with button:
        tooltip = ui.tooltip(text)


def section_title(text: str, icon: str | None = None) -> None:
    with ui.row().classes("items-center gap-2"):
        if icon:
            ui.icon(icon).classes("ap-muted text-xl")
        ui.label(text).classes("ap-section-title")


def stat(name: str, marker: str) -> ui.label:
    """A small caption over a figure; returns the figure's label, "—" until it is set."""
    with ui.column().classes("gap-0"):
        ui.label(name).classes("ap-stat-label")
        return ui.label("—").classes("ap-stat-value").mark(marker)
