"""Piper voices for tests, made from the embedded one (a real model in the real format)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from audiopub.tts.piper.files import embedded_voice


def add_voice_with_rate(folder: Path, name: str, sample_rate: int) -> Path:
    """`folder/name.onnx` + `.onnx.json`: the embedded voice's model under a config that says
    `sample_rate`, as Piper's 16 kHz `x_low`/`low` voices do. The graph makes the same samples;
    played at 16 kHz they last 22,050/16,000 times as long, which is what such a voice does."""
    folder.mkdir(parents=True, exist_ok=True)
    joe = embedded_voice()
    model = folder / f"{name}.onnx"
    shutil.copyfile(joe.model, model)
    config = json.loads(joe.config.read_text("utf-8"))
    config["audio"]["sample_rate"] = sample_rate
    model.with_suffix(".onnx.json").write_text(json.dumps(config), "utf-8")
    return model


def add_still_voice(folder: Path, name: str) -> Path:
    """`folder/name.onnx` + `.onnx.json`: the embedded voice with its noise scales at 0, so it
    says a text the same way every time (alone or in any batch). The model is a link to the
    embedded one's file."""
    folder.mkdir(parents=True, exist_ok=True)
    joe = embedded_voice()
    model = folder / f"{name}.onnx"
    model.symlink_to(joe.model)
    config = json.loads(joe.config.read_text("utf-8"))
    config["inference"] = {**config.get("inference", {}), "noise_scale": 0.0, "noise_w": 0.0}
    model.with_suffix(".onnx.json").write_text(json.dumps(config), "utf-8")
    return model


# Speaker names of the tiny multi-speaker voice, in `sid` order (VCTK's style of name).
SPEAKERS = ("p239", "p236", "p264")
# What each speaker adds to every sample: the audio really depends on `sid`.
SPEAKER_OFFSETS = (0.0, 0.25, -0.25)
# Each phoneme id becomes one sample of ID_SCALE × id (plus the speaker's offset).
ID_SCALE = 1e-3


def tiny_multi_speaker_model() -> bytes:
    """An ONNX graph with a multi-speaker Piper voice's inputs and outputs (input,
    input_lengths, scales, sid → output [batch, 1, samples]) and one Ceil over each phoneme's
    frames, as Piper's durations have, so batches are cut as the real ones are. Its "audio"
    is one sample per phoneme id: id × ID_SCALE plus the speaker's SPEAKER_OFFSETS entry
    (a Gather of a speaker table, as a VITS speaker embedding is), not speech."""
    from onnx import TensorProto, helper

    def const(name: str, kind: int, dims: list[int], values: list[float]) -> object:
        return helper.make_node(
            "Constant", [], [name], value=helper.make_tensor(name, kind, dims, values)
        )

    inputs = [
        helper.make_tensor_value_info("input", TensorProto.INT64, ["batch", "phonemes"]),
        helper.make_tensor_value_info("input_lengths", TensorProto.INT64, ["batch"]),
        helper.make_tensor_value_info("scales", TensorProto.FLOAT, [3]),
        helper.make_tensor_value_info("sid", TensorProto.INT64, ["batch"]),
    ]
    output = helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", 1, "samples"])
    nodes = [
        # Each phoneme lasts one frame of one sample while within its item's length: the
        # durations [batch, 1, phonemes] that Piper's one Ceil rounds.
        helper.make_node("Shape", ["input"], ["input_shape"]),
        const("one", TensorProto.INT64, [], [1]),
        const("zero", TensorProto.INT64, [], [0]),
        helper.make_node("Gather", ["input_shape", "one"], ["phonemes"], axis=0),
        helper.make_node("Range", ["zero", "phonemes", "one"], ["positions"]),
        const("last_axis", TensorProto.INT64, [1], [1]),
        helper.make_node("Unsqueeze", ["input_lengths", "last_axis"], ["lengths_column"]),
        helper.make_node("Less", ["positions", "lengths_column"], ["inside"]),
        helper.make_node("Cast", ["inside"], ["inside_float"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["inside_float", "last_axis"], ["durations"]),
        helper.make_node("Ceil", ["durations"], ["frames"]),
        # The audio: the ids scaled, shifted by the speaker's entry of the table.
        helper.make_node("Cast", ["input"], ["ids_float"], to=TensorProto.FLOAT),
        const("id_scale", TensorProto.FLOAT, [], [ID_SCALE]),
        helper.make_node("Mul", ["ids_float", "id_scale"], ["scaled"]),
        const("speaker_table", TensorProto.FLOAT, [len(SPEAKERS), 1], list(SPEAKER_OFFSETS)),
        helper.make_node("Gather", ["speaker_table", "sid"], ["speaker_offset"], axis=0),
        helper.make_node("Add", ["scaled", "speaker_offset"], ["spoken"]),
        # Past an item's length its row is not silence, as in Piper's padded batches.
        helper.make_node("Unsqueeze", ["spoken", "last_axis"], ["output"]),
    ]
    graph = helper.make_graph(nodes, "tiny_multi_speaker_piper", inputs, [output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what ORT 1.20, the oldest this project takes, can load
    return model.SerializeToString()


def multi_speaker_config() -> bytes:
    """The embedded voice's config with SPEAKERS in its `num_speakers` and
    `speaker_id_map`, as a multi-speaker voice's `.onnx.json` has them."""
    config = json.loads(embedded_voice().config.read_text("utf-8"))
    config["num_speakers"] = len(SPEAKERS)
    config["speaker_id_map"] = {speaker: sid for sid, speaker in enumerate(SPEAKERS)}
    return json.dumps(config).encode()


def add_multi_speaker_voice(folder: Path, name: str) -> Path:
    """`folder/name.onnx` + `.onnx.json`: the tiny multi-speaker graph and its config."""
    folder.mkdir(parents=True, exist_ok=True)
    model = folder / f"{name}.onnx"
    model.write_bytes(tiny_multi_speaker_model())
    model.with_suffix(".onnx.json").write_bytes(multi_speaker_config())
    return model
