"""Engine, voice (with a spoken preview), speed, inference steps and the GPU switch.

Every engine is offered; one that can't run here says why when it is picked (one whose files
are not installed points to the Voices page). Engines and
voices are looked up each time the page opens, so a voice added to the models folder shows
without a restart. The GPU switch is enabled only when a CUDA provider can run; otherwise it
stays off and says why. Every change is remembered (`Preferences`) for the next visit.

Once a book is uploaded, voices in its language come first, and the best of them is chosen
unless the person chose a voice here themselves; when none is installed, a banner says how many
can be downloaded and links to the Voices page filtered to that language.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from urllib.parse import quote

from nicegui import run, ui

from audiopub import settings as defaults
from audiopub.book.scripts import primary_subtag
from audiopub.errors import VoiceNotFound
from audiopub.jobs.models import JobSettings
from audiopub.tts.engine import Voice
from audiopub.tts.registry import engine_info
from audiopub.ui.components.audio_player import AudioPlayer
from audiopub.ui.components.listen_switch import ListenSwitch
from audiopub.ui.components.voice_mixer import VoiceMixer
from audiopub.ui.engine_catalog import EngineChoice, GpuSupport
from audiopub.ui.services import Services
from audiopub.ui.theme import section_title
from audiopub.ui.voice_list import Offers, describe, offers

log = logging.getLogger(__name__)

_LANGUAGE = re.compile(r"[a-z]{2,3}")  # an ISO 639 code, as a book's primary subtag should be
_NO_LANGUAGE = frozenset({"und", "mul", "zxx", "mis"})  # undetermined, several, none, other


class SettingsPanel:
    def __init__(self, services: Services, on_change: Callable[[], None]) -> None:
        self.services = services
        self.on_change = on_change
        self.engines: dict[str, EngineChoice] = {}  # those that can run here
        self.catalog: dict[str, EngineChoice] = {}  # every engine, to say why one can't
        self.gpu: GpuSupport | None = None
        self.offers: Offers | None = None
        self.book_language: str | None = None  # primary subtag of the book's language
        self.voice_chosen = False  # the person picked a voice on this page: never override it
        self._choosing = False  # the panel itself is setting the voice
        saved = services.preferences.get()

        with ui.card().classes("ap-card w-full gap-4").mark("settings-panel"):
            section_title("Voice and settings", "record_voice_over")
            with ui.row().classes("items-center gap-3") as self.loading:
                ui.spinner(size="1.5em")
                ui.label("Loading the speech engines…").classes("ap-muted")
            with ui.row().classes("w-full items-center gap-4"):
                self.engine = (
                    ui.select({}, label="Engine", on_change=self._engine_changed)
                    .classes("w-40")
                    .props("outlined dense")
                    .mark("engine")
                )
                # Typing filters the list: a downloaded multi-speaker model alone adds hundreds.
                self.voice = (
                    ui.select({}, label="Voice", with_input=True, on_change=self._voice_changed)
                    .classes("flex-1 min-w-[12rem]")
                    .props("outlined dense")
                    .mark("voice")
                )
                self.preview_button = ui.button(
                    "Preview", icon="play_circle", on_click=self._preview
                )
                self.preview_button.props("outline no-caps").mark("preview")
            self.preview_audio = AudioPlayer("preview-audio")
            self.preview_error = ui.label().classes("ap-banner ap-error").mark("preview-error")
            self.preview_error.set_visibility(False)
            self.mixer = VoiceMixer(
                services, lambda: round(self.speed.value, 2), self._mix_saved, self._mix_removed
            )
            with ui.row().classes(
                "ap-banner ap-warn items-center gap-3 no-wrap"
            ) as self.suggestion:
                self.suggestion_text = ui.label().classes("flex-1").mark("voice-suggestion")
                self.suggestion_link = (
                    ui.link("Show them", "/voices").classes("ap-link").mark("voice-suggestion-link")
                )
            self.suggestion.set_visibility(False)
            self.unavailable = ui.column().classes("w-full gap-2").mark("engines-unavailable")

            with ui.grid(columns="auto 1fr auto").classes("w-full items-center gap-x-4 gap-y-1"):
                ui.label("Speed").classes("ap-muted")
                self.speed = ui.slider(
                    min=defaults.MIN_SPEED,
                    max=defaults.MAX_SPEED,
                    step=0.05,
                    value=saved.speed,
                    on_change=self._speed_changed,
                )
                self.speed.mark("speed")
                ui.label().bind_text_from(
                    self.speed, "value", backward=lambda v: f"{v:.2f}×"
                ).classes("ap-figure w-14 text-right").mark("speed-value")
                self.steps_label = ui.label("Inference steps").classes("ap-muted")
                self.steps = ui.slider(
                    min=defaults.MIN_STEPS,
                    max=defaults.MAX_STEPS,
                    step=1,
                    value=saved.steps,
                    on_change=self._steps_changed,
                )
                self.steps.mark("steps")
                self.steps_value = ui.label().bind_text_from(
                    self.steps, "value", backward=lambda v: f"{int(v)}"
                )
                self.steps_value.classes("ap-figure w-14 text-right").mark("steps-value")
            self._show_steps(False)

            with ui.column().classes("gap-0"):
                self.gpu_switch = ui.switch(
                    "GPU acceleration", value=False, on_change=self._gpu_changed
                ).mark("gpu")
                self.gpu_switch.disable()
                self.gpu_reason = ui.label().classes("ap-muted text-sm pl-2").mark("gpu-reason")
            self.listening = ListenSwitch()  # follows the GPU switch until it is set

        ui.timer(0.01, self._load, once=True)

    # --- what the page asks ------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self.engine.value in self.engines and bool(self.voice.value)

    @property
    def uses_steps(self) -> bool:
        choice = self.engines.get(self.engine.value)
        return bool(choice and choice.uses_steps)

    def job_settings(self, chapters: tuple[int, ...] | None) -> JobSettings:
        return JobSettings(
            engine=self.engine.value,
            voice=self.voice.value,
            speed=round(self.speed.value, 2),
            steps=int(self.steps.value) if self.uses_steps else defaults.DEFAULT_STEPS,
            use_gpu=bool(self.gpu_switch.value),
            chapters=chapters,
            proof_listen=self.listening.value,
        )

    # --- loading -------------------------------------------------------------------------------

    async def _load(self) -> None:
        catalog = await run.io_bound(self.services.catalog.engines)
        gpu = await run.io_bound(self.services.catalog.gpu_support)
        self.offers = await run.io_bound(_known_offers)
        if catalog is None or gpu is None:  # io_bound gives None once the app is shutting down
            return
        self._apply(catalog, gpu)
        await self.listening.load()

    def _apply(self, catalog: tuple[EngineChoice, ...], gpu: GpuSupport) -> None:
        saved = self.services.preferences.get()
        self.engines = {c.name: c for c in catalog if c.available}
        self.catalog = {c.name: c for c in catalog}
        self.engine.set_options({c.name: _engine_label(c) for c in catalog})
        self.unavailable.clear()
        if not self.engines:
            with self.unavailable:
                ui.label("No speech engine can run on this machine.").classes("ap-banner ap-error")
        self.gpu = gpu
        if gpu.usable:
            self.gpu_switch.enable()
            self.gpu_switch.value = saved.use_gpu
            self.gpu_reason.set_text("Uses CUDA when a job starts; the job shows what really ran.")
        else:
            self.gpu_switch.value = False
            self.gpu_reason.set_text(f"Unavailable: {gpu.reason}")
        engine = saved.engine if saved.engine in self.engines else next(iter(self.engines), None)
        if self.engine.value != engine:
            self.engine.value = engine  # its change event fills the voices
        else:
            self._engine_changed()
        self.loading.set_visibility(False)

    # --- changes -------------------------------------------------------------------------------

    def _engine_changed(self) -> None:
        choice = self.engines.get(self.engine.value)
        if self.engines:  # said only of the engine picked, and only while it is picked
            self.unavailable.clear()
        if choice is None:
            self.voice.set_options({})
            self.voice.value = None
            self.mixer.show(None)
            self._show_steps(False)
            picked = self.catalog.get(self.engine.value)
            if picked is not None:
                with self.unavailable:
                    _unavailable(picked)
            self.on_change()
            return
        saved = self.services.preferences.get()
        voices = [v.id for v in choice.voices]
        wanted = saved.voice if saved.voice in voices else voices[0]
        self._set_voice(wanted, choice)
        self.mixer.show(choice, wanted)
        self._show_steps(choice.uses_steps)
        if choice.steps is not None:  # the range the engine declares
            self.steps.props.update(min=choice.steps.low, max=choice.steps.high)
        self.services.preferences.update(engine=choice.name, voice=wanted)
        self._suggest()
        self.on_change()

    def _set_voice(self, voice: str, choice: EngineChoice) -> None:
        """Offer the engine's voices, the book's language first, and select `voice`."""
        ordered = sorted(choice.voices, key=self._book_rank)
        self._choosing = True
        try:
            self.voice.set_options({v.id: f"{v.name} · {v.language}" for v in ordered}, value=voice)
        finally:
            self._choosing = False

    def _mix_saved(self, voice: Voice) -> None:
        """A mix saved in the mixer joins its engine's voices (replacing one of its name) and
        is chosen."""
        engine = self.mixer.engine
        choice = self.engines.get(engine)
        if choice is None:
            return
        others = [v for v in choice.voices if v.id != voice.id and v.name != voice.name]
        choice = self.engines[engine] = replace(choice, voices=(*others, voice))
        if self.engine.value == engine:
            self._set_voice(voice.id, choice)
            self.mixer.show(choice, voice.id)
            self.voice_chosen = True
            self.services.preferences.update(voice=voice.id)
            self.on_change()

    def _mix_removed(self, mix: str) -> None:
        """A mix removed in the mixer leaves its engine's voices; if it was the voice chosen,
        the first voice is chosen instead, as when a remembered voice is gone."""
        engine = self.mixer.engine
        choice = self.engines.get(engine)
        if choice is None:
            return
        choice = self.engines[engine] = replace(
            choice, voices=tuple(v for v in choice.voices if v.id != mix)
        )
        if self.engine.value != engine:
            return
        current = self.voice.value if self.voice.value != mix else choice.voices[0].id
        self._set_voice(current, choice)
        self.mixer.show(choice, current)
        self.services.preferences.update(voice=current)
        self.on_change()

    def _voice_changed(self) -> None:
        if not self._choosing:
            self.voice_chosen = True
        if self.voice.value:
            self.services.preferences.update(voice=self.voice.value)
        self.on_change()

    # --- the book's language -------------------------------------------------------------------

    def set_book_language(self, language: str | None) -> None:
        """The uploaded book's language (None: no book): suggest voices that speak it."""
        code = primary_subtag(language) if language else None
        if code is not None and (not _LANGUAGE.fullmatch(code) or code in _NO_LANGUAGE):
            code = None  # nothing to suggest for "und" or a malformed tag
        if code != self.book_language:
            self.book_language = code
            self._suggest()

    def _speaks_book(self, voice: Voice) -> bool:
        if self.book_language is None:
            return False
        return voice.speaks(self.book_language)

    def _book_rank(self, voice: Voice) -> int:
        """0: the book's language is the voice's own; 1: the voice reads it (a Kokoro voice
        reads all nine of Kokoro's languages); 2: it doesn't."""
        if not self._speaks_book(voice):
            return 2
        return 0 if primary_subtag(voice.language) == self.book_language else 1

    def _suggest(self) -> None:
        """Voices in the book's language first; choose the best unless the person chose one;
        none installed: say how many can be downloaded."""
        choice = self.engines.get(self.engine.value)
        if choice is None or self.book_language is None:
            self.suggestion.set_visibility(False)
            return
        speaking = [v for v in choice.voices if self._speaks_book(v)]
        current = next((v for v in choice.voices if v.id == self.voice.value), None)
        downloads = engine_info(choice.name).downloads
        grades = downloads.qualities if downloads is not None else ()
        best = min(
            speaking,
            key=lambda v: (self._book_rank(v), -_quality(v.model, grades)),
            default=None,
        )
        if (
            best is not None
            and not self.voice_chosen
            and (current is None or self._book_rank(current) > self._book_rank(best))
        ):
            self._set_voice(best.id, choice)
            self.services.preferences.update(voice=best.id)
        else:
            self._set_voice(self.voice.value, choice)  # the same voice, options reordered
        self.suggestion.set_visibility(not speaking)
        if not speaking:
            self._show_downloadable(choice)

    def _show_downloadable(self, choice: EngineChoice) -> None:
        code = self.book_language or ""
        names = self.offers.names if self.offers is not None else {}
        said = f"No installed {choice.label} voice speaks {describe(code, names, '(')}"
        if self.offers is None:  # the index could not be read: the Voices page will say why
            count = None
            self.suggestion_text.set_text(f"{said}.")
        elif count := self.offers.downloadable.get(code, 0):
            self.suggestion_text.set_text(
                f"{said}; {count} voice{'s' if count > 1 else ''} can be downloaded."
            )
        else:
            self.suggestion_text.set_text(f"{said}, and none of the voices Audiopub knows does.")
        self.suggestion_link.props["href"] = f"/voices?language={quote(code)}"
        self.suggestion_link.update()
        self.suggestion_link.set_visibility(count != 0)

    def _speed_changed(self) -> None:
        self.services.preferences.update(speed=round(self.speed.value, 2))
        self.on_change()

    def _steps_changed(self) -> None:
        self.services.preferences.update(steps=int(self.steps.value))

    def _gpu_changed(self) -> None:
        if self.gpu is not None and self.gpu.usable:
            self.services.preferences.update(use_gpu=bool(self.gpu_switch.value))
        self.listening.follow_gpu(bool(self.gpu_switch.value))

    def _show_steps(self, visible: bool) -> None:
        for element in (self.steps_label, self.steps, self.steps_value):
            element.set_visibility(visible)

    # --- preview -------------------------------------------------------------------------------

    async def _preview(self) -> None:
        if not self.ready:
            return
        self.preview_error.set_visibility(False)
        await self.preview_audio.speak(
            self._speak_preview,
            show=self._preview_failed,
            failing="The preview failed",
            busy=self.preview_button,
        )

    def _speak_preview(self) -> bytes:
        """The voice as the panel is set now, spoken (blocking)."""
        settings = self.job_settings(None)
        if not settings.voice:  # the voice list changed since the button was pressed
            raise VoiceNotFound("Choose a voice to hear its preview")
        return self.services.previews.preview(
            settings.engine, settings.voice, settings.speed, settings.steps
        )

    def _preview_failed(self, message: str) -> None:
        self.preview_error.set_text(message)
        self.preview_error.set_visibility(True)


