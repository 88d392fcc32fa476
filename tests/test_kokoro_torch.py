"""Kokoro-82M on PyTorch beside ONNX Runtime: the real int8 model, its weights dequantized into
the PyTorch network, spoken through the same engine (phonemes, pieces, word times, trims)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from audiopub.errors import EngineUnavailable
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.kokoro import torch_runtime, torch_weights
from audiopub.tts.kokoro.engine import KokoroEngine

if TYPE_CHECKING:
    from audiopub.listen import Listener

pytest.importorskip("torch", reason="scripts/test.sh installs torch==2.13.0")
# The real 82M network on PyTorch's CPU kernels: a sentence takes tens of seconds on a busy
# two-core machine, its first run also making the weights from the ONNX model.
pytestmark = [pytest.mark.timeout(900), pytest.mark.usefixtures("torch_on_one_thread")]

# English in a Japanese voice (Kokoro's voices read every language it phonemises; the test
# voices are Japanese): words Whisper can be checked on one by one.
TEXT = "The rain had stopped by the time the train reached the coast, and the harbour was quiet."
OPTIONS = SynthesisOptions(language="en")


@pytest.fixture(scope="module")
def folder(kokoro_torch_folder: Path) -> Path:
    return kokoro_torch_folder  # its weights shared with the batch module (conftest)


@pytest.fixture(scope="module")
def spoken(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The same text by both runtimes: their prepared pieces and results."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIOPUB_DATA_DIR", str(tmp_path_factory.mktemp("kokoro-cache")))
        out: dict[str, object] = {}
        for runtime in ("onnx", "torch"):
            # One thread: ORT's pool of every core spins while it waits, which on a busy
            # machine costs CPU time and gives nothing (the same samples either way).
            engine = KokoroEngine(folder, runtime=runtime, threads=1)
            out[f"{runtime}-prepared"] = engine.prepare([TEXT], "jf_alpha", OPTIONS)
            out[runtime] = engine.synthesize([TEXT], "jf_alpha", OPTIONS)[0]
            out[f"{runtime}-engine"] = engine
    return out


def _log_spectrogram(audio: np.ndarray) -> np.ndarray:
    frames = np.lib.stride_tricks.sliding_window_view(audio, 1024)[::256] * np.hanning(1024)
    return np.log(np.abs(np.fft.rfft(frames, axis=1)) + 1e-4)


def test_torch_speaks_the_same_phonemes_for_as_long_and_as_onnx_runtime(spoken) -> None:
    onnx, torch = spoken["onnx"], spoken["torch"]
    assert [p.data for p in spoken["onnx-prepared"]] == [p.data for p in spoken["torch-prepared"]]
    # Durations: ORT quantizes the activations of its int8 matrix products, PyTorch runs the
    # dequantized weights on float activations, so a token whose duration lies near .5 frames
    # rounds the other way now and then. Measured: 3 of this sentence's 223 frames (1.3 %),
    # 2 of a 505-frame Japanese text's (0.4 %); over a passage the totals agree within 1 %
    # (the test below). Every word gets a start either way.
    assert abs(len(torch.audio) - len(onnx.audio)) <= 0.02 * len(onnx.audio)
    assert torch.word_starts is not None and onnx.word_starts is not None
    assert len(torch.word_starts) == len(onnx.word_starts)
    assert torch.audio.dtype == np.float32 and np.abs(torch.audio).max() <= 1.0
    # The sound: the export's iSTFT is an approximation (no window normalisation) and its
    # matrix products quantize activations, so the waveforms differ sample by sample; their
    # spectra agree. Measured: the long-term log spectra correlate at 0.988 (this sentence)
    # and 0.993 (a Japanese one), the loudness contours (one time-warped to the other's
    # length) at 0.92 and 0.86; with the ORT run's own durations forced, the log spectrograms
    # frame by frame at 0.96.
    a, b = _log_spectrogram(onnx.audio), _log_spectrogram(torch.audio)
    assert np.corrcoef(a.mean(axis=0), b.mean(axis=0))[0, 1] > 0.97
    contour_a = a.mean(axis=1)
    contour_b = np.interp(
        np.linspace(0, 1, len(contour_a)), np.linspace(0, 1, len(b)), b.mean(axis=1)
    )
    assert np.corrcoef(contour_a, contour_b)[0, 1] > 0.85


# A passage of ordinary sentences (none chosen for how it came out).
PASSAGE = (
    TEXT,
    "She opened the letter slowly, as if the words inside might change if she hurried.",
    "Nobody in the village remembered who had planted the old oak at the crossroads.",
    "He counted the steps to the door twice, then knocked, and waited in the cold.",
    "By morning the fog had lifted, and the boats went out one after another.",
    "It was the best of times, it was the worst of times, it was the age of wisdom.",
)


def _onnx_durations(model: Path):
    """ONNX Runtime's own session on the graph cut down to what the durations need (the
    decoder left out: 0.2 s a sentence instead of 6)."""
    import onnx
    import onnxruntime as ort
    from onnx.utils import Extractor

    from audiopub.tts.kokoro.graph import TOKEN_FRAMES, expose_token_frames

    graph = onnx.load(str(model))
    expose_token_frames(graph)
    inputs = [value.name for value in graph.graph.input]
    front = Extractor(graph).extract_model(inputs, [TOKEN_FRAMES])
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # as the engines here: no pool spinning beside the test
    session = ort.InferenceSession(
        front.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return lambda ids, row: session.run(
        [TOKEN_FRAMES], dict(zip(inputs, (ids, row, np.ones(1, np.float32)), strict=True))
    )[0].reshape(-1)


def test_over_a_passage_torch_predicts_the_durations_onnx_runtime_does(
    spoken, folder: Path
) -> None:
    import torch

    from audiopub.tts.kokoro.engine import PAD

    engine = KokoroEngine(folder, runtime="onnx")
    style = engine.files.style("jf_alpha")
    onnx_frames = _onnx_durations(engine.model_path)
    # The torch engine's own network (its weights made from this model), not a second copy.
    network = spoken["torch-engine"]._load_torch().network
    total = {"onnx": 0, "torch": 0}
    tokens = differing = 0
    for prepared in engine.prepare(list(PASSAGE), "jf_alpha", OPTIONS):
        for piece in prepared.data:
            ids = np.array([[PAD, *piece.tokens, PAD]], dtype=np.int64)
            row = style[len(piece.tokens) - 1].reshape(1, -1)
            ort_frames = onnx_frames(ids, row).astype(np.int64)
            with torch.inference_mode():
                frames, _ = network.durations(torch.from_numpy(ids), torch.tensor(row), 1.0)
            torch_frames = frames[0].numpy()  # [batch, tokens]: a batch of one
            assert len(torch_frames) == len(ort_frames)
            # A flip of a rounding, never a different prediction. Measured: 17 tokens of the
            # passage's 505 a frame apart, one two frames (a token near .5 frames of ORT's
            # quantized activations rounds the other way).
            assert np.abs(torch_frames - ort_frames).max() <= 2
            tokens += len(ort_frames)
            differing += int((torch_frames != ort_frames).sum())
            total["onnx"] += int(ort_frames.sum())
            total["torch"] += int(torch_frames.sum())
    # Measured: 1,277 frames against ORT's 1,272 (+0.39 %), 18 of 505 tokens differing.
    # ORT against itself, its embedding layer norm's weights moved by one float step (what
    # another CPU's float kernels do to it): 4 tokens differ, one sentence 0.9 % shorter. A
    # single sentence's total can so differ by 1-2 %; a passage's evens out.
    assert abs(total["torch"] - total["onnx"]) <= 0.01 * total["onnx"]
    assert differing <= 0.08 * tokens


def test_the_weights_are_cached_beside_the_model_and_made_again_when_it_changes(
    spoken, folder: Path
) -> None:
    model = spoken["torch-engine"].model_path
    cache = torch_weights.cache_path(model)
    assert cache.is_file()
    made = cache.stat().st_mtime_ns
    torch_weights.load_state(model)
    assert cache.stat().st_mtime_ns == made  # current: read, not made again
    stat = model.stat()
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    state = torch_weights.load_state(model)
    assert cache.stat().st_mtime_ns != made
    assert "decoder.generator.conv_post.weight" in state


def test_choosing_torch_without_pytorch_says_what_to_install(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # as if it were not installed
    with pytest.raises(EngineUnavailable, match=r"audiopub\[torch\]"):
        KokoroEngine(folder, runtime="torch")


def test_auto_takes_torch_only_where_cuda_works_through_torch_and_not_ort(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert torch_runtime.choose_runtime("auto", True, ort_cuda_works=False) == "torch"
    assert "Kokoro runtime auto: torch" in caplog.text  # it says which it chose
    assert torch_runtime.choose_runtime("auto", True, ort_cuda_works=True) == "onnx"
    assert torch_runtime.choose_runtime("auto", False, ort_cuda_works=False) == "onnx"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert torch_runtime.choose_runtime("auto", True, ort_cuda_works=False) == "onnx"
    with pytest.raises(EngineUnavailable):
        torch_runtime.choose_runtime("tensorflow", True, ort_cuda_works=False)


@pytest.mark.parametrize(
    ("capability", "dtype", "tf32"),
    [
        ((9, 0), "bfloat16", True),
        ((8, 0), "bfloat16", True),
        ((7, 5), "float16", False),
        ((7, 0), "float16", False),
        ((6, 1), "float32", False),
    ],
)
def test_precision_follows_the_compute_capability(capability, dtype, tf32) -> None:
    chosen = torch_runtime.precision_for("cuda", capability, allow_reduced=True)
    assert (chosen.dtype, chosen.tf32) == (dtype, tf32)
    assert torch_runtime.precision_for("cpu", None, True).dtype == "float32"
    assert torch_runtime.precision_for("cuda", capability, False).dtype == "float32"


def test_the_runtime_is_a_setting_the_environment_and_the_command_line_choose(
    folder: Path,
) -> None:
    from audiopub import settings
    from audiopub.cli import _build_parser
    from audiopub.tts.kokoro import KOKORO
    from audiopub.tts.kokoro.environment import RUNTIME

    assert RUNTIME in KOKORO.settings
    assert RUNTIME.read(settings.from_environ({})) == "onnx"
    assert RUNTIME.read(settings.from_environ({"AUDIOPUB_KOKORO_RUNTIME": "Torch"})) == "torch"
    args = _build_parser().parse_args(["convert", "book.epub", "--runtime", "auto"])
    assert args.runtime == "auto"
    bench = _build_parser().parse_args(["bench", "--engine", "kokoro", "--runtime", "onnx,torch"])
    assert bench.runtime == ["onnx", "torch"]
    # An engine loaded under one runtime is not the one the other asks for: the registry's
    # stamp of Kokoro's folder says which.
    base = settings.from_environ({})
    with settings.installed(base):
        onnx_stamp = KOKORO.stamp(folder)
    with settings.installed(RUNTIME.given(base, "torch")):
        assert KOKORO.stamp(folder) != onnx_stamp
        assert KOKORO.load(_request(folder)).runtime == "torch"


def _request(folder: Path):
    from audiopub.tts.engine_info import LoadRequest

    return LoadRequest(folder, use_gpu=False, threads=1, device_id=0)


def _recall(text: str, heard: str) -> float:
    """How many of the text's words the transcript holds, in order: their longest common
    subsequence over the text's word count."""
    wanted, got = (re.findall(r"[a-z]+", words.lower()) for words in (text, heard))
    row = [0] * (len(got) + 1)
    for word in wanted:
        previous = 0
        for j, said in enumerate(got, 1):
            previous, row[j] = row[j], previous + 1 if word == said else max(row[j], row[j - 1])
    return row[-1] / len(wanted)


