"""The model files a cluster's workers receive (`cluster.models`): what an engine needs for a
voice, bytes only, loaded from a folder of the worker's own, without the head's data dir."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from voices import add_voice_with_rate

from audiopub import settings
from audiopub.cluster.actor import speak_batch
from audiopub.cluster.models import model_files, remove, unpack
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.registry import get_engine


def test_a_piper_voice_travels_as_its_two_files_and_speaks_from_the_copy(data_dir: Path) -> None:
    add_voice_with_rate(settings.models_dir() / "piper", "en_US-extra-low", 16_000)
    add_voice_with_rate(settings.models_dir() / "piper", "en_US-other-low", 16_000)

    files = model_files("piper", "en_US-extra-low")

    assert sorted(files) == ["en_US-extra-low.onnx", "en_US-extra-low.onnx.json"]
    folder = unpack(files)
    try:
        shutil.rmtree(data_dir)  # a worker has no data dir of the head's
        engine = get_engine("piper", model_dir=folder, threads=1)
        (spoken,) = speak_batch(
            engine, ["A voice from another machine."], "en_US-extra-low", SynthesisOptions(seed=3)
        )
        assert not isinstance(spoken, str)
        assert spoken.sample_rate == 16_000 and np.abs(spoken.audio).max() > 0.01
    finally:
        remove(folder)
    assert not folder.exists()


def test_the_embedded_voice_needs_no_files() -> None:
    assert model_files("piper", settings.DEFAULT_PIPER_VOICE) == {}


def test_a_file_name_that_climbs_out_of_its_folder_is_refused() -> None:
    with pytest.raises(ValueError, match="outside its folder"):
        unpack({"../escape.onnx": b"x"})
