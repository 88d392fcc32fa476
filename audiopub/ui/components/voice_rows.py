"""One line of the Voices page: a voice, its facts, its licence and what can be done with it.

Markers (for tests) carry the voice's id: `voice-piper:de_DE-thorsten-medium`,
`download-…`, `preview-…`, `use-…`, `remove-…`, `licence-…`, `status-…`, `note-…`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from nicegui import ui

from audiopub import figures, settings
from audiopub.tts.registry import engine_info
from audiopub.ui.voice_list import AVAILABLE, INSTALLED, UNFINISHED, VoiceRow

Action = Callable[[VoiceRow], Awaitable[None]]


@dataclass(frozen=True)
class RowActions:
    download: Action
    preview: Action
    remove: Action
    use: Action  # make an installed Supertonic release the one that speaks


def voice_row(row: VoiceRow, actions: RowActions, downloading: str | None) -> None:
    """`downloading`: the id of the voice being downloaded now (no other can start)."""
    with (
        ui.row().classes("ap-chapter-row w-full items-center no-wrap gap-3").mark(f"voice-{row.id}")
    ):
        with ui.column().classes("gap-0 min-w-0 flex-1"):
            with ui.row().classes("items-baseline gap-2 no-wrap min-w-0"):
                ui.label(row.name).classes("font-semibold truncate")
                if row.engine != settings.DEFAULT_ENGINE:  # the others say whose voice it is
                    ui.label(engine_info(row.engine).label).classes("ap-chip")
            ui.label(row.language_label).classes("ap-muted text-sm truncate")
            if row.note:
                ui.label(row.note).classes("ap-muted text-xs").mark(f"note-{row.id}")
        ui.label(row.quality or "").classes("ap-muted text-sm w-16 shrink-0")
        ui.label(_speakers(row.speakers)).classes("ap-muted text-sm w-20 shrink-0")
        ui.label(figures.size(row.size) if row.size else "").classes(
            "ap-figure text-sm w-16 text-right shrink-0"
        ).mark(f"size-{row.id}")
        with ui.element("div").classes("w-16 shrink-0"):
            if row.licence_url:
                ui.link("Licence", row.licence_url, new_tab=True).classes("ap-link text-sm").mark(
                    f"licence-{row.id}"
                )
        _status(row, downloading)
        with ui.row().classes("gap-1 no-wrap shrink-0 w-56 justify-end"):
            _buttons(row, actions, downloading)


def _speakers(count: int | None) -> str:
    return f"{count} speakers" if count and count > 1 else ""


def _status(row: VoiceRow, downloading: str | None) -> None:
    if row.id == downloading:
        text, chip = "downloading", "ap-chip-running"
    elif row.status == INSTALLED:
        text, chip = row.origin or INSTALLED, "ap-chip-done"
    elif row.status == UNFINISHED:
        text, chip = "unfinished", "ap-chip-paused"
    else:
        text, chip = "", ""
    with ui.element("div").classes("w-24 shrink-0"):
        if text:
            ui.label(text).classes(f"ap-chip {chip}").mark(f"status-{row.id}")


def _buttons(row: VoiceRow, actions: RowActions, downloading: str | None) -> None:
    if row.status in (AVAILABLE, UNFINISHED) and row.id != downloading:
        label = "Continue" if row.status == UNFINISHED else "Download"
        button = (
            ui.button(label, icon="download", on_click=lambda: actions.download(row))
            .props("outline dense no-caps")
            .mark(f"download-{row.id}")
        )
        if downloading is not None:  # one download at a time
            button.disable()
            button.tooltip(f"Wait for {downloading} to finish downloading")
    if row.status == INSTALLED and row.voice is not None:
        ui.button("Preview", icon="play_circle", on_click=lambda: actions.preview(row)).props(
            "outline dense no-caps"
        ).mark(f"preview-{row.id}")
    if row.usable:
        ui.button("Use", icon="check_circle", on_click=lambda: actions.use(row)).props(
            "outline dense no-caps"
        ).mark(f"use-{row.id}")
    if row.removable and row.id != downloading:
        label = "Discard" if row.status == UNFINISHED else "Remove"
        ui.button(label, icon="delete_outline", on_click=lambda: actions.remove(row)).props(
            "flat dense no-caps color=negative"
        ).mark(f"remove-{row.id}")
