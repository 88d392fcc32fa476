"""What to make besides the .m4b, chosen before converting: the options of `audiopub convert`
(`--format`, `--split`, `--subtitles`, `--read-along`), refused with the command line's words
when they can't go together. The choice travels with the job (`JobSettings.forms`); the
library makes the forms from the book's audio once it is finished (`ui.chosen_forms`).
"""

from __future__ import annotations

from collections.abc import Callable

from nicegui import ui

from audiopub.errors import AudiopubError
from audiopub.export.forms import ConvertOutputs
from audiopub.ui.chosen_forms import AUDIO_CHOICES, SPLIT_CHOICES
from audiopub.ui.theme import section_title


class FormsPanel:
    def __init__(self, on_change: Callable[[], None]) -> None:
        self.on_change = on_change
        with ui.card().classes("ap-card w-full gap-3").mark("forms-panel"):
            section_title("Also make", "library_add")
            with ui.row().classes("w-full items-center gap-4"):
                self.audio = (
                    ui.select(AUDIO_CHOICES, value="m4b", label="Audio", on_change=self._changed)
                    .classes("w-56")
                    .props("outlined dense")
                    .mark("forms-audio")
                )
                self.split = (
                    ui.select(SPLIT_CHOICES, value="none", label="Files", on_change=self._changed)
                    .classes("w-56")
                    .props("outlined dense")
                    .mark("forms-split")
                )
            with ui.row().classes("items-center gap-4"):
                self.srt = ui.checkbox("SubRip subtitles (.srt)", on_change=self._changed).mark(
                    "forms-srt"
                )
                self.vtt = ui.checkbox("WebVTT subtitles (.vtt)", on_change=self._changed).mark(
                    "forms-vtt"
                )
                self.read_along = ui.checkbox("Read-aloud EPUB", on_change=self._changed).mark(
                    "forms-read-along"
                )
            ui.label(
                "Made from the book's audio once it is finished, and offered in the "
                "Library (nothing is spoken twice)."
            ).classes("ap-muted text-sm")
            self.error = ui.label().classes("ap-banner ap-error").mark("forms-error")
            self.error.set_visibility(False)

    def outputs(self) -> ConvertOutputs:
        """The forms chosen; AudiopubError, with the command line's reason, if they can't be
        made together."""
        subtitles = [name for name, box in (("srt", self.srt), ("vtt", self.vtt)) if box.value]
        return ConvertOutputs.checked(
            self.audio.value, self.split.value, subtitles, bool(self.read_along.value)
        )

    @property
    def problem(self) -> str:
        """Why the chosen forms can't be made ("" when they can)."""
        try:
            self.outputs()
        except AudiopubError as exc:
            return str(exc)
        return ""

    def _changed(self) -> None:
        problem = self.problem
        self.error.set_text(problem)
        self.error.set_visibility(bool(problem))
        self.on_change()
