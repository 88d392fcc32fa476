"""Kokoro's PyTorch weights from the model a person already has: the ONNX export's initializers
(int8 dequantized, fp32 as they are), or the published checkpoint (kokoro-v1_0.pth), written
once as safetensors beside the model and made again when the model file changes.

The ONNX export keeps most parameter names (`encoder.predictor.F0.0.conv1.bias`); the rest are
anonymous constants (`onnx::MatMul_6548_3`, weight-normalised convolutions folded into
`/encoder/F0.0/Mul_output_0`), named here by the node that consumes them, whose name is the
module path. Dynamic quantization stores a weight as integers with a scale and zero point
(per output channel for matrix products, per tensor for convolutions, per direction for LSTMs);
dequantizing gives the float weights ORT's integer kernels approximate. Each int8 weight's
scale and zero point are kept beside it (`<key>_scale`, `<key>_zero_point`), so that the
network can do ORT's integer arithmetic itself (see torch_int8).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np

from audiopub.atomic import atomic_write
from audiopub.errors import ModelMissing

# PyTorch and safetensors come with the optional torch extra, and they and onnx are heavy to
# import: imported inside the functions that read or write weights.
if TYPE_CHECKING:
    import onnx
    import torch

log = logging.getLogger(__name__)

CACHE_SUFFIX: Final = ".torch.safetensors"
# Part of the cache's stamp: a cache made by an older loader (without the int8 scales) is made
# again.
_FORMAT: Final = 2
SCALE: Final = "_scale"
ZERO_POINT: Final = "_zero_point"
_STAMP_KEY: Final = "audiopub_source"
_QUANTIZED: Final = "_quantized"
# ONNX LSTM gates are input, output, forget, cell; PyTorch's are input, forget, cell, output.
_GATE_ORDER: Final = (0, 2, 3, 1)
_INTEGER_OPS: Final = ("MatMulInteger", "ConvInteger", "DynamicQuantizeLSTM")
# Parameters of the published model the network has no use for in inference.
_UNUSED: Final = re.compile(r"(^bert\.pooler\.|position_ids$|\.norm\.(weight|bias)$)")


def cache_path(model: Path) -> Path:
    return model.with_name(model.name + CACHE_SUFFIX)


def source_stamp(model: Path) -> str:
    """Says which model file the cache was made from: its size and modification time."""
    stat = model.stat()
    return json.dumps(
        {
            "file": model.name,
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "format": _FORMAT,
        }
    )


def load_state(model: Path) -> dict[str, torch.Tensor]:
    """The network's state for `model` (.onnx or .pth), from the cache when it is current."""
    from safetensors.torch import load_file, save_file  # see the top

    cached = cache_path(model)
    stamp = source_stamp(model)
    if cached.is_file():
        from safetensors import safe_open  # see the top

        with safe_open(str(cached), framework="pt") as handle:
            current = (handle.metadata() or {}).get(_STAMP_KEY) == stamp
        if current:
            return load_file(str(cached))
        log.info("Kokoro's PyTorch weights are older than %s; making them again", model.name)
    state = state_from_checkpoint(model) if model.suffix == ".pth" else state_from_onnx(model)
    try:
        with atomic_write(cached) as temp:
            save_file(state, str(temp), metadata={_STAMP_KEY: stamp})
    except OSError as exc:  # a read-only model folder: use the weights without a cache
        log.warning("Could not cache Kokoro's PyTorch weights at %s: %s", cached, exc)
    return state


# --- from the ONNX export ---------------------------------------------------------------------


