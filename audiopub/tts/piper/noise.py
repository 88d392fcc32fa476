"""Piper's noise, drawn from each chunk's seed by Audiopub rather than inside the graph.

A VITS graph samples Gaussian noise on every run (`RandomNormalLike`: once in the duration
predictor, once for the prior). ONNX Runtime seeds such a node when the session is made and
its generator runs on from call to call, so the same text with the same `--seed` sounded
different depending on what the session had spoken before: `ort.set_seed` between runs
changes nothing.

This rewrite step turns each of those nodes into a graph input, `audiopub_noise_K`
[batch, values]: per batch row, standard normal values drawn from that row's own seed. The
graph takes a row's first C×T values as [T, C] and transposes them, so value t·C + c lands
at channel c, time t whatever T is: what an item hears depends on its seed alone, not on how
long the batch was padded. A second output per input, `audiopub_noise_K_used`, says how many
values the run took; rows given too few are padded with zeros inside the graph, and
`NoiseFeeds` runs such a batch again with enough.

The values are drawn when a batch is prepared (`NoiseFeeds.draw`, on the thread that runs the
text front end), not when it is spoken: a GPU's thread then only runs the model. A row's
values are the start of its seed's stream however many are drawn, so drawing ahead, for a
batch later split in two, or again after a short guess gives the same audio.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from audiopub.errors import SynthesisFailed
from audiopub.tts.graph_rewrite import RewriteStep

if TYPE_CHECKING:
    import onnx

NOISE_PREFIX: Final = "audiopub_noise_"
USED_SUFFIX: Final = "_used"
# Values per phoneme id to draw before a voice has been heard: enough for the prior's 192
# channels at ~10 frames an id, so a first batch seldom runs twice; learnt per input after.
FIRST_GUESS_PER_ID: Final = 2048.0
MARGIN: Final = 1.25  # over the most values per id seen, as durations vary with the text


def seeded_noise_inputs(model: onnx.ModelProto) -> int:
    """Replace every `RandomNormalLike` over a 3-D tensor with a noise input (see the module
    docstring); how many were replaced. None is, when one of them is not of that form: noise
    drawn partly inside the graph would still not follow the seed."""
    graph = model.graph
    randoms = [node for node in graph.node if node.op_type == "RandomNormalLike"]
    if not randoms or any(i.name.startswith(NOISE_PREFIX) for i in graph.input):
        return 0
    ranks = _ranks(model)
    if any(ranks.get(node.input[0]) != 3 or not _standard(node) for node in randoms):
        return 0
    for number, node in enumerate(randoms):
        _replace(graph, node, f"{NOISE_PREFIX}{number}")
    return len(randoms)


SEEDED_NOISE_STEP: Final = RewriteStep("noise-v1", seeded_noise_inputs)


@dataclass(frozen=True)
class DrawnNoise:
    """A prepared batch's noise: per input, one row of values per item, from its seed."""

    seeds: tuple[int, ...]
    feeds: dict[str, np.ndarray]  # input name → [rows, values]

    def rows(self, start: int, stop: int) -> DrawnNoise:
        """Items start..stop of the batch (views: nothing is copied)."""
        return DrawnNoise(
            self.seeds[start:stop], {name: feed[start:stop] for name, feed in self.feeds.items()}
        )


class NoiseFeeds:
    """The noise inputs of a rewritten session, and how many values each is given.

    Drawn on one thread (preparing) while runs on another learn how many values a phoneme
    takes: what is learnt is kept under a lock.
    """

    def __init__(self, input_names: Sequence[str]) -> None:
        self.names = tuple(sorted(n for n in input_names if n.startswith(NOISE_PREFIX)))
        self.used_outputs = [name + USED_SUFFIX for name in self.names]
        self._per_id: dict[str, float | None] = dict.fromkeys(self.names)  # most seen
        self._lock = threading.Lock()  # guards _per_id

    def draw(self, seeds: Sequence[int], phoneme_ids: int) -> DrawnNoise:
        """Noise for a batch of `seeds` padded to `phoneme_ids`, as many values as the runs so
        far say it takes (with a margin); `run` draws again, exactly, if that falls short."""
        with self._lock:
            sizes = {
                name: int((self._per_id[name] or FIRST_GUESS_PER_ID) * phoneme_ids) + 1
                for name in self.names
            }
        return DrawnNoise(tuple(seeds), self._draw(seeds, sizes))

    def run(
        self,
        run: Callable[[dict[str, np.ndarray]], list[np.ndarray]],
        seeds: Sequence[int],
        phoneme_ids: int,
        drawn: DrawnNoise | None = None,
    ) -> list[np.ndarray]:
        """`run(noise feeds)` → its outputs, the `used_outputs` last; run again, once, with
        exactly enough values when what was drawn fell short. The outputs without
        `used_outputs`. `drawn`: the batch's noise drawn ahead for these seeds (else drawn
        now)."""
        if drawn is None:
            drawn = self.draw(seeds, phoneme_ids)
        feeds = drawn.feeds
        for _ in range(2):
            outputs = run(feeds)
            used = {
                name: int(value.reshape(-1)[0])
                for name, value in zip(
                    self.names, outputs[len(outputs) - len(self.names) :], strict=True
                )
            }
            with self._lock:
                for name, count in used.items():
                    seen = MARGIN * count / max(phoneme_ids, 1)
                    self._per_id[name] = max(self._per_id[name] or 0.0, seen)
            if all(used[name] <= feeds[name].shape[1] for name in self.names):
                return outputs[: len(outputs) - len(self.names)]
            feeds = self._draw(seeds, used)
        raise SynthesisFailed(
            f"Piper's noise inputs were still short after a second run: "
            f"{used} values needed, "
            f"{ {name: feed.shape[1] for name, feed in feeds.items()} } given"
        )

    def _draw(self, seeds: Sequence[int], sizes: dict[str, int]) -> dict[str, np.ndarray]:
        feeds = {}
        for number, name in enumerate(self.names):
            feed = np.empty((len(seeds), sizes[name]), dtype=np.float32)
            for row, seed in enumerate(seeds):  # each input its own stream of each row's seed
                np.random.default_rng([seed, number]).standard_normal(
                    dtype=np.float32, out=feed[row]
                )
            feeds[name] = feed
        return feeds


