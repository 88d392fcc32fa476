"""Engines by name, loaded lazily and cached per (engine, model dir, device request)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from audiopub import settings
from audiopub.errors import EngineUnavailable
from audiopub.tts.engine import Engine

ENGINE_NAMES = ("piper", "supertonic")


@dataclass(frozen=True)
class EngineKey:
    name: str
    model_dir: Path  # resolved, so a changed setting never finds an engine loaded elsewhere
    use_gpu: bool
    threads: int | None = None
    device_id: int = 0  # the CUDA device, when use_gpu: one engine per GPU


_cache: dict[EngineKey, Engine] = {}
_lock = threading.Lock()


def _load(key: EngineKey) -> Engine:
    # Imported here so that a broken optional engine never stops the others from loading.
    if key.name == "piper":
        from audiopub.tts.piper import PiperEngine

        return PiperEngine(use_gpu=key.use_gpu, threads=key.threads, voices_dir=key.model_dir,
                           device_id=key.device_id)
    if key.name == "supertonic":
        from audiopub.tts.supertonic import SupertonicEngine

        return SupertonicEngine(key.model_dir, use_gpu=key.use_gpu, threads=key.threads,
                                device_id=key.device_id)
    raise EngineUnavailable(f"Unknown engine {key.name!r}; choose one of {', '.join(ENGINE_NAMES)}")


def default_model_dir(name: str) -> Path:
    """Where an engine looks for its files unless told otherwise (settings and env vars)."""
    if name == "supertonic":
        from audiopub.tts.supertonic import default_model_dir as supertonic_dir

        return supertonic_dir()
    return settings.models_dir() / name  # piper: extra voices beside the embedded one


def get_engine(name: str, use_gpu: bool = False, model_dir: Path | None = None,
               threads: int | None = None, device_id: int = 0) -> Engine:
    """The engine, loaded once per (name, model dir, device request, threads, CUDA device)."""
    key = EngineKey(name, model_dir or default_model_dir(name), use_gpu, threads, device_id)
    with _lock:
        if key not in _cache:
            _cache[key] = _load(key)
        return _cache[key]

