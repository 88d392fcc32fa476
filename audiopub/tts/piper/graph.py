"""Piper's graph, rewritten to say how long each item of a padded batch really is.

A VITS graph predicts each phoneme's duration in frames, rounds it up (its one `Ceil`), and
decodes `hop` audio samples per frame. Run as a padded batch it returns every item padded to
the longest, and the padding is not silence (|x| up to 3.3e-2 measured with the joe voice):
each item must be cut at its own length. The rounded durations are that length, exactly, and
also where each phoneme's sound lies (for word timings). This step exposes them as a second
output, `PHONEME_FRAMES` [batch, 1, phonemes]; the audio output is untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import numpy as np

from audiopub.tts.graph_rewrite import RewriteStep

if TYPE_CHECKING:
    import onnx

PHONEME_FRAMES: Final = "audiopub_phoneme_frames"


def expose_phoneme_frames(model: onnx.ModelProto) -> int:
    """Add the rounded phoneme durations as the output PHONEME_FRAMES; 1 if added, 0 when the
    graph has it already or is not shaped as expected (exactly one Ceil)."""
    from onnx import TensorProto, helper  # onnx: only while rewriting, see graph_rewrite

    graph = model.graph
    if any(output.name == PHONEME_FRAMES for output in graph.output):
        return 0
    ceils = [node for node in graph.node if node.op_type == "Ceil"]
    if len(ceils) != 1:
        return 0
    graph.node.append(
        helper.make_node(
            "Identity", [ceils[0].output[0]], [PHONEME_FRAMES], name="audiopub/phoneme_frames"
        )
    )
    graph.output.append(
        helper.make_tensor_value_info(
            PHONEME_FRAMES, TensorProto.FLOAT, ["batch_size", 1, "phonemes"]
        )
    )
    return 1


PHONEME_FRAMES_STEP = RewriteStep("frames-v1", expose_phoneme_frames)


def item_lengths(phoneme_frames: np.ndarray, padded_samples: int) -> list[int]:
    """Each item's exact length in samples, from the graph's rounded durations and the padded
    audio's length (the longest item's frames times the hop, which this derives)."""
    frames = _frames_per_item(phoneme_frames)
    hop = hop_of(phoneme_frames, padded_samples)
    return [int(count) * hop for count in frames]


def hop_of(phoneme_frames: np.ndarray, padded_samples: int) -> int:
    """Audio samples per decoder frame: the padded audio is the longest item's frames long."""
    longest = int(_frames_per_item(phoneme_frames).max())
    hop, rest = divmod(padded_samples, longest)
    if rest:
        raise ValueError(f"{padded_samples} samples are not a whole number of {longest} frames")
    return hop


def phoneme_starts(item_frames: np.ndarray, positions: Sequence[int], hop: int) -> tuple[int, ...]:
    """The sample where each phoneme id at `positions` starts sounding, in an item's audio:
    the frames of every id before it (BOS and the PADs between phonemes take frames too),
    times the hop. `item_frames` is one batch row's durations, one per input id."""
    before = np.concatenate(([0], np.cumsum(np.rint(item_frames.reshape(-1)))))
    return tuple(int(before[position]) * hop for position in positions)


def _frames_per_item(phoneme_frames: np.ndarray) -> np.ndarray:
    return np.maximum(1, np.rint(phoneme_frames.reshape(len(phoneme_frames), -1).sum(axis=1)))
