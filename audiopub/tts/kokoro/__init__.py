"""Kokoro-82M: one ONNX graph, 54 voices in nine languages, and mixes of them.

engine       `KokoroEngine`: voices, mixes, batched synthesis
environment  its settings, each an environment variable: its folder, and what runs it
files        its folder: model variants, vocabulary, voices, languages
graph        the graph rewrite that exposes each token's frames
install      the download from the Hub, and the voice index shipped with Audiopub
torch_*      the same network on PyTorch (`--runtime torch`): modules, weights, runtime
"""

from __future__ import annotations

from pathlib import Path

from audiopub.book.scripts import primary_subtag
from audiopub.tts.engine import Engine
from audiopub.tts.engine_info import EngineInfo, LoadRequest, Mixing, Stamp
from audiopub.tts.kokoro.downloads import KokoroDownloads
from audiopub.tts.kokoro.environment import RUNTIME, SETTINGS
from audiopub.tts.kokoro.files import (
    LANGUAGES,
    MIX_SEPARATOR,
    SAMPLE_RATE,
    WEIGHT_SEPARATOR,
    KokoroFiles,
    default_folder,
    parse_mix,
)


def _load(request: LoadRequest) -> Engine:
    from audiopub.tts.kokoro.engine import KokoroEngine  # ONNX Runtime only when loaded

    # Called by the registry, whose engines every caller shares and which holds no settings:
    # the runtime in force is read here (and in `_stamp`).
    return KokoroEngine(
        request.model_dir,
        use_gpu=request.use_gpu,
        threads=request.threads,
        device_id=request.device_id,
        runtime=RUNTIME.read(),
    )


def _stamp(model_dir: Path) -> Stamp:
    """The model files, and the runtime setting: an engine loaded under another runtime is
    loaded again, as one whose files changed."""
    runtime = RUNTIME.read()
    return (*KokoroFiles(model_dir).stamp(), (f"runtime:{runtime}", 0, 0))


KOKORO = EngineInfo(
    name="kokoro",
    label="Kokoro",
    languages=tuple(dict.fromkeys(primary_subtag(tag) for tag, _ in LANGUAGES.values())),
    sample_rate=SAMPLE_RATE,
    default_model_dir=default_folder,
    load=_load,
    runtimes=("onnx", "torch"),
    stamp=_stamp,
    mixing=Mixing(MIX_SEPARATOR, WEIGHT_SEPARATOR, parse_mix),
    downloads=KokoroDownloads(),
    settings=SETTINGS,
)
