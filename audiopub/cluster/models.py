"""An engine's model files, shipped to the cluster's workers through Ray's object store, so
no machine needs the head's data directory or a shared filesystem.

The files go once per job's connection and model (`ray.put`), named by the same model id the
chunk cache key holds: new files under a name are new files on the workers too. Each actor writes
them to its own temp folder and loads its engine from there. Piper's embedded voice is a pip
package that every worker with Audiopub installed has: nothing to ship for it.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from audiopub.tts.engine import split_speaker
from audiopub.tts.registry import engine_info

_shipped: dict[str, Any] = {}  # model id → ObjectRef of its files, while connected
_lock = threading.Lock()

ModelFiles = dict[str, bytes]  # path inside the model folder → the file's bytes


def model_files(engine_name: str, voice: str) -> ModelFiles:
    """The files an engine needs to speak `voice`: the voice's own files where each voice is
    files of its own (Piper's two, none for its embedded voice), else the whole model folder
    (Supertonic, Kokoro)."""
    engine = engine_info(engine_name)
    if engine.voice_files is not None:
        return {path.name: path.read_bytes() for path in engine.voice_files(voice)}
    folder = engine.default_model_dir()
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def shipped(ray: Any, engine_name: str, model_id: str, voice: str) -> Any:
    """The object-store reference of the model files behind `voice` (the engine's
    `model_id(voice)`), put there once."""
    key = f"{engine_name}|{model_id}|{split_speaker(voice)[0]}"
    with _lock:
        if key not in _shipped:
            _shipped[key] = ray.put(model_files(engine_name, voice))
        return _shipped[key]


def unpack(files: ModelFiles) -> Path:
    """The files written to a fresh temp folder of this machine; `remove` when done."""
    folder = Path(tempfile.mkdtemp(prefix="audiopub-model-"))
    try:
        for name, data in files.items():
            path = folder / name
            if folder.resolve() not in path.resolve().parents:  # climbs out: not ours
                raise ValueError(f"model file name outside its folder: {name!r}")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    except BaseException:
        remove(folder)
        raise
    return folder


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
