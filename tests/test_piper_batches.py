"""Piper in padded batches: each chunk cut at its exact length, sounding as it does alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from voices import add_still_voice

from audiopub.tts import graph_rewrite
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.piper.engine import PiperEngine
from audiopub.tts.piper.graph import PHONEME_FRAMES, expose_phoneme_frames, item_lengths

STILL = "en_US-still-medium"
TEXTS = [
    "It was a dark and stormy night.",
    "The rain fell in torrents, except at occasional intervals, when it was checked by a "
    "violent gust of wind which swept up the streets.",
    "Hello.",
    "For it is in London that our scene lies.",
]
# Batched and solo runs differ only where the decoder's convolutions reach past an item's end
# into the batch's padding (1.1e-4 measured); audio peaks near 1.
TOLERANCE = 5e-4


@pytest.fixture(scope="module")
def still_engine(tmp_path_factory: pytest.TempPathFactory) -> PiperEngine:
    folder = tmp_path_factory.mktemp("voices")
    add_still_voice(folder, STILL)
    return PiperEngine(threads=1, voices_dir=folder)


def test_a_batch_sounds_like_each_chunk_alone(still_engine: PiperEngine) -> None:
    options = SynthesisOptions()
    prepared = still_engine.prepare(TEXTS, STILL, options)
    alone = [still_engine.speak([item], STILL, options)[0] for item in prepared]
    together = still_engine.speak(prepared, STILL, options)

    assert len({result.frames for result in alone}) == len(TEXTS)  # really mixed lengths
    for solo, batched in zip(alone, together, strict=True):
        assert batched.frames == solo.frames  # cut exactly: no padding tail, nothing lost
        np.testing.assert_allclose(batched.audio, solo.audio, atol=TOLERANCE, rtol=0)


def test_synthesize_keeps_the_order_of_its_texts(
    still_engine: PiperEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = SynthesisOptions()
    alone = [still_engine.synthesize([text], STILL, options)[0] for text in TEXTS]
    monkeypatch.setattr(still_engine, "batch_size", 4)
    together = still_engine.synthesize(TEXTS, STILL, options)
    assert [r.frames for r in together] == [r.frames for r in alone]
    stages = together[1].stage_seconds
    assert set(stages) >= {"phonemes", "model"} and stages["model"] > 0


def test_without_the_lengths_output_chunks_run_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(source: Path, target: Path, steps: object) -> bool:
        raise OSError("read-only file system")

    monkeypatch.setattr(graph_rewrite, "write_rewritten", fail)
    add_still_voice(tmp_path, STILL)
    engine = PiperEngine(threads=1, voices_dir=tmp_path)
    options = SynthesisOptions()
    prepared = engine.prepare(TEXTS[:3], STILL, options)
    results = engine.speak(prepared, STILL, options)
    assert not engine._voice(STILL).gives_lengths
    alone = [engine.speak([item], STILL, options)[0] for item in prepared]
    assert [r.frames for r in results] == [r.frames for r in alone]


def test_item_lengths_are_frames_times_the_hop() -> None:
    frames = np.array([[[2.0, 3.0, 0.0]], [[1.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]]])
    assert item_lengths(frames, 5 * 256) == [5 * 256, 256, 256]  # at least one frame each
    with pytest.raises(ValueError, match="whole number"):
        item_lengths(frames, 5 * 256 + 1)


def _ceil_model(ceils: int) -> onnx.ModelProto:
    nodes = [helper.make_node("Ceil", ["x"], ["c0"])]
    nodes += [helper.make_node("Ceil", [f"c{i}"], [f"c{i + 1}"]) for i in range(ceils - 1)]
    graph = helper.make_graph(
        nodes,
        "durations",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3])],
        [helper.make_tensor_value_info(f"c{ceils - 1}", TensorProto.FLOAT, [1, 1, 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def test_the_durations_are_exposed_once_and_only_from_a_vits_shaped_graph() -> None:
    model = _ceil_model(1)
    assert expose_phoneme_frames(model) == 1
    onnx.checker.check_model(model)
    assert [output.name for output in model.graph.output] == ["c0", PHONEME_FRAMES]
    assert expose_phoneme_frames(model) == 0  # already there
    assert expose_phoneme_frames(_ceil_model(2)) == 0  # which Ceil would it be?
