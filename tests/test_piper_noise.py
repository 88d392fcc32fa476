"""Piper's noise follows the seed: a chunk sounds the same on every run and in any batch, and
without a seed it varies as VITS means it to."""

from __future__ import annotations

import threading

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.piper import noise as piper_noise
from audiopub.tts.piper.engine import PiperEngine
from audiopub.tts.piper.graph import PHONEME_FRAMES, item_lengths
from audiopub.tts.piper.noise import MARGIN, NoiseFeeds, seeded_noise_inputs

VOICE = "en_US-joe-medium"  # the embedded voice, its noise scales as shipped
TEXT = "Yes. Antidisestablishmentarianism is long. No."
OTHERS = [
    "It was a dark and stormy night.",
    "The rain fell in torrents, except at occasional intervals.",
]
# Batched and solo runs differ only where the decoder's convolutions reach past an item's end
# into the batch's padding (as in test_piper_batches).
TOLERANCE = 5e-4


@pytest.fixture(scope="module")
def engine() -> PiperEngine:
    return PiperEngine(threads=1)


def _say(engine: PiperEngine, texts: list[str], seed: int | None) -> list[np.ndarray]:
    options = SynthesisOptions(seed=seed)
    return [r.audio for r in engine.speak(engine.prepare(texts, VOICE, options), VOICE, options)]


def test_a_seed_gives_the_same_audio_whatever_the_session_said_before(engine: PiperEngine) -> None:
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


def test_noise_that_falls_short_is_drawn_again_in_full(
    monkeypatch: pytest.MonkeyPatch, engine: PiperEngine
) -> None:
    (expected,) = _say(engine, [TEXT], seed=3)
    monkeypatch.setattr(piper_noise, "FIRST_GUESS_PER_ID", 1.0)  # far too few for the prior
    draws: list[dict[str, int]] = []
    real_draw = NoiseFeeds._draw

    def counted(self: NoiseFeeds, seeds: list[int], sizes: dict[str, int]) -> dict[str, np.ndarray]:
        draws.append(dict(sizes))
        return real_draw(self, seeds, sizes)

    monkeypatch.setattr(NoiseFeeds, "_draw", counted)
    fresh = PiperEngine(threads=1)
    (short_first,) = _say(fresh, [TEXT], seed=3)
    assert len(draws) == 2 and draws[1]["audiopub_noise_1"] > draws[0]["audiopub_noise_1"]
    assert np.array_equal(short_first, expected)
    _say(fresh, OTHERS[:1], seed=3)  # it has learnt how many a phoneme takes: one draw
    assert len(draws) == 3


def _reference_noise(seed: int, number: int, count: int) -> np.ndarray:
    """The rule chunks have been spoken by since seeds were introduced, written out on its own:
    noise input K of a row is the standard normal float32 stream of the generator seeded with
    [the row's seed, K]."""
    return np.random.default_rng([seed, number]).standard_normal(count, dtype=np.float32)


def test_a_seed_gives_the_audio_of_the_reference_noise_rule(engine: PiperEngine) -> None:
    """The whole chunks a batch makes are exactly what the graph makes fed the reference noise
    (more values than it takes: it reads the start of each stream)."""
    texts = [OTHERS[0], TEXT, OTHERS[1]]
    options = SynthesisOptions(seed=11)
    spoken = engine.speak(engine.prepare(texts, VOICE, options), VOICE, options)

    loaded = engine._voice(VOICE)
    session, config = loaded.session.inference, loaded.config
    items = [item.data for item in engine.prepare(texts, VOICE, options)]
    ids = np.zeros((len(items), max(len(item.ids) for item in items)), dtype=np.int64)
    for row, item in enumerate(items):
        ids[row, : len(item.ids)] = item.ids
    plenty = 4096 * ids.shape[1]
    feeds = {
        name: np.stack([_reference_noise(11, number, plenty) for _ in items])
        for number, name in enumerate(sorted(loaded.noise.names))
    }
    audio, frames = session.run(
        [loaded.audio_output, PHONEME_FRAMES],
        {
            "input": ids,
            "input_lengths": np.array([len(i.ids) for i in items], dtype=np.int64),
            "scales": np.array(
                [config.noise_scale, config.length_scale, config.noise_w], dtype=np.float32
            ),
            **feeds,
        },
    )
    audio = audio.reshape(len(items), -1)
    expected = [
        np.clip(row[:length], -1.0, 1.0)
        for row, length in zip(audio, item_lengths(frames, audio.shape[1]), strict=True)
    ]

    for result, wave in zip(spoken, expected, strict=True):
        assert np.array_equal(result.audio, wave)


