"""Hub repositories for the voice library tests, served by `hub_server` in the real formats:
`rhasspy/piper-voices` (a `voices.json` index and voice files under their real paths) and
`Supertone/supertonic-*` (the tiny Supertonic-format model)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from hub_server import HubServer, running_hub
from onnx import TensorProto, helper
from tiny_supertonic import build_tiny_model

from audiopub.tts.piper.files import embedded_voice
from audiopub.tts.piper.index import PIPER_REPO

MODEL_CARD = b"# Model card for tests\n\nLicense: CC0\n"


def local_hub(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    repos: Mapping[str, Mapping[str, bytes | Path]] | None = None,
) -> Iterator[HubServer]:
    """A local Hub at HF_ENDPOINT, serving `repos` (repository → its files), an empty Hub
    cache, no token, and a private models folder (for a fixture:
    `yield from local_hub(tmp_path, monkeypatch)`)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_IMPLICIT_TOKEN", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.delenv("AUDIOPUB_SUPERTONIC_DIR", raising=False)
    with running_hub() as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        for repo, files in (repos or {}).items():
            server.add_repo(repo, dict(files))
        yield server


def in_memory(files: Mapping[str, bytes | Path]) -> dict[str, bytes]:
    """A repository's files read once, for a module whose every test serves them: a model
    file is then not read again for each test's Hub."""
    return {
        path: data if isinstance(data, bytes) else data.read_bytes() for path, data in files.items()
    }


def tiny_piper_model() -> bytes:
    """An ONNX graph with a Piper voice's inputs and output (input, input_lengths, scales →
    output [1, 1, samples]); its "audio" is the phoneme ids scaled down, not speech."""
    ids = helper.make_tensor_value_info("input", TensorProto.INT64, [1, "phonemes"])
    lengths = helper.make_tensor_value_info("input_lengths", TensorProto.INT64, [1])
    scales = helper.make_tensor_value_info("scales", TensorProto.FLOAT, [3])
    output = helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1, "samples"])
    nodes = [
        helper.make_node("Cast", ["input"], ["as_float"], to=TensorProto.FLOAT),
        helper.make_node(
            "Constant",
            [],
            ["scale"],
            value=helper.make_tensor("scale", TensorProto.FLOAT, [], [1e-3]),
        ),
        helper.make_node("Mul", ["as_float", "scale"], ["scaled"]),
        helper.make_node(
            "Constant",
            [],
            ["shape"],
            value=helper.make_tensor("shape", TensorProto.INT64, [3], [1, 1, -1]),
        ),
        helper.make_node("Reshape", ["scaled", "shape"], ["output"]),
    ]
    graph = helper.make_graph(nodes, "tiny_piper", [ids, lengths, scales], [output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString()


def piper_voice_files(
    key: str, model: bytes | Path | None = None, config: bytes | None = None
) -> dict[str, bytes]:
    """A voice's three files as the repository has them: model, config (the embedded
    voice's unless given), model card."""
    joe = embedded_voice()
    if model is None:
        data = tiny_piper_model()
    else:
        data = model if isinstance(model, bytes) else Path(model).read_bytes()
    return {
        f"{key}.onnx": data,
        f"{key}.onnx.json": config or joe.config.read_bytes(),
        "MODEL_CARD": MODEL_CARD,
    }


def voice_folder(key: str) -> str:
    """The repository folder of a voice: de_DE-thorsten-medium → de/de_DE/thorsten/medium/."""
    code, name, quality = key.split("-")
    return f"{code.split('_')[0]}/{code}/{name}/{quality}/"


def index_entry(key: str, files: dict[str, bytes]) -> dict[str, object]:
    """The voice's `voices.json` entry, in the published format."""
    code, name, quality = key.split("-")
    family, region = code.split("_")
    return {
        "key": key,
        "name": name,
        "quality": quality,
        "num_speakers": 1,
        "speaker_id_map": {},
        "language": {
            "code": code,
            "family": family,
            "region": region,
            "name_native": family,
            "name_english": f"Language {family}",
            "country_english": f"Country {region}",
        },
        "files": {
            voice_folder(key) + file_name: {
                "size_bytes": len(data),
                "md5_digest": hashlib.md5(data).hexdigest(),
            }
            for file_name, data in files.items()
        },
        "aliases": [],
    }


def serve_piper_voices(
    server: HubServer,
    voices: dict[str, dict[str, bytes]],
    index_patch: dict[str, dict[str, object]] | None = None,
    leave_out: tuple[str, ...] = (),
) -> str:
    """Serve `rhasspy/piper-voices` with these voices and their index; `index_patch` changes
    entries after they are made (a wrong checksum), `leave_out` repository paths the index
    lists but the repository lacks."""
    index = {key: index_entry(key, files) for key, files in voices.items()}
    for key, patch in (index_patch or {}).items():
        index[key].update(patch)
    repo_files: dict[str, bytes | Path] = {"voices.json": json.dumps(index).encode()}
    for key, files in voices.items():
        for file_name, data in files.items():
            path = voice_folder(key) + file_name
            if path not in leave_out:
                repo_files[path] = data
    return server.add_repo(PIPER_REPO, repo_files)


def serve_supertonic(server: HubServer, repo: str, commit: str, folder: Path) -> dict[str, bytes]:
    """Serve the tiny Supertonic-format model (plus a licence) as `repo` at `commit`."""
    model = build_tiny_model(folder)
    files: dict[str, bytes | Path] = {
        path.relative_to(model).as_posix(): path for path in model.rglob("*") if path.is_file()
    }
    files["LICENSE"] = b"Test licence\n"
    files["README.md"] = b"# tiny\n"
    files["samples/not-needed.wav"] = b"\0" * 1000
    server.add_repo(repo, files, commit=commit)
    return {path: server.repos[repo].files[path].content for path in files}
