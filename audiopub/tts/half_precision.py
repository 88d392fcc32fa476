"""Piper's decoder in half precision, for CUDA (the `fp16_decoder` setting).

A VITS voice's decoder (HiFi-GAN, the `/dec/` nodes: 67 of the joe voice's 2,755) turns each
frame into 256 samples through stacks of convolutions: 65 % of the model's kernel time on the
CPU, one sentence profiled. On a GPU's tensor cores, half-precision convolutions run several
times faster than single-precision ones. This rewrite makes the decoder's weights and values
float16, with a Cast at each edge where a value enters or leaves it. Everything before it stays
float32: the text encoder, the duration predictor (rounding there would move phoneme durations,
and with them each item's length and word timings) and the flow.

Off by default, and for GPU sessions only: on the CPU the joe voice ran no faster with it (0.25 s
against 0.24 s for one sentence), and only a real card can say whether it is faster there
(`audiopub bench --gpu --cuda-tuning default,fp16_decoder`). Written here rather than with
onnxconverter-common's converter, which fails on Piper's graph, or ORT's, which wraps every
float32 node outside the region in Casts (3,650 of them, and two nodes of the same name).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Final

from audiopub.tts.graph_rewrite import RewriteStep

if TYPE_CHECKING:
    import onnx

DECODER_PREFIX: Final = "/dec/"
HALF_SUFFIX: Final = "/fp16"
# Ops whose every input and output is a float tensor: a region made only of them needs no type
# inference to know which values to convert. A decoder holding any other op is left as it is.
_FLOAT_ONLY_OPS: Final = frozenset(
    {"Add", "Sub", "Mul", "Div", "Conv", "ConvTranspose", "LeakyRelu", "Relu", "Tanh", "Constant"}
)


def decoder_to_half(model: onnx.ModelProto) -> int:
    """Rewrite, in place, the nodes named under DECODER_PREFIX to float16; returns how many
    nodes were converted (0: none found, or one of them is not a float-only op)."""
    return region_to_half(model, DECODER_PREFIX)


def region_to_half(model: onnx.ModelProto, prefix: str) -> int:
    """Convert the nodes whose names start with `prefix` to float16, in place: their weights,
    their Constant values, and a Cast on every value crossing the region's edge."""
    import onnx  # onnx: only while rewriting, see graph_rewrite
    from onnx import TensorProto, helper  # onnx: only while rewriting, see graph_rewrite

    graph = model.graph
    inside = [node for node in graph.node if node.name.startswith(prefix)]
    if not inside or any(
        node.op_type not in _FLOAT_ONLY_OPS or node.domain not in ("", "ai.onnx") for node in inside
    ):
        return 0
    made_inside = {name for node in inside for name in node.output}
    consumers_outside = Counter(
        name for node in graph.node if not node.name.startswith(prefix) for name in node.input
    )
    outputs = {output.name for output in graph.output}
    leaving = {name for name in made_inside if consumers_outside[name] or name in outputs}
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    # An initializer also listed as a graph input (older exports) keeps its declared type.
    declared = {value.name for value in graph.input}

    def half_name(name: str) -> str:
        return name + HALF_SUFFIX

    nodes: list[onnx.NodeProto] = []
    cast_in: set[str] = set()
    for node in graph.node:
        if not node.name.startswith(prefix):
            nodes.append(node)
            continue
        for position, name in enumerate(node.input):
            if not name or (name in made_inside and name not in leaving):
                continue
            if name in made_inside:  # made here, and also read outside: read the half copy
                node.input[position] = half_name(name)
            elif name in initializers:
                shared = consumers_outside[name] > 0 or name in declared
                node.input[position] = _half_initializer(graph, initializers[name], shared)
            else:  # made before the region, or a graph input: cast once, where first read
                if name not in cast_in:
                    cast_in.add(name)
                    nodes.append(
                        helper.make_node(
                            "Cast",
                            [name],
                            [half_name(name)],
                            name=f"{prefix}to_fp16{name}",
                            to=TensorProto.FLOAT16,
                        )
                    )
                node.input[position] = half_name(name)
        if node.op_type == "Constant":
            _half_constant(node)
        nodes.append(node)
        for position, name in enumerate(node.output):
            if name in leaving:  # the region writes a half copy; the rest reads float32
                node.output[position] = half_name(name)
                nodes.append(
                    helper.make_node(
                        "Cast",
                        [half_name(name)],
                        [name],
                        name=f"{prefix}to_fp32{name}",
                        to=TensorProto.FLOAT,
                    )
                )
    copies = []  # messages of their own, which outlive the del below
    for node in nodes:
        copies.append(onnx.NodeProto())
        copies[-1].CopyFrom(node)
    del graph.node[:]
    graph.node.extend(copies)
    # Inferred types of the region's values said float32; ORT infers them again on load.
    kept = [info for info in graph.value_info if info.name not in made_inside]
    del graph.value_info[:]
    graph.value_info.extend(kept)
    return len(inside)


def _half_initializer(graph: onnx.GraphProto, tensor: onnx.TensorProto, shared: bool) -> str:
    """The name of `tensor` as float16: converted in place when only the region reads it, else
    a half copy beside it (made once)."""
    from onnx import TensorProto, numpy_helper  # onnx: only while rewriting, see graph_rewrite

    if tensor.data_type != TensorProto.FLOAT:
        return tensor.name
    values = numpy_helper.to_array(tensor).astype("float16")
    if not shared:
        tensor.CopyFrom(numpy_helper.from_array(values, tensor.name))
        return tensor.name
    name = tensor.name + HALF_SUFFIX
    if not any(other.name == name for other in graph.initializer):
        graph.initializer.append(numpy_helper.from_array(values, name))
    return name


def _half_constant(node: onnx.NodeProto) -> None:
    """A Constant node's float32 value as float16."""
    from onnx import TensorProto, numpy_helper  # onnx: only while rewriting, see graph_rewrite

    for attribute in node.attribute:
        if attribute.name == "value" and attribute.t.data_type == TensorProto.FLOAT:
            values = numpy_helper.to_array(attribute.t).astype("float16")
            attribute.t.CopyFrom(numpy_helper.from_array(values, attribute.t.name))


FP16_DECODER_STEP: Final = RewriteStep("fp16dec-v1", decoder_to_half, tuning="fp16_decoder")
