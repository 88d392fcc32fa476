"""1-D convolutions rewritten as 2-D ones of height 1, for ONNX Runtime's CPU provider.

On x86, ONNX Runtime runs 2-D convolutions through its blocked (NCHWc) kernels and 1-D ones
through a generic im2col + GEMM path. A VITS voice (Piper) is 1-D convolutions throughout,
about two thirds of its CPU time; seen as 2-D convolutions of height 1, the same arithmetic
ran 11-14% faster on one thread (joe voice, interleaved runs, output equal within 5e-5).

The rewrite is exact but for float rounding: each such Conv becomes Unsqueeze → Conv → Squeeze
and its weight gains a height axis of 1 (the same bytes in the same order).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from audiopub.tts.graph_rewrite import RewriteStep

_ONNX_DOMAINS = ("", "ai.onnx")
_HEIGHT_AXIS = "audiopub_conv_height_axis"  # the shared [2] that Unsqueeze/Squeeze take


def conv1d_as_2d(model: onnx.ModelProto) -> int:
    """Rewrite, in place, every 1-D Conv whose weight is its own initializer; returns how many
    were rewritten (0 leaves the model untouched)."""
    opset = next((o.version for o in model.opset_import if o.domain in _ONNX_DOMAINS), 0)
    if opset < 13:  # before opset 13, Unsqueeze and Squeeze took their axes as an attribute
        return 0
    graph = model.graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    uses = Counter(name for node in graph.node for name in node.input)
    nodes: list[onnx.NodeProto] = []
    rewritten = 0
    for node in graph.node:
        weight = _own_1d_weight(node, weights, uses)
        if weight is None:
            nodes.append(node)
            continue
        weight.dims.insert(2, 1)  # [out, in/groups, k] → [out, in/groups, 1, k]
        wide_in, wide_out = f"{node.output[0]}/h1_in", f"{node.output[0]}/h1_out"
        nodes += [
            helper.make_node(
                "Unsqueeze",
                [node.input[0], _HEIGHT_AXIS],
                [wide_in],
                name=f"{node.name}/h1_unsqueeze",
            ),
            helper.make_node(
                "Conv",
                [wide_in, *node.input[1:]],
                [wide_out],
                name=node.name,
                **_attributes_2d(node),
            ),
            helper.make_node(
                "Squeeze",
                [wide_out, _HEIGHT_AXIS],
                [node.output[0]],
                name=f"{node.name}/h1_squeeze",
            ),
        ]
        rewritten += 1
    if rewritten:
        graph.initializer.append(
            numpy_helper.from_array(np.array([2], dtype=np.int64), _HEIGHT_AXIS)
        )
        del graph.node[:]
        graph.node.extend(nodes)
    return rewritten


# On a GPU, cuDNN picks its own algorithms for either shape: the rewrite is for the CPU only.
CONV2D_STEP = RewriteStep("conv2d-v1", conv1d_as_2d, cpu_only=True)


def _own_1d_weight(
    node: onnx.NodeProto, weights: dict[str, onnx.TensorProto], uses: Counter[str]
) -> onnx.TensorProto | None:
    if node.op_type != "Conv" or node.domain not in _ONNX_DOMAINS or len(node.input) < 2:
        return None
    weight = weights.get(node.input[1])
    if weight is None or len(weight.dims) != 3 or uses[weight.name] != 1:
        return None  # computed or shared weights are left alone
    return weight


def _attributes_2d(node: onnx.NodeProto) -> dict[str, Any]:
    """The Conv's attributes with a height axis of 1 in front (pads: begin and end of each)."""
    attributes: dict[str, Any] = {}  # Any: each is passed to make_node as its keyword
    for attribute in node.attribute:
        value = helper.get_attribute_value(attribute)
        if attribute.name in ("kernel_shape", "strides", "dilations"):
            value = [1, *value]
        elif attribute.name == "pads":
            value = [0, value[0], 0, value[1]]
        attributes[attribute.name] = value
    return attributes
