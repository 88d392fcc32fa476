"""The chunks proof-listening still flags after their repairs: where each is in the book, what
it says and what was heard, with a play button where the book can be played from there."""

from __future__ import annotations

from collections.abc import Callable

from nicegui import ui

from audiopub import figures as fmt
from audiopub.jobs.hearings import FlaggedChunk


def flagged_title(count: int) -> str:
    return f"Still flagged after proof-listening: {count} chunk{'' if count == 1 else 's'}"


def flagged_rows(
    flagged: tuple[FlaggedChunk, ...],
    play: Callable[[float], object] | None = None,
    marker: str = "flagged",
) -> None:
    """One row per chunk, in book order; `play(seconds)` starts the book there (a button per
    chunk whose place in the book is known)."""
    for number, chunk in enumerate(flagged, 1):
        with ui.row().classes("w-full no-wrap items-start gap-3").mark(f"{marker}-{number}"):
            if play is not None:
                button = (
                    ui.button(icon="play_arrow", on_click=lambda s=chunk.book_s: play(s))
                    .props("flat round dense")
                    .mark(f"{marker}-play-{number}")
                )
                button.set_enabled(chunk.book_s is not None)
            with ui.column().classes("gap-0 flex-1 min-w-0 text-sm"):
                where = fmt.clock(chunk.book_s) if chunk.book_s is not None else "not joined yet"
                ui.label(
                    f"Chapter {chunk.chapter_idx + 1} “{chunk.chapter_title}” · {where}"
                    f" · {chunk.reason or 'flagged'}"
                ).classes("ap-muted text-xs")
                ui.label(chunk.text).mark(f"{marker}-text")
                ui.label(f"Heard: {chunk.heard or '(nothing)'}").classes("ap-muted").mark(
                    f"{marker}-heard"
                )