def test_whisper_hears_every_word_the_torch_runtime_says(
    spoken, whisper_listener: Listener
) -> None:
    from audiopub.listen.listener import Clip

    # Whisper loaded once for the run (conftest), as the other modules that hear take it.
    heard = whisper_listener.hear(
        [Clip(spoken[runtime].audio, 24_000, "en") for runtime in ("onnx", "torch")]
    )
    onnx_recall, torch_recall = (_recall(TEXT, said) for said in heard)
    assert torch_recall >= 0.8
    assert torch_recall >= onnx_recall - 0.1


def test_the_published_checkpoint_layout_loads_into_the_same_weights(
    spoken, tmp_path: Path
) -> None:
    """kokoro-v1_0.pth's layout: a state per part, keys under `module.`, convolutions as
    weight-norm pairs (g, v). Written here from the ONNX model's weights, it loads back to them."""
    import torch
    from torch import nn

    state = torch_weights.load_state(spoken["torch-engine"].model_path)
    # The engine's network for the module names: the same KokoroNetwork, not another one built.
    network = spoken["torch-engine"]._load_torch().network
    convolutions = {
        f"{name}.weight"
        for name, module in network.named_modules()
        if isinstance(module, (nn.Conv1d, nn.ConvTranspose1d))
    }
    parts: dict[str, dict[str, torch.Tensor]] = {}
    for key, value in state.items():
        part, rest = key.split(".", 1)
        tensors = parts.setdefault(part, {})
        if key in convolutions:
            norm = value.flatten(1).norm(dim=1).reshape(-1, *([1] * (value.dim() - 1)))
            stem = rest.removesuffix(".weight")
            # Both of PyTorch's spellings, as checkpoints of either age have them.
            g, v = (
                (f"{stem}.weight_g", f"{stem}.weight_v")
                if len(tensors) % 2
                else (
                    f"{stem}.parametrizations.weight.original0",
                    f"{stem}.parametrizations.weight.original1",
                )
            )
            # v at any scale; a channel int8 rounded to all zeros gets g = 0 and some v.
            direction = torch.where(norm == 0, torch.ones_like(value), value * 3.0)
            tensors[f"module.{g}"], tensors[f"module.{v}"] = norm, direction
        else:
            tensors[f"module.{rest}"] = value
    checkpoint = tmp_path / "kokoro-v1_0.pth"
    torch.save(parts, checkpoint)
    loaded = torch_weights.state_from_checkpoint(checkpoint)
    assert set(loaded) == set(state)
    for key, value in state.items():
        torch.testing.assert_close(loaded[key], value, rtol=1e-5, atol=1e-6)


