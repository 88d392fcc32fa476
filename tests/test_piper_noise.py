"""Piper's noise follows the seed: a chunk sounds the same on every run and in any batch, and
without a seed it varies as VITS means it to."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from audiopub.tts import piper_noise
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.piper import PiperEngine
from audiopub.tts.piper_noise import NoiseFeeds, seeded_noise_inputs

VOICE = "en_US-joe-medium"  # the embedded voice, its noise scales as shipped
TEXT = "Yes. Antidisestablishmentarianism is long. No."
OTHERS = ["It was a dark and stormy night.",
          "The rain fell in torrents, except at occasional intervals."]
# Batched and solo runs differ only where the decoder's convolutions reach past an item's end
# into the batch's padding (as in test_piper_batches).
TOLERANCE = 5e-4


@pytest.fixture(scope="module")
def engine() -> PiperEngine:
    return PiperEngine(threads=1)


def _say(engine: PiperEngine, texts: list[str], seed: int | None) -> list[np.ndarray]:
    options = SynthesisOptions(seed=seed)
    return [r.audio for r in engine.speak(engine.prepare(texts, VOICE, options), VOICE, options)]


def test_a_seed_gives_the_same_audio_whatever_the_session_said_before(
        engine: PiperEngine) -> None:
    (first,) = _say(engine, [TEXT], seed=7)
    _say(engine, OTHERS[:1], seed=7)  # a generator kept in the graph would have moved on
    _say(engine, OTHERS[1:], seed=None)
    (again,) = _say(engine, [TEXT], seed=7)
    assert np.array_equal(first, again)


def test_a_seeded_chunk_sounds_the_same_in_a_batch(engine: PiperEngine) -> None:
    (alone,) = _say(engine, [TEXT], seed=7)
    batched = _say(engine, [OTHERS[1], TEXT, OTHERS[0]], seed=7)[1]
    assert len(batched) == len(alone)
    assert np.abs(batched - alone).max() < TOLERANCE


def test_without_a_seed_or_with_another_the_noise_differs(engine: PiperEngine) -> None:
    seven, eight = (_say(engine, [TEXT], seed)[0] for seed in (7, 8))
    free = [_say(engine, [TEXT], None)[0] for _ in range(2)]
    for one, other in ((seven, eight), tuple(free)):
        assert len(one) != len(other) or np.abs(one - other).max() > 0.05


def test_noise_that_falls_short_is_drawn_again_in_full(monkeypatch: pytest.MonkeyPatch,
                                                       engine: PiperEngine) -> None:
    (expected,) = _say(engine, [TEXT], seed=3)
    monkeypatch.setattr(piper_noise, "FIRST_GUESS_PER_ID", 1.0)  # far too few for the prior
    draws: list[dict[str, int]] = []
    real_draw = NoiseFeeds._draw

    def counted(self: NoiseFeeds, seeds: list[int], sizes: dict[str, int]
                ) -> dict[str, np.ndarray]:
        draws.append(dict(sizes))
        return real_draw(self, seeds, sizes)

    monkeypatch.setattr(NoiseFeeds, "_draw", counted)
    fresh = PiperEngine(threads=1)
    (short_first,) = _say(fresh, [TEXT], seed=3)
    assert len(draws) == 2 and draws[1]["audiopub_noise_1"] > draws[0]["audiopub_noise_1"]
    assert np.array_equal(short_first, expected)
    _say(fresh, OTHERS[:1], seed=3)  # it has learnt how many a phoneme takes: one draw
    assert len(draws) == 3


def _graph_with_noise(shape: list[int], **attributes: float) -> object:
    """like [shape] → RandomNormalLike → noise, as a model."""
    node = helper.make_node("RandomNormalLike", ["like"], ["noise"], dtype=TensorProto.FLOAT,
                            **attributes)
    graph = helper.make_graph(
        [node], "noisy", [helper.make_tensor_value_info("like", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("noise", TensorProto.FLOAT, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)], ir_version=8)


def test_the_rewritten_graph_lays_out_a_rows_values_time_major() -> None:
    model = _graph_with_noise(["batch", 2, "time"])
    assert seeded_noise_inputs(model) == 1
    assert seeded_noise_inputs(model) == 0  # once only
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    like = np.zeros((2, 2, 3), dtype=np.float32)
    values = np.arange(2 * 8, dtype=np.float32).reshape(2, 8)  # more than the 6 it needs
    noise, used = session.run(["noise", "audiopub_noise_0_used"],
                              {"like": like, "audiopub_noise_0": values})
    assert used.tolist() == [6]
    # Value t·C + c at channel c, time t: a longer item keeps a shorter one's values.
    assert noise[0].tolist() == [[0, 2, 4], [1, 3, 5]]
    assert noise[1].tolist() == [[8, 10, 12], [9, 11, 13]]
    short, _ = session.run(["noise", "audiopub_noise_0_used"],
                           {"like": like, "audiopub_noise_0": values[:, :4]})
    assert short[0].tolist() == [[0, 2, 0], [1, 3, 0]]  # padded; NoiseFeeds runs again


@pytest.mark.parametrize("shape, attributes", [
    (["batch", "time"], {}),  # not VITS's [batch, channels, time]
    (["batch", 2, "time"], {"mean": 1.0}),
    (["batch", 2, "time"], {"scale": 0.5}),
])
def test_noise_of_another_form_is_left_to_the_graph(shape: list[object],
                                                    attributes: dict[str, float]) -> None:
    model = _graph_with_noise(shape, **attributes)
    assert seeded_noise_inputs(model) == 0
    assert [node.op_type for node in model.graph.node] == ["RandomNormalLike"]
