"""Piper: one ONNX graph per voice, each reading its own language, with espeak-ng phonemes.

engine     `PiperEngine`: voices' sessions, batched synthesis, word starts
config     a voice's `.onnx.json`: phoneme ids, speakers, sample rate
files      where the voices are: the embedded one and the models folder
graph      the graph rewrite that exposes each item's length and word durations
noise      the graph's noise drawn from each chunk's seed
index      the Hub's voice index: its format, the shipped snapshot, the copy refreshed on request
downloads  its voices fetched into the models folder and removed, and what the voice library
           asks (`EngineInfo.downloads`)
"""

from __future__ import annotations

from pathlib import Path

from audiopub import settings
from audiopub.tts.engine import Engine, split_speaker
from audiopub.tts.engine_info import EngineInfo, LoadRequest
from audiopub.tts.piper.downloads import PiperDownloads
from audiopub.tts.piper.files import NAME, default_folder, find_voices


def _load(request: LoadRequest) -> Engine:
    from audiopub.tts.piper.engine import PiperEngine  # ONNX Runtime only when loaded

    return PiperEngine(
        use_gpu=request.use_gpu,
        threads=request.threads,
        voices_dir=request.model_dir,
        device_id=request.device_id,
    )


def _voice_files(voice: str) -> list[Path]:
    """A voice's two files; none for the embedded one, which comes with its pip package."""
    model = split_speaker(voice)[0]
    if model == settings.DEFAULT_PIPER_VOICE:
        return []
    files = find_voices()[model]
    return [files.model, files.config]


# Piper rescans its folder on every call, so it needs no stamp.
PIPER = EngineInfo(
    name=NAME,
    label="Piper",
    languages=(),
    sample_rate=None,
    default_model_dir=default_folder,
    load=_load,
    voice_files=_voice_files,
    downloads=PiperDownloads(),
)
