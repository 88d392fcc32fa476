"""Supertonic: a flow-matching model (four ONNX graphs) whose voices read every language of
its release, in as many denoising steps as asked.

    engine       `SupertonicEngine`: styles, batched synthesis, the step loop
    environment  its settings, each an environment variable: its folder, its language, and
                 whether its text front end is multilingual
    files        a model folder: its graphs, config, unicode indexer and voice styles
    releases     the Hub's releases, which one speaks, and the languages each reads
    text         the text front end: normalising, language tags, character ids
"""

from __future__ import annotations

from collections.abc import Sequence

from audiopub.tts.engine import Engine, Voice
from audiopub.tts.engine_info import EngineInfo, LoadRequest, Steps
from audiopub.tts.supertonic.downloads import SupertonicDownloads
from audiopub.tts.supertonic.environment import LANGUAGE, MULTILINGUAL, SETTINGS
from audiopub.tts.supertonic.files import folder_stamp
from audiopub.tts.supertonic.releases import active_model_dir, active_release, languages_of
from audiopub.tts.supertonic.text import SUPPORTED_LANGUAGES


def _load(request: LoadRequest) -> Engine:
    from audiopub.tts.supertonic.engine import SupertonicEngine  # ONNX Runtime when loaded

    # Loaded by the registry for whoever asks first and shared by every later caller: the
    # engine is made under the settings in force, as its cache key's model folder is.
    return SupertonicEngine(
        request.model_dir,
        use_gpu=request.use_gpu,
        threads=request.threads,
        device_id=request.device_id,
        languages=languages_of(request.model_dir),
        fallback_language=LANGUAGE.read(),
        multilingual=MULTILINGUAL.read(),
    )


def _heading(voices: Sequence[Voice]) -> str:
    """ "supertonic (supertonic-2 in models/supertonic-2: en, ko, es, pt, fr):"."""
    release = active_release()
    what = release.id if release is not None else "your own model"
    read = f": {voices[0].describe_languages()}" if voices else ""
    return f"supertonic ({what} in {active_model_dir()}{read}):"


# Its sample rate is the model's (its config says); its languages are all its releases'
# together, each release reading its own (`releases.languages_of`).
SUPERTONIC = EngineInfo(
    name="supertonic",
    label="Supertonic",
    languages=SUPPORTED_LANGUAGES,
    sample_rate=None,
    steps=Steps(),  # flow matching: more steps, cleaner audio (2-128, 16 unless told)
    default_model_dir=active_model_dir,
    load=_load,
    stamp=folder_stamp,
    heading=_heading,
    downloads=SupertonicDownloads(),
    settings=SETTINGS,
)