def _known_offers() -> Offers | None:
    """What can be downloaded, per language; None (logged) if the index can't be read: the
    voices still load."""
    try:
        return offers()
    except Exception:  # noqa: BLE001 — a suggestion must never keep the engines from showing
        log.exception("reading the voice index for suggestions failed")
        return None


def _quality(model: str, grades: Sequence[str]) -> int:
    """A voice's grade from its name (…-medium), as its engine's catalogue grades them (worst
    to best); -1 when it has none."""
    last = model.rsplit("-", 1)[-1]
    return grades.index(last) if last in grades else -1


def _engine_label(choice: EngineChoice) -> str:
    if choice.available:
        return choice.label
    return f"{choice.label} ({'not installed' if choice.missing else 'unavailable'})"


def _unavailable(choice: EngineChoice) -> None:
    """Why the picked engine can't run: not installed (the Voices page installs it), or the
    reason in full (often how to fix it) inside."""
    if choice.missing:
        with (
            ui.row()
            .classes("w-full ap-banner ap-warn items-center gap-3 no-wrap text-sm")
            .mark(f"engine-unavailable-{choice.name}")
        ):
            ui.label(f"{choice.label} is not installed.").classes("flex-1")
            ui.link("Get it on the Voices page", "/voices").classes("ap-link")
        return
    reason = choice.reason or ""
    with (
        ui.expansion(
            f"{choice.label} is not available",
            icon="info_outline",
            caption=reason.splitlines()[0] if reason else None,
        )
        .classes("w-full ap-banner ap-warn ap-expansion text-sm")
        .mark(f"engine-unavailable-{choice.name}")
    ):
        ui.label(reason).classes("text-sm").style("white-space: pre-line")
