"""The voice mixer: two or more voices with weights, heard, then saved under a name.

Shown only while the engine is one whose voices mix (its `EngineInfo.mixing`: Kokoro's). Each
voice has a weight from 0 to 100; the mix gives each voice its share of the total (a weight of
0 leaves the voice out). "Hear the mix" speaks it through the previews' engine; "Save the mix"
keeps it under a name (`VoiceMixes`) and hands it to the voice list, where it is chosen. The
job's voice is the mix itself ("jf_alpha:0.6+jm_kumo:0.4"), so its cache key follows its voices
and weights, and removing a saved mix (listed under the mixer, each with a remove button) leaves
every job's voice as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Final

from nicegui import run, ui

from audiopub.errors import AudiopubError
from audiopub.settings import DEFAULT_STEPS
from audiopub.tts.engine import Voice
from audiopub.tts.engine_info import Mixing
from audiopub.ui.components.audio_player import AudioPlayer
from audiopub.ui.components.dialogs import confirm
from audiopub.ui.engine_catalog import EngineChoice
from audiopub.ui.services import Services
from audiopub.ui.voice_mixes import mix_string, mixed_voice

FIRST_WEIGHT: Final = 50  # two voices start as equal halves


@dataclass
class _Part:
    voice: ui.select
    weight: ui.slider
    share: ui.label


class VoiceMixer:
    def __init__(
        self,
        services: Services,
        speed: Callable[[], float],
        on_saved: Callable[[Voice], None],
        on_removed: Callable[[str], None],
    ) -> None:
        self.services = services
        self.speed = speed
        self.on_saved = on_saved
        self.on_removed = on_removed  # given the mix string of a removed mix
        self.options: dict[str, str] = {}
        self.parts: list[_Part] = []
        self.engine = ""  # the engine whose voices it mixes, once shown
        self.mixing: Mixing | None = None
        with (
            ui.expansion("Mix Kokoro voices", icon="tune")
            .classes("w-full ap-expansion")
            .mark("voice-mixer") as self.box
        ):
            ui.label("Blend two or more voices; each speaks its share of the weights.").classes(
                "ap-muted text-sm"
            )
            self.rows = ui.column().classes("w-full gap-1")
            with ui.row().classes("w-full items-center gap-3"):
                ui.button("Add a voice", icon="add", on_click=lambda: self._add_part(None)).props(
                    "flat no-caps"
                ).mark("mix-add")
                self.hear_button = ui.button(
                    "Hear the mix", icon="play_circle", on_click=self._hear
                )
                self.hear_button.props("outline no-caps").mark("mix-hear")
            with ui.row().classes("w-full items-center gap-3"):
                self.name = (
                    ui.input("Name of the mix")
                    .props("outlined dense")
                    .classes("flex-1")
                    .mark("mix-name")
                )
                self.save_button = ui.button("Save the mix", icon="save", on_click=self._save)
                self.save_button.props("unelevated no-caps").mark("mix-save")
            self.audio = AudioPlayer("mix-audio")
            self.error = ui.label().classes("ap-banner ap-error").mark("mix-error")
            self.error.set_visibility(False)
            self.saved = ui.column().classes("w-full gap-0").mark("saved-mixes")
        self.box.set_visibility(False)

    def show(self, choice: EngineChoice | None, current: str | None = None) -> None:
        """Offer the engine's own voices (mixes are not mixed again), the current one first;
        None, or an engine whose voices don't mix, hides the mixer."""
        if choice is None or choice.mixing is None:
            self.box.set_visibility(False)
            return
        self.engine, self.mixing = choice.name, choice.mixing
        self.box.set_text(f"Mix {choice.label} voices")
        separator = choice.mixing.separator
        self._list_saved([voice for voice in choice.voices if separator in voice.id])
        singles = [voice for voice in choice.voices if separator not in voice.id]
        options = {voice.id: voice.name for voice in singles}
        if options != self.options:
            self.options = options
            self.rows.clear()
            self.parts = []
            first = current if current in options else next(iter(options), None)
            second = next((name for name in options if name != first), None)
            self._add_part(first)
            self._add_part(second)
        self.box.set_visibility(len(options) >= 2)

    def mix(self) -> str:
        """The mix string of the rows as they are; AudiopubError says what is wrong."""
        if self.mixing is None:
            raise AudiopubError("Choose an engine whose voices mix.")
        return mix_string(
            [(part.voice.value, float(part.weight.value)) for part in self.parts], self.mixing
        )

    # --- rows -----------------------------------------------------------------------------

    def _add_part(self, voice: str | None) -> None:
        if voice is None:  # the first voice not in the mix yet
            used = {part.voice.value for part in self.parts}
            voice = next((name for name in self.options if name not in used), None)
        number = len(self.parts)
        with self.rows, ui.row().classes("w-full items-center gap-3 no-wrap"):
            select = (
                ui.select(self.options, value=voice, with_input=True, on_change=self._shares)
                .props("outlined dense")
                .classes("flex-1 min-w-[10rem]")
                .mark(f"mix-voice-{number}")
            )
            weight = ui.slider(min=0, max=100, step=5, value=FIRST_WEIGHT, on_change=self._shares)
            weight.classes("flex-1").mark(f"mix-weight-{number}")
            share = ui.label().classes("ap-figure w-14 text-right").mark(f"mix-share-{number}")
        self.parts.append(_Part(select, weight, share))
        self._shares()

    def _shares(self) -> None:
        """Each voice's share of the mix, as it will be spoken."""
        total = sum(float(part.weight.value) for part in self.parts if part.voice.value)
        for part in self.parts:
            weight = float(part.weight.value) if part.voice.value else 0.0
            part.share.set_text(f"{weight / total:.0%}" if total else "–")

    # --- hearing and saving ---------------------------------------------------------------

    async def _hear(self) -> None:
        self.error.set_visibility(False)
        await self.audio.speak(
            self._speak_mix,
            show=self._failed,
            failing="The mix could not be heard",
            busy=self.hear_button,
        )

    async def _save(self) -> None:
        self.error.set_visibility(False)
        try:
            mix = self.mix()
            voice = await run.io_bound(self._keep, self.name.value or "", mix)
        except AudiopubError as exc:
            self._failed(str(exc))
            return
        if voice is None:
            return
        ui.notify(f"Saved the mix “{voice.name}”", type="positive")
        self.on_saved(voice)

    def _list_saved(self, mixes: Sequence[Voice]) -> None:
        """The saved mixes, each with a button that removes it."""
        self.saved.clear()
        with self.saved:
            if mixes:
                ui.label("Saved mixes").classes("ap-muted text-sm")
            for number, voice in enumerate(mixes):
                with ui.row().classes("w-full items-center gap-2 no-wrap"):
                    ui.label(voice.name).classes("flex-1").mark(f"saved-mix-{number}")
                    ui.label(voice.id).classes("ap-muted text-sm")
                    ui.button(icon="delete", on_click=partial(self._remove, voice)).props(
                        "flat round dense"
                    ).tooltip("Remove this mix").mark(f"mix-remove-{number}")

    async def _remove(self, voice: Voice) -> None:
        self.error.set_visibility(False)
        if not await confirm(
            f"Remove the saved mix {voice.name}? Jobs that speak it keep their voice.", "Remove"
        ):
            return
        try:
            await run.io_bound(self.services.mixes.remove, voice.id)
        except OSError as exc:  # the data dir is read-only or full: the mix stays listed
            self._failed(f"The mix could not be removed: {exc}")
            return
        ui.notify(f"Removed the mix {voice.name}")
        self.on_removed(voice.id)

    def _speak_mix(self) -> bytes:
        """The mix as the rows are, spoken (blocking); AudiopubError says what is wrong."""
        return self.services.previews.preview(
            self.engine, self.mix(), self.speed(), DEFAULT_STEPS
        )  # an engine that takes steps says its own default

    def _keep(self, name: str, mix: str) -> Voice:
        """Save the mix once its voices are known to be installed (blocking)."""
        mixed_voice(self.engine, name, mix)  # EngineUnavailable names a voice not installed
        return mixed_voice(self.engine, self.services.mixes.save(name, mix), mix)

    def _failed(self, message: str) -> None:
        self.error.set_text(message)
        self.error.set_visibility(True)
