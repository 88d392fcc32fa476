"""Piper voices for tests, made from the embedded one (a real model in the real format)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from audiopub.tts.piper import embedded_voice


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