def test_running_out_of_gpu_memory_frees_the_cache_and_says_out_of_memory(
    spoken, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from audiopub.tts.batching import is_out_of_memory

    runtime = spoken["torch-engine"]._load_torch()
    emptied: list[bool] = []

    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    # The CUDA boundary: the network's first kernel fails, the allocator is asked to let go.
    monkeypatch.setattr(runtime.network.bert, "forward", out_of_memory)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: emptied.append(True))
    with pytest.raises(torch.cuda.OutOfMemoryError) as raised:
        spoken["torch-engine"].synthesize([TEXT], "jf_alpha", OPTIONS)
    assert is_out_of_memory(raised.value)
    assert emptied == [True]


def test_a_one_thread_engine_leaves_the_process_threads_to_the_engine_beside_it(
    spoken,
) -> None:
    import torch

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        torch_runtime.TorchKokoro(spoken["torch-engine"].model_path, threads=1)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def _ort_int8(nodes, initializers, x: np.ndarray, out_shape) -> np.ndarray:
    """A small graph of the int8 export's own ops, run by ONNX Runtime on the CPU."""
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        nodes,
        "int8",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        [numpy_helper.from_array(value, name) for name, value in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(["y"], {"x": x})[0]


def test_the_int8_layers_do_onnx_runtimes_integer_arithmetic() -> None:
    """The export's pattern for a linear layer (DynamicQuantizeLinear, MatMulInteger with int8
    weights scaled per output, × scales, + bias) and a convolution (uint8 weights, one scale
    and zero point, its bias floor-quantized and added as an integer), against ONNX Runtime.
    Full-range int8 weights make the pair sums saturate where this CPU's ORT saturates them."""
    import torch
    from onnx import helper
    from torch import nn

    from audiopub.tts.kokoro.torch_int8 import Int8Conv1d, Int8Linear, pairs_saturate

    rng = np.random.default_rng(7)
    x = rng.normal(size=(1, 9, 16)).astype(np.float32) + 0.3
    weight = rng.integers(-127, 128, size=(16, 8)).astype(np.int8)
    scale = rng.uniform(0.001, 0.01, size=8).astype(np.float32)
    bias = rng.normal(size=8).astype(np.float32)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("MatMulInteger", ["xq", "w", "xz", "wz"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=1),
        helper.make_node("Mul", ["xs", "ws"], ["s"]),
        helper.make_node("Mul", ["accf", "s"], ["prod"]),
        helper.make_node("Add", ["b", "prod"], ["y"]),
    ]
    wz = np.zeros(8, np.int8)
    expected = _ort_int8(nodes, {"w": weight, "wz": wz, "ws": scale, "b": bias}, x, [1, 9, 8])
    linear = nn.Linear(16, 8)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(weight.T.astype(np.float32) * scale[:, None]))
        linear.bias.copy_(torch.from_numpy(bias))
    zero = torch.from_numpy(wz.astype(np.float32))
    twin = Int8Linear(linear, torch.from_numpy(scale), zero, saturate=pairs_saturate())
    with torch.inference_mode():
        got = twin(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)

    signal = rng.normal(size=(1, 6, 20)).astype(np.float32)
    kernel = rng.integers(0, 256, size=(4, 6, 3)).astype(np.uint8)
    k_zero, k_scale = np.array(128, np.uint8), np.array(0.004, np.float32)
    conv_bias = rng.normal(size=4).astype(np.float32)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["acc"], pads=[1, 1]),
        helper.make_node("Mul", ["xs", "ws"], ["s"]),
        helper.make_node("Div", ["b", "s"], ["bq"]),
        helper.make_node("Floor", ["bq"], ["bf"]),
        helper.make_node("Cast", ["bf"], ["bi"], to=6),
        helper.make_node("Reshape", ["bi", "shape"], ["b3"]),
        helper.make_node("Add", ["acc", "b3"], ["sum"]),
        helper.make_node("Cast", ["sum"], ["sumf"], to=1),
        helper.make_node("Mul", ["sumf", "s"], ["y"]),
    ]
    initializers = {
        "w": kernel,
        "wz": k_zero,
        "ws": k_scale,
        "b": conv_bias,
        "shape": np.array([1, -1, 1], np.int64),
    }
    expected = _ort_int8(nodes, initializers, signal, [1, 4, 20])
    conv = nn.Conv1d(6, 4, 3, padding=1)
    with torch.no_grad():
        conv.weight.copy_(torch.from_numpy((kernel.astype(np.float32) - 128) * k_scale))
        conv.bias.copy_(torch.from_numpy(conv_bias))
    twin_conv = Int8Conv1d(
        conv, torch.from_numpy(k_scale.reshape(1)), torch.tensor([128.0], dtype=torch.float32)
    )
    with torch.inference_mode():
        got = twin_conv(torch.from_numpy(signal)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.fixture(scope="module")
def short_run(spoken) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """A short text's ids and style row, and what the eager network makes of them."""
    engine = spoken["torch-engine"]
    (item,) = engine.prepare(["It was late."], "jf_alpha", OPTIONS)
    tokens = item.data[0].tokens
    ids = np.array([[0, *tokens, 0]], dtype=np.int64)
    row = engine._mix("jf_alpha").style(engine.files)[len(tokens) - 1].reshape(1, -1)
    return ids, row, engine._load_torch().run(ids, row, 1.0)


def test_compiled_parts_speak_exactly_as_the_eager_network(spoken, short_run, caplog) -> None:
    """torch.compile's real wrapping and tracing, with the backend that runs the traced graph
    as it is (no C compiler here): the same durations and the same samples."""
    ids, row, (audio, frames) = short_run
    runtime = torch_runtime.TorchKokoro(spoken["torch-engine"].model_path, compile_backend="eager")
    assert runtime.compiled
    got_audio, got_frames = runtime.run(ids, row, 1.0)
    assert runtime.compiled  # it ran compiled: nothing fell back to eager
    assert "torch.compile failed" not in caplog.text
    np.testing.assert_array_equal(got_frames, frames)
    np.testing.assert_array_equal(got_audio, audio)


def test_a_part_that_fails_to_compile_runs_eager_and_says_why_once(
    spoken, short_run, caplog
) -> None:
    ids, row, (audio, frames) = short_run

    def no_compiler(graph, example_inputs):  # type: ignore[no-untyped-def]
        raise RuntimeError("no C compiler on this machine")

    runtime = torch_runtime.TorchKokoro(
        spoken["torch-engine"].model_path, compile_backend=no_compiler
    )
    got_audio, got_frames = runtime.run(ids, row, 1.0)
    assert not runtime.compiled
    failures = [r.getMessage() for r in caplog.records]
    failures = [message for message in failures if "torch.compile failed" in message]
    assert len(failures) == 1 and "no C compiler on this machine" in failures[0]
    np.testing.assert_array_equal(got_frames, frames)
    np.testing.assert_array_equal(got_audio, audio)
