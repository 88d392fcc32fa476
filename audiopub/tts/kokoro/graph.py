"""Kokoro's graph, rewritten to say how many frames each of its input tokens lasts.

Kokoro's duration predictor rounds each token's predicted duration (its one `Round`), clips
it to at least one frame and casts it to an integer, then decodes 600 audio samples per frame:
the audio is exactly 600 × Σ durations samples long (so in every run measured). This step
exposes that integer cast's output as a second output, `TOKEN_FRAMES` [1, tokens]; the audio
output is untouched. The frames say where each word's sound begins, exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import numpy as np

from audiopub.tts.graph_rewrite import RewriteStep

if TYPE_CHECKING:
    import onnx

TOKEN_FRAMES: Final = "audiopub_token_frames"
SAMPLES_PER_FRAME: Final = 600
_PASS_THROUGH: Final = ("Clip", "Relu", "Max")  # between the Round and its integer cast
_INTEGER_TYPES: Final = (6, 7)  # onnx.TensorProto.INT32, INT64


def expose_token_frames(model: onnx.ModelProto) -> int:
    """Add the integer token durations as the output TOKEN_FRAMES; 1 if added, 0 when the
    graph has it already or is not shaped as expected (one Round, followed by a clip and an
    integer cast)."""
    from onnx import TensorProto, helper  # onnx: only while rewriting, see graph_rewrite

    graph = model.graph
    if any(output.name == TOKEN_FRAMES for output in graph.output):
        return 0
    rounds = [node for node in graph.node if node.op_type == "Round"]
    if len(rounds) != 1:
        return 0
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    value = rounds[0].output[0]
    while True:
        following = consumers.get(value, [])
        if len(following) != 1:
            return 0
        node = following[0]
        if node.op_type == "Cast":
            to = next((a.i for a in node.attribute if a.name == "to"), None)
            if to not in _INTEGER_TYPES:
                return 0
            break
        if node.op_type not in _PASS_THROUGH:
            return 0
        value = node.output[0]
    graph.node.append(
        helper.make_node(
            "Cast",
            [node.output[0]],
            [TOKEN_FRAMES],
            to=TensorProto.INT64,
            name="audiopub/token_frames",
        )
    )
    graph.output.append(
        helper.make_tensor_value_info(TOKEN_FRAMES, TensorProto.INT64, [1, "tokens"])
    )
    return 1


TOKEN_FRAMES_STEP: Final = RewriteStep("token-frames-v1", expose_token_frames)


def frame_starts(frames: np.ndarray, positions: Sequence[int]) -> tuple[int, ...]:
    """The sample where each token at `positions` starts sounding: the frames of every token
    before it (the leading pad takes frames too), times the samples per frame."""
    before = np.concatenate(([0], np.cumsum(frames.reshape(-1).astype(np.int64))))
    return tuple(int(before[position]) * SAMPLES_PER_FRAME for position in positions)


def audio_length(frames: np.ndarray) -> int:
    """The audio's exact length in samples."""
    return int(frames.astype(np.int64).sum()) * SAMPLES_PER_FRAME