def state_from_onnx(path: Path) -> dict[str, torch.Tensor]:
    import onnx  # see the top
    import torch  # see the top
    from onnx import numpy_helper  # see the top

    model = onnx.load(str(path))
    graph = model.graph
    arrays = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    state: dict[str, np.ndarray] = {}
    for name, array in arrays.items():
        if array.dtype.kind not in "fiu" or name.endswith((SCALE, ZERO_POINT)):
            continue
        users = consumers.get(name, [])
        if not users:
            continue
        node = users[0]
        quantization: tuple[np.ndarray, np.ndarray] | None = None
        if name.endswith(_QUANTIZED):
            array, scale, zero = _dequantize(name, array, node, arrays)
            base = name[: -len(_QUANTIZED)]
            if node.op_type in _INTEGER_OPS:  # not a DequantizeLinear: ORT's product is int8
                quantization = scale, zero
        elif array.dtype.kind != "f":
            continue
        else:
            base = name
        if node.op_type in ("LSTM", "DynamicQuantizeLSTM"):
            _add_lstm(state, _module_of(node.name), node, name, array, quantization)
            continue
        key = _parameter_name(base, node)
        if key is None:
            continue
        if node.op_type in ("MatMul", "MatMulInteger") and array.ndim == 2:
            array = array.T  # x @ W in the graph; Linear keeps W as [out, in]
        if key not in state:
            state[key] = array
            if quantization is not None:
                state[key + SCALE], state[key + ZERO_POINT] = quantization
    # np.array copies: the initializers' buffers are read-only, tensors must own theirs.
    return {
        key: torch.from_numpy(np.array(value, np.float32, order="C"))
        for key, value in state.items()
    }


