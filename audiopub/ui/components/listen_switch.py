"""The proof-listening switch of the settings panel, and why it is off where it can't run.

It follows the GPU switch (on with it: on a GPU listening costs little) until the person sets
it; without the `listen` extra or a listening model it stays off, disabled, and says what to
install. A job submitted from the page carries the switch's value, which the job keeps.
"""

from __future__ import annotations

from nicegui import run, ui

from audiopub.errors import ListeningUnavailable
from audiopub.listen.ready import require_listening

ABOUT = (
    "Hears every chunk and speaks again what came out wrong; on the CPU it costs "
    "a few seconds per minute of audio."
)


class ListenSwitch:
    def __init__(self) -> None:
        self.can_listen = False  # the listen extra and a listening model are installed
        self.chosen = False  # the person set the switch: the GPU switch no longer moves it
        self._gpu = False
        with ui.column().classes("gap-0"):
            self.switch = ui.switch("Proof-listening", value=False, on_change=self._changed).mark(
                "proof-listen"
            )
            self.switch.disable()
            self.reason = (
                ui.label("Looking for a listening model…")
                .classes("ap-muted text-sm pl-2")
                .mark("proof-listen-reason")
            )
        self._following = False  # the switch is being set here, not by the person

    @property
    def value(self) -> bool:
        return bool(self.switch.value)

    async def load(self) -> None:
        problem = await run.io_bound(_listening_problem)
        self.can_listen = problem is None
        if self.can_listen:
            self.switch.enable()
            self.reason.set_text(ABOUT)
        else:
            self.switch.disable()
            self.reason.set_text(f"Unavailable: {problem}")
        self.follow_gpu(self._gpu)

    def follow_gpu(self, on: bool) -> None:
        """Until the person sets it, proof-listening is on exactly when the GPU is."""
        self._gpu = on
        if self.chosen:
            return
        self._following = True
        try:
            self.switch.set_value(self.can_listen and on)
        finally:
            self._following = False

    def _changed(self) -> None:
        if not self._following:
            self.chosen = True


def _listening_problem() -> str | None:
    """Why a job can't proof-listen here, or None when it can."""
    try:
        require_listening()
    except ListeningUnavailable as exc:
        return str(exc)
    return None