def test_noise_is_drawn_when_prepared_and_speaking_draws_none(
    engine: PiperEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread that speaks (a GPU's) only runs the model: the noise came with `prepare`."""
    options = SynthesisOptions(seed=5)
    _say(engine, [TEXT, *OTHERS], seed=5)  # the voice is loaded and has heard a batch
    (expected,) = _say(engine, [TEXT], seed=5)
    prepared = engine.prepare([TEXT], VOICE, options)

    def no_drawing(*args: object) -> None:
        raise AssertionError("noise drawn while speaking")

    monkeypatch.setattr(piper_noise.np.random, "default_rng", no_drawing)
    (spoken,) = engine.speak(prepared, VOICE, options)
    assert np.array_equal(spoken.audio, expected)


def _graph_with_noise(shape: list[int], **attributes: float) -> object:
    """like [shape] → RandomNormalLike → noise, as a model."""
    node = helper.make_node(
        "RandomNormalLike", ["like"], ["noise"], dtype=TensorProto.FLOAT, **attributes
    )
    graph = helper.make_graph(
        [node],
        "noisy",
        [helper.make_tensor_value_info("like", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("noise", TensorProto.FLOAT, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)], ir_version=8)


def test_the_rewritten_graph_lays_out_a_rows_values_time_major() -> None:
    model = _graph_with_noise(["batch", 2, "time"])
    assert seeded_noise_inputs(model) == 1
    assert seeded_noise_inputs(model) == 0  # once only
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    like = np.zeros((2, 2, 3), dtype=np.float32)
    values = np.arange(2 * 8, dtype=np.float32).reshape(2, 8)  # more than the 6 it needs
    noise, used = session.run(
        ["noise", "audiopub_noise_0_used"], {"like": like, "audiopub_noise_0": values}
    )
    assert used.tolist() == [6]
    # Value t·C + c at channel c, time t: a longer item keeps a shorter one's values.
    assert noise[0].tolist() == [[0, 2, 4], [1, 3, 5]]
    assert noise[1].tolist() == [[8, 10, 12], [9, 11, 13]]
    short, _ = session.run(
        ["noise", "audiopub_noise_0_used"], {"like": like, "audiopub_noise_0": values[:, :4]}
    )
    assert short[0].tolist() == [[0, 2, 0], [1, 3, 0]]  # padded; NoiseFeeds runs again


@pytest.mark.parametrize(
    "shape, attributes",
    [
        (["batch", "time"], {}),  # not VITS's [batch, channels, time]
        (["batch", 2, "time"], {"mean": 1.0}),
        (["batch", 2, "time"], {"scale": 0.5}),
    ],
)
def test_noise_of_another_form_is_left_to_the_graph(
    shape: list[object], attributes: dict[str, float]
) -> None:
    model = _graph_with_noise(shape, **attributes)
    assert seeded_noise_inputs(model) == 0
    assert [node.op_type for node in model.graph.node] == ["RandomNormalLike"]


def test_what_runs_on_two_threads_learn_is_never_lost() -> None:
    """A job's device thread and another thread both learn how many values a phoneme takes;
    the one that learnt more is never overwritten by the other (paused mid-update here)."""
    name = "audiopub_noise_0"
    feeds = NoiseFeeds([name])
    first_paused, second_done = threading.Event(), threading.Event()

    class PausingDict(dict):  # type: ignore[type-arg]
        def __setitem__(self, key: str, value: float | None) -> None:
            if threading.current_thread().name == "first" and not first_paused.is_set():
                first_paused.set()
                second_done.wait(2.0)  # the second thread learns meanwhile, if it may
            super().__setitem__(key, value)

    feeds._per_id = PausingDict(feeds._per_id)

    def learn(used: int) -> None:
        drawn = feeds.draw([1], phoneme_ids=10)
        feeds.run(lambda given: [np.zeros(1), np.array([used])], [1], 10, drawn)

    first = threading.Thread(target=learn, args=(100,), name="first")
    first.start()
    assert first_paused.wait(60)
    second = threading.Thread(target=lambda: (learn(1000), second_done.set()), name="second")
    second.start()
    first.join(60)
    second.join(60)

    # 1000 values for 10 ids, with the margin: the second thread's lesson is kept.
    assert feeds.draw([1], phoneme_ids=10).feeds[name].shape[1] == int(MARGIN * 1000) + 1