def _dequantize(
    name: str, values: np.ndarray, node: onnx.NodeProto, arrays: Mapping[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q − zero point) × scale, the zero point and scale those the consuming node reads; with
    the scale and zero point (per output channel, per direction or a single value)."""
    base = name[: -len(_QUANTIZED)]
    scale = arrays.get(base + "_scale")
    zero = _input_beside(node, name, arrays, {"MatMulInteger": 3, "ConvInteger": 3})
    if node.op_type == "DequantizeLinear":
        scale, zero = (
            arrays[node.input[1]],
            arrays.get(node.input[2]) if len(node.input) > 2 else None,
        )
    if node.op_type == "DynamicQuantizeLSTM":
        slot = list(node.input).index(name)  # W at 1 (scale 8, zero 9), R at 2 (10, 11)
        scale = arrays[node.input[8 if slot == 1 else 10]]
        zero = arrays[node.input[9 if slot == 1 else 11]]
    if scale is None:
        raise ModelMissing(f"The Kokoro model's {name} has no scale to dequantize it with")
    values = values.astype(np.float32)
    zero_f = np.zeros(1, np.float32) if zero is None else zero.astype(np.float32)
    scale = scale.astype(np.float32)
    if node.op_type == "DynamicQuantizeLSTM":  # per direction: [2] against [2, in, gates]
        zero_f, scale = zero_f.reshape(-1), scale.reshape(-1)
        return (values - zero_f[:, None, None]) * scale[:, None, None], scale, zero_f
    if values.ndim == 2 and scale.ndim == 1 and node.op_type == "MatMulInteger":
        zero_f = np.broadcast_to(zero_f, scale.shape)
        return (values - zero_f) * scale, scale, zero_f  # per output column
    zero_f, scale = zero_f.reshape(-1)[:1], scale.reshape(-1)[:1]
    return (values - zero_f[0]) * scale[0], scale, zero_f  # per tensor


def _input_beside(
    node: onnx.NodeProto, name: str, arrays: Mapping[str, np.ndarray], slots: Mapping[str, int]
) -> np.ndarray | None:
    slot = slots.get(node.op_type)
    if slot is None or len(node.input) <= slot or not node.input[slot]:
        return None
    return arrays.get(node.input[slot])


def _module_of(node_name: str) -> str:
    """The module path of an exported node: "/encoder/text_encoder/cnn.0/cnn.0.0/Conv_quant"
    is text_encoder.cnn.0.0, "/encoder/F0.0/conv1/…" predictor.F0.0.conv1 (F0Ntrain's
    scopes lack the predictor), "/decoder/decoder/asr_res/asr_res.0/…" decoder.asr_res.0."""
    parts = [part for part in node_name.split("/") if part][:-1]
    if parts[:2] == ["decoder", "decoder"]:
        parts = parts[1:]
    elif parts[:1] == ["encoder"]:
        parts = parts[1:]
        if parts and re.fullmatch(r"(F0|N)\.\d+|shared", parts[0]):
            parts = ["predictor", *parts]
    collapsed: list[str] = []
    for part in parts:
        if collapsed and part.startswith(collapsed[-1] + "."):
            collapsed[-1] = part
        else:
            collapsed.append(part)
    return ".".join(collapsed)


def _parameter_name(base: str, node: onnx.NodeProto) -> str | None:
    """The network's key for an initializer: its own name where the export kept it, else
    `weight` of the module whose Conv or MatMul reads it (None: a constant, no parameter)."""
    if base.startswith("decoder.decoder."):
        return base.removeprefix("decoder.")
    if base.startswith("encoder."):
        return base.removeprefix("encoder.")
    weight_ops = ("Conv", "ConvInteger", "ConvTranspose", "MatMul", "MatMulInteger")
    if node.op_type in weight_ops and node.input[1] in (base, base + _QUANTIZED):
        return _module_of(node.name) + ".weight"
    return None


def _add_lstm(
    state: dict[str, np.ndarray],
    module: str,
    node: onnx.NodeProto,
    name: str,
    array: np.ndarray,
    quantization: tuple[np.ndarray, np.ndarray] | None,
) -> None:
    """ONNX's W [dirs, in, 4H] (quantized; [dirs, 4H, in] plain), R likewise and B [dirs, 8H]
    as PyTorch's weight_ih/hh and bias_ih/hh per direction, gates reordered; a quantized
    weight's scale and zero point per direction beside it."""
    slot = list(node.input).index(name)
    if slot not in (1, 2, 3):
        return
    hidden = array.shape[-1] // (8 if slot == 3 else 4)
    if slot in (1, 2) and node.op_type == "DynamicQuantizeLSTM":
        array = array.transpose(0, 2, 1)
    for direction, suffix in enumerate(("_l0", "_l0_reverse")):
        if slot == 3:
            state[f"{module}.bias_ih{suffix}"] = _reorder(array[direction, : 4 * hidden], hidden)
            state[f"{module}.bias_hh{suffix}"] = _reorder(array[direction, 4 * hidden :], hidden)
        else:
            kind = "ih" if slot == 1 else "hh"
            key = f"{module}.weight_{kind}{suffix}"
            state[key] = _reorder(array[direction], hidden)
            if quantization is not None:
                scale, zero = quantization
                state[key + SCALE] = scale[direction : direction + 1]
                state[key + ZERO_POINT] = zero[direction : direction + 1]


def _reorder(gates: np.ndarray, hidden: int) -> np.ndarray:
    return np.concatenate([gates[i * hidden : (i + 1) * hidden] for i in _GATE_ORDER])


# --- from the published checkpoint ------------------------------------------------------------


def state_from_checkpoint(path: Path) -> dict[str, torch.Tensor]:
    """kokoro-v1_0.pth: {part: state} for bert, bert_encoder, predictor, text_encoder and
    decoder, keys perhaps under `module.`, convolutions weight-normalised (g and v)."""
    import torch  # see the top

    parts = torch.load(str(path), map_location="cpu", weights_only=True)
    state: dict[str, torch.Tensor] = {}
    for part, tensors in parts.items():
        for key, value in tensors.items():
            state[f"{part}.{key.removeprefix('module.')}"] = value.float()
    return fold_weight_norm(state)


def fold_weight_norm(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """weight = g × v / ‖v‖ (the norm over all but the first axis), under both of PyTorch's
    spellings (weight_g/weight_v and parametrizations.weight.original0/1)."""
    folded: dict[str, torch.Tensor] = {}
    pairs = {
        ".weight_g": ".weight_v",
        ".parametrizations.weight.original0": ".parametrizations.weight.original1",
    }
    for key, value in state.items():
        for g_suffix, v_suffix in pairs.items():
            if key.endswith(g_suffix):
                module = key[: -len(g_suffix)]
                v = state[module + v_suffix]
                norm = v.flatten(1).norm(dim=1).reshape(-1, *([1] * (v.dim() - 1)))
                folded[module + ".weight"] = value * v / norm
                break
            if key.endswith(v_suffix):
                break
        else:
            folded[key] = value
    return folded


def check_complete(expected: Iterable[str], state: Mapping[str, object]) -> None:
    """Every parameter the network has, found: else the model is not the one it was built for."""
    missing = sorted(set(expected) - set(state))
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        raise ModelMissing(
            f"The Kokoro weights lack {len(missing)} of the network's parameters ({shown})"
        )


def unused(key: str) -> bool:
    return bool(_UNUSED.search(key))
