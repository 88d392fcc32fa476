"""The speech engines as the pages offer them: each with its voices (the saved mixes among
those of the engine whose voices mix), or why it can't be used here; and whether the GPU
switch can be offered.

Looked up at every page view, so voices dropped into the models folder show up without a
restart. Blocking (it loads engines, asks onnxruntime): call it through `run.io_bound`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from audiopub.errors import ModelMissing
from audiopub.tts import onnx_runtime, registry
from audiopub.tts.engine import Voice
from audiopub.tts.engine_info import Mixing, Steps
from audiopub.ui.voice_mixes import VoiceMixes, with_saved_mixes

log = logging.getLogger(__name__)


def engine_label(name: str) -> str:
    """What a person reads for an engine: "Piper"; the name of one no longer offered."""
    labels = {engine.name: engine.label for engine in registry.engines()}
    return labels.get(name, name)


@dataclass(frozen=True)
class GpuSupport:
    """Whether the GPU switch can be offered; if not, why (shown next to the switch)."""

    usable: bool
    reason: str | None = None

    @classmethod
    def detect(cls) -> GpuSupport:
        if onnx_runtime.cuda_can_run():
            return cls(True)
        return cls(False, onnx_runtime.explain_cpu_fallback(onnx_runtime.available_providers()))


@dataclass(frozen=True)
class EngineChoice:
    """An engine as the settings panel offers it; `reason` says why it can't be used."""

    name: str
    label: str
    voices: tuple[Voice, ...] = ()
    steps: Steps | None = None  # the steps it takes; None: it takes none
    mixing: Mixing | None = None  # how its voices mix; None: they don't
    reason: str | None = None
    missing: bool = False  # its model files are not installed: the Voices page gets them

    @property
    def available(self) -> bool:
        return self.reason is None

    @property
    def uses_steps(self) -> bool:
        return self.steps is not None


# Engines are looked up at every page view: log why one is unavailable once, not every time.
_logged_unavailable: set[tuple[str, str]] = set()


def load_engine_choice(name: str) -> EngineChoice:
    """Load the engine (on the CPU, cached by the registry) to learn its voices."""
    label = engine_label(name)
    try:
        engine = registry.get_engine(name)
        voices = tuple(engine.voices())
    # Shown next to the engine list: a broken engine must not hide the working ones.
    except Exception as exc:  # noqa: BLE001
        reason = str(exc) or type(exc).__name__
        missing = isinstance(exc, ModelMissing)
        if (name, reason) not in _logged_unavailable:
            _logged_unavailable.add((name, reason))
            # An engine whose files nobody installed is the normal state of a first start.
            log.log(
                logging.INFO if missing else logging.WARNING,
                "engine %s is unavailable: %s",
                name,
                reason,
            )
        return EngineChoice(name, label, reason=reason, missing=missing)
    if not voices:
        return EngineChoice(name, label, reason="no voices are installed")
    info = registry.engine_info(name)
    return EngineChoice(name, label, voices, info.steps, info.mixing)


class EngineCatalog:
    """The engines, the saved `mixes` among the voices of the one whose voices mix; the GPU
    support is detected once (a test gives its own)."""

    def __init__(self, mixes: VoiceMixes, gpu_support: GpuSupport | None = None) -> None:
        self.mixes = mixes
        self._gpu_support = gpu_support

    def engines(self) -> tuple[EngineChoice, ...]:
        """The engines and their voices as they are now. Cheap once the registry has loaded
        the engines; an engine that failed to load is tried again (its model files may have
        been added since)."""
        choices = [load_engine_choice(n) for n in registry.engine_names()]
        return tuple(
            replace(c, voices=with_saved_mixes(c.name, c.voices, self.mixes))
            if c.name == self.mixes.engine and c.available
            else c
            for c in choices
        )

    def gpu_support(self) -> GpuSupport:
        if self._gpu_support is None:
            self._gpu_support = GpuSupport.detect()
        return self._gpu_support
