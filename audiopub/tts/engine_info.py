"""What Audiopub knows of an engine before loading it: its name, how people call it, what it
reads, where its files are, how it is loaded and how to tell its files changed.

Each engine package (tts/piper/, tts/kokoro/, tts/supertonic/) describes itself with one
`EngineInfo`, and `registry.ENGINES` lists them: the rest of Audiopub asks the description
instead of comparing engine names, so a new engine is one new package and one line there.
Nothing heavy is imported to describe an engine: its `load` imports the engine itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from audiopub.tts.engine import Engine

# What an engine's model files look like now (name, size, mtime of each), to notice them
# replaced; None where the engine rescans its folder itself.
Stamp = tuple[tuple[str, int, int], ...] | None


@dataclass(frozen=True)
class LoadRequest:
    """Everything an engine is made with."""

    model_dir: Path
    use_gpu: bool
    threads: int | None
    device_id: int  # the CUDA device, when use_gpu


def _no_stamp(model_dir: Path) -> Stamp:
    return None


@dataclass(frozen=True)
class EngineInfo:
    name: str  # what --engine takes, and what a job and the chunk cache store
    label: str  # what a person reads: "Piper"
    # The languages (primary subtags) its model reads, every voice each of them; empty where
    # each voice reads its own one language (Piper).
    languages: tuple[str, ...]
    sample_rate: int | None  # of every voice; None where the voice or model says (Piper's differ)
    uses_steps: bool  # whether `SynthesisOptions.steps` changes what it says
    default_model_dir: Callable[[], Path]  # where its files are unless told (settings, env)
    load: Callable[[LoadRequest], Engine]  # imports and makes the engine
    stamp: Callable[[Path], Stamp] = _no_stamp  # its files in this folder as they are now
    # The files behind one voice, where each voice is files of its own (Piper's `.onnx` and
    # `.onnx.json`, none for one shipped inside a package); None: the model folder is one
    # whole that speaks every voice.
    voice_files: Callable[[str], list[Path]] | None = None
    # What can run its model (`settings.KOKORO_RUNTIMES` names them), its default first.
    runtimes: tuple[str, ...] = ("onnx",)

    @property
    def multilingual(self) -> bool:
        """Whether its voices read several languages (the book's is passed as it speaks)."""
        return bool(self.languages)