def _ranks(model: onnx.ModelProto) -> dict[str, int]:
    """The rank of every value whose shape inference can tell, from a copy of the graph with
    its weights given as shapes alone: the full model would be copied twice to be inferred
    (0.2 s for a medium voice, against 0.03 s). Small constants stay: shapes are made of them."""
    from onnx import helper, shape_inference  # onnx: only while rewriting, see graph_rewrite

    graph = model.graph
    small = [t for t in graph.initializer if int(np.prod(t.dims)) <= 64]
    weights = [
        helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
        for t in graph.initializer
        if int(np.prod(t.dims)) > 64
    ]
    light = helper.make_model(
        helper.make_graph(
            list(graph.node),
            graph.name,
            [*graph.input, *weights],
            list(graph.output),
            initializer=small,
        ),
        opset_imports=model.opset_import,
    )
    inferred = shape_inference.infer_shapes(light).graph
    known = [*inferred.value_info, *inferred.input, *inferred.output]
    return {
        value.name: len(value.type.tensor_type.shape.dim)
        for value in known
        if value.type.tensor_type.HasField("shape")
    }


def _standard(node: onnx.NodeProto) -> bool:
    """Float32 noise of mean 0 and scale 1, as Piper's exports draw it."""
    from onnx import TensorProto, helper  # onnx: only while rewriting, see graph_rewrite

    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    return (
        attributes.get("dtype", TensorProto.FLOAT) == TensorProto.FLOAT
        and attributes.get("mean", 0.0) == 0.0
        and attributes.get("scale", 1.0) == 1.0
    )


def _replace(graph: onnx.GraphProto, node: onnx.NodeProto, feed: str) -> None:
    """Nodes computing `node`'s output [B, C, T] from the input `feed` [B, values]."""
    from onnx import TensorProto, helper  # onnx: only while rewriting, see graph_rewrite

    like, output = node.input[0], node.output[0]

    def name(part: str) -> str:
        return f"{feed}/{part}"

    made: set[str] = set()

    def const(part: str, values: list[int]) -> str:
        if name(part) not in made:
            made.add(name(part))
            graph.initializer.append(
                helper.make_tensor(name(part), TensorProto.INT64, [len(values)], values)
            )
        return name(part)

    steps = [
        helper.make_node("Shape", [like], [name("shape")]),
        helper.make_node(
            "Slice", [name("shape"), const("0", [0]), const("1", [1])], [name("batch")]
        ),
        helper.make_node(
            "Slice", [name("shape"), const("1", [1]), const("2", [2])], [name("channels")]
        ),
        helper.make_node(
            "Slice", [name("shape"), const("2", [2]), const("3", [3])], [name("time")]
        ),
        helper.make_node("Mul", [name("channels"), name("time")], [feed + USED_SUFFIX]),
        # A row given too few values is padded with zeros: the run is then made again.
        helper.make_node("Shape", [feed], [name("given_shape")]),
        helper.make_node(
            "Slice", [name("given_shape"), const("1", [1]), const("2", [2])], [name("given")]
        ),
        helper.make_node("Sub", [feed + USED_SUFFIX, name("given")], [name("short")]),
        helper.make_node("Max", [name("short"), const("none", [0])], [name("missing")]),
        helper.make_node(
            "Concat", [const("no_pads", [0, 0, 0]), name("missing")], [name("pads")], axis=0
        ),
        helper.make_node("Pad", [feed, name("pads")], [name("padded")]),
        helper.make_node(
            "Slice",
            [name("padded"), const("0", [0]), feed + USED_SUFFIX, const("1", [1])],
            [name("taken")],
        ),
        helper.make_node(
            "Concat",
            [name("batch"), name("time"), name("channels")],
            [name("time_major_shape")],
            axis=0,
        ),
        helper.make_node(
            "Reshape", [name("taken"), name("time_major_shape")], [name("time_major")]
        ),
        helper.make_node("Transpose", [name("time_major")], [output], perm=[0, 2, 1]),
    ]
    position = list(graph.node).index(node)
    graph.node.remove(node)
    for offset, step in enumerate(steps):
        graph.node.insert(position + offset, step)
    graph.input.append(
        helper.make_tensor_value_info(feed, TensorProto.FLOAT, ["batch_size", f"{feed}_values"])
    )
    graph.output.append(helper.make_tensor_value_info(feed + USED_SUFFIX, TensorProto.INT64, [1]))
