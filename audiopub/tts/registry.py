"""Engines by name, loaded lazily and cached per (engine, model dir, device request), and
loaded again when their model files change. Previews get engines of their own (one CPU thread
each), so a preview never waits on, nor takes from, the engine a job speaks with."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from audiopub.errors import EngineUnavailable
from audiopub.settings import Settings
from audiopub.tts.engine import Engine
from audiopub.tts.engine_info import Downloads, EngineInfo, LoadRequest, Stamp
from audiopub.tts.kokoro import KOKORO
from audiopub.tts.piper import PIPER
from audiopub.tts.supertonic import SUPERTONIC

# Every engine, in the order they are offered. An engine's package describes it; the engine
# itself is imported when it is first loaded, so a broken optional one never stops the others.
_engines: list[EngineInfo] = []


def register(engine: EngineInfo) -> None:
    """Offer `engine` everywhere engines are offered: `--engine`, the voice library and its
    downloads, the web app's engine list, casting. One of the same name is replaced."""
    with _lock:
        _engines[:] = [known for known in _engines if known.name != engine.name]
        _engines.append(engine)


def unregister(name: str) -> None:
    """Offer the engine called `name` no more (a test's own engine, once the test is done)."""
    with _lock:
        _engines[:] = [known for known in _engines if known.name != name]


def engines() -> tuple[EngineInfo, ...]:
    """The engines' descriptions, in the order they are offered."""
    return tuple(_engines)


def check_settings(options: Settings) -> None:
    """SettingInvalid for an engine's setting in `options` that can't be used: said as a
    command starts, not when the engine first loads (mid-job, in an engine process)."""
    for engine in engines():
        for setting in engine.settings:
            setting.read(options)


def engine_names() -> tuple[str, ...]:
    return tuple(engine.name for engine in _engines)


def downloads() -> tuple[Downloads, ...]:
    """The catalogues of the engines that have downloads, in the engines' order."""
    return tuple(engine.downloads for engine in _engines if engine.downloads is not None)


def downloads_owning(download_id: str) -> Downloads | None:
    """The catalogue `download_id` (as `voices download` takes it) belongs to, if any
    engine claims it; None: none does."""
    return next((found for found in downloads() if found.owns(download_id)), None)


@dataclass(frozen=True)
class EngineKey:
    name: str
    model_dir: Path  # resolved, so a changed setting never finds an engine loaded elsewhere
    use_gpu: bool
    threads: int | None = None
    device_id: int = 0  # the CUDA device, when use_gpu: one engine per GPU
    preview: bool = False  # the previews' own engine, never one a job speaks with


# A preview is a sentence or two: one core says it in about a second, and a job running beside
# it (engine processes on the other cores, or a GPU session) keeps everything it has.
PREVIEW_THREADS = 1

# Each engine with the stamp of the files it loaded, to notice them removed or replaced.
_cache: dict[EngineKey, tuple[Engine, Stamp]] = {}
_lock = threading.Lock()  # guards _cache, _loading and _engines, never held while one loads
_loading: dict[EngineKey, threading.Lock] = {}  # one per key, held while that engine loads
_loaded_count = 0  # engines this process has loaded into the cache, ever (see engines_loaded)


def engine_info(name: str) -> EngineInfo:
    """The description of the engine called `name`; EngineUnavailable names the ones there
    are."""
    for engine in engines():
        if engine.name == name:
            return engine
    raise EngineUnavailable(f"Unknown engine {name!r}; choose one of {', '.join(engine_names())}")


def _load(key: EngineKey) -> Engine:
    return engine_info(key.name).load(
        LoadRequest(key.model_dir, key.use_gpu, key.threads, key.device_id)
    )


def default_model_dir(name: str) -> Path:
    """Where an engine looks for its files unless told otherwise (settings and env vars)."""
    return engine_info(name).default_model_dir()


def get_engine(
    name: str,
    use_gpu: bool = False,
    model_dir: Path | None = None,
    threads: int | None = None,
    device_id: int = 0,
) -> Engine:
    """The engine, loaded once per (name, model dir, device request, threads, CUDA device), and
    again when its model files changed: a removed or replaced model is never spoken with."""
    return _get(EngineKey(name, model_dir or default_model_dir(name), use_gpu, threads, device_id))


def load_engine(name: str, use_gpu: bool = False, threads: int | None = None) -> Engine:
    """A new engine of its own, never cached nor shared: for measuring an engine whose sessions
    are made under other settings (`audiopub bench --cuda-tuning`, node placement)."""
    return _load(EngineKey(name, default_model_dir(name), use_gpu, threads))


def get_preview_engine(name: str) -> Engine:
    """The engine previews speak with: on the CPU with `PREVIEW_THREADS`, loaded once (and
    again when its model files change) and shared by nothing a job runs."""
    return _get(
        EngineKey(
            name, default_model_dir(name), use_gpu=False, threads=PREVIEW_THREADS, preview=True
        )
    )


def _get(key: EngineKey) -> Engine:
    with _lock:
        _forget_changed(key.name)
        if key in _cache:
            return _cache[key][0]
        loading = _loading.setdefault(key, threading.Lock())
    # Loaded under its own lock: a preview engine loading (seconds, for Supertonic) never keeps
    # a job from getting its engine, and two callers of one key never load it twice.
    with loading:
        with _lock:
            if key in _cache:
                return _cache[key][0]
        stamp = _stamp(key)  # before loading: files replaced meanwhile count as changed
        engine = _load(key)
        global _loaded_count
        with _lock:
            _cache[key] = (engine, stamp)
            _loaded_count += 1
            return engine


def engines_loaded() -> int:
    """How many engines this process has loaded for the cache so far: a job that finds its
    engine warm (the web app's second job, an engine process kept between jobs) adds none."""
    with _lock:
        return _loaded_count


def _stamp(key: EngineKey) -> Stamp:
    """What the engine's model files look like now (None for an engine that rescans them)."""
    return stamp(key.name, key.model_dir)


def stamp(name: str, model_dir: Path) -> Stamp:
    """What `name`'s engine would load from `model_dir` now: its files, and for an engine
    with several runtimes the one in force (engines made for another stamp are not these)."""
    return engine_info(name).stamp(model_dir)


def _forget_changed(name: str) -> None:
    """Drop `name`'s engines whose files are gone or changed (jobs already running keep
    theirs); the next lookup loads the files as they are, or says what is missing."""
    for key, (_, stamp) in list(_cache.items()):
        if key.name == name and _stamp(key) != stamp:
            del _cache[key]


def release(name: str, use_gpu: bool) -> int:
    """Forget the cached job engines of `name` on that device request (never the previews'):
    their ONNX sessions, and the memory or VRAM they hold, go as soon as nobody speaks with
    them; the next lookup loads them again. How many were forgotten."""
    with _lock:
        gone = [
            key for key in _cache if key.name == name and key.use_gpu == use_gpu and not key.preview
        ]
        for key in gone:
            del _cache[key]
        return len(gone)


for _engine in (PIPER, SUPERTONIC, KOKORO):  # a new engine: its package, and its name here
    register(_engine)
