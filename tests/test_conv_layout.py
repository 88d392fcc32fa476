"""1-D convolutions run as 2-D ones: same outputs, cached once, never in the way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from audiopub import settings
from audiopub.tts import conv_layout, graph_rewrite, onnx_runtime
from audiopub.tts.conv_layout import CONV2D_STEP

RNG = np.random.default_rng(7)


def _conv(
    name: str, x: str, weight: str, out: str, bias: str | None = None, **attributes: object
) -> onnx.NodeProto:
    inputs = [x, weight] + ([bias] if bias else [])
    return helper.make_node("Conv", inputs, [out], name=name, **attributes)


def _weight(name: str, *shape: int) -> TensorProto:
    """Scaled like a trained layer's (outputs near 1), so float rounding stays at its usual size."""
    scale = 1 / np.sqrt(np.prod(shape[1:]))
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def conv_model(opset: int = 15) -> onnx.ModelProto:
    """VITS-like 1-D convolutions: padding, dilation, stride, groups, bias, and one weight
    shared by two convolutions (left alone)."""
    nodes = [
        _conv("dilated", "x", "w1", "a", bias="b1", kernel_shape=[3], dilations=[2], pads=[2, 2]),
        helper.make_node("LeakyRelu", ["a"], ["a_act"], alpha=0.1),
        _conv(
            "strided_grouped",
            "a_act",
            "w2",
            "b",
            kernel_shape=[5],
            strides=[2],
            pads=[2, 1],
            group=2,
        ),
        _conv("shared_1", "b", "w3", "c1", pads=[1, 1]),
        _conv("shared_2", "c1", "w3", "c2", pads=[1, 1]),
        helper.make_node("Add", ["c1", "c2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "convs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, "length"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, "out_length"])],
        [_weight("w1", 6, 4, 3), _weight("b1", 6), _weight("w2", 8, 3, 5), _weight("w3", 8, 8, 3)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


@pytest.mark.parametrize("length", [3, 37, 400])
def test_rewritten_model_computes_the_same(length: int) -> None:
    x = RNG.standard_normal((1, 4, length)).astype(np.float32)
    model = conv_model()
    expected = _run(model, x)

    assert conv_layout.conv1d_as_2d(model) == 2  # the shared weight stays 1-D
    onnx.checker.check_model(model)
    kinds = [node.op_type for node in model.graph.node]
    assert kinds.count("Unsqueeze") == kinds.count("Squeeze") == 2
    np.testing.assert_allclose(_run(model, x), expected, rtol=1e-5, atol=1e-5)


def test_models_before_opset_13_are_left_alone() -> None:
    model = conv_model(opset=12)
    before = model.SerializeToString()
    assert conv_layout.conv1d_as_2d(model) == 0
    assert model.SerializeToString() == before


def _save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def test_the_rewrite_is_written_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _save(conv_model(), tmp_path / "voice.onnx")
    target = tmp_path / "cache" / "voice.2d.onnx"
    assert graph_rewrite.write_rewritten(source, target, [CONV2D_STEP])
    assert [p.name for p in target.parent.iterdir()] == [target.name]
    onnx.checker.check_model(onnx.load(str(target)))

    def save_half(model: onnx.ModelProto, path: str) -> None:
        Path(path).write_bytes(model.SerializeToString()[:100])
        raise OSError("disk full")

    target.unlink()
    monkeypatch.setattr(conv_layout.onnx, "save", save_half)
    with pytest.raises(OSError, match="disk full"):
        graph_rewrite.write_rewritten(source, target, [CONV2D_STEP])
    assert list(target.parent.iterdir()) == []


def test_sessions_load_the_rewrite_from_the_cache(tmp_path: Path) -> None:
    source = _save(conv_model(), tmp_path / "voice.onnx")
    onnx_runtime.create_session(source, use_gpu=False, rewrite=[CONV2D_STEP])
    (cached,) = settings.model_cache_dir().glob("voice.*.onnx")
    made = cached.stat().st_mtime_ns
    session = onnx_runtime.create_session(source, use_gpu=False, rewrite=[CONV2D_STEP])
    assert cached.stat().st_mtime_ns == made  # reused, not made again
    x = RNG.standard_normal((1, 4, 50)).astype(np.float32)
    np.testing.assert_allclose(
        session.inference.run(None, {"x": x})[0],
        _run(conv_model_from(source), x),
        rtol=1e-5,
        atol=1e-5,
    )

    # A changed model file is a new cache entry, and the stale one goes.
    _save(conv_model(), source)
    onnx_runtime.create_session(source, use_gpu=False, rewrite=[CONV2D_STEP])
    (fresh,) = settings.model_cache_dir().glob("voice.*.onnx")
    assert fresh != cached


def conv_model_from(path: Path) -> onnx.ModelProto:
    return onnx.load(str(path))


def test_a_failed_rewrite_falls_back_to_the_model_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def fail(source: Path, target: Path, steps: object) -> bool:
        raise OSError("read-only file system")

    monkeypatch.setattr(graph_rewrite, "write_rewritten", fail)
    source = _save(conv_model(), tmp_path / "voice.onnx")
    session = onnx_runtime.create_session(source, use_gpu=False, rewrite=[CONV2D_STEP])
    x = RNG.standard_normal((1, 4, 20)).astype(np.float32)
    assert session.inference.run(None, {"x": x})[0].shape[:2] == (1, 8)
    assert "not rewritten (conv2d-v1): read-only file system" in caplog.text
    assert not list(settings.model_cache_dir().glob("*.onnx"))


def test_engine_processes_starting_together_share_one_rewrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes both saw no cached file; the one writing second must not delete the
    first one's file, which that process is about to load."""
    source = _save(conv_model(), tmp_path / "voice.onnx")
    cached = graph_rewrite.rewritten(source, [CONV2D_STEP])  # the first process made it
    real_is_file = Path.is_file
    monkeypatch.setattr(
        Path,
        "is_file",  # the second one looked before it was there
        lambda self: False if self == cached else real_is_file(self),
    )
    still_there: list[bool] = []
    real_write = graph_rewrite.write_rewritten

    def write(model: Path, target: Path, steps: object) -> bool:
        still_there.append(target.exists())
        return real_write(model, target, steps)  # type: ignore[arg-type]

    monkeypatch.setattr(graph_rewrite, "write_rewritten", write)
    assert graph_rewrite.rewritten(source, [CONV2D_STEP]) == cached
    assert still_there == [True] and real_is_file(cached)
