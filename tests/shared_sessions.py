"""ONNX Runtime sessions shared across the tests of a worker: a CPU session of the same model
bytes with the same options is made once and handed out again.

Making a Piper session cost ~2.5 s of CPU on a small machine (about 1 s since Audiopub's CPU
sessions skip ORT's memory-reuse plan), and the suite's conversions, previews and engines make
~300 of them. Every line of
Audiopub still runs: the engines, `onnx_runtime.create_session`, the rewrites; only ORT's
construction of an identical session is skipped. A session holds no state between runs that
changes what a run computes (ORT runs are thread-safe), so a test cannot tell a shared one from
a fresh one by its results.

Not shared: sessions asked for a GPU provider (tests fake those, see conftest), sessions made
from bytes, with profiling on or saving an optimised model, with any other argument, and
sessions of a subclass (tests that fake ORT subclass `InferenceSession`).

A CPU session that leaves its thread count to ORT (a pool of every core) gets one thread here,
as the engine processes' sessions have: the suite runs three workers on the machine's cores, so
a second thread mostly waits for the first and wakes it. A paragraph measured on two busy cores:
Piper 0.95 → 0.75 CPU s, Kokoro 31 → 27 CPU s; a session computes the same on either count.
`onnx_runtime.session_options` itself is tested as Audiopub makes it."""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import onnxruntime as ort

CPU = "CPUExecutionProvider"
# The session options Audiopub sets: with the model's bytes, what makes two sessions the same.
_OPTION_FIELDS = (
    "graph_optimization_level",
    "intra_op_num_threads",
    "inter_op_num_threads",
    "enable_mem_pattern",
    "enable_mem_reuse",
    "enable_cpu_mem_arena",
    "execution_mode",
    "log_severity_level",
)
_CONFIG_KEYS = (
    "session.intra_op.allow_spinning",
    "session.inter_op.allow_spinning",
    "session.disable_prepacking",
)
# A Piper session holds ~150 MB: a few models at a few thread counts (and tiny Supertonic
# graphs) are all a module uses.
KEPT = 8

_made: OrderedDict[tuple[Any, ...], ort.InferenceSession] = OrderedDict()
# (device, inode, size, mtime) → the file's digest, so a model is read once to be named.
_digests: dict[tuple[int, int, int, int], str] = {}
made_here = 0  # sessions ORT really built: what the sharing saves is visible in a test's count


def _digest(path: Path) -> str:
    stat = path.stat()
    identity = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if identity not in _digests:
        with path.open("rb") as file:
            _digests[identity] = hashlib.file_digest(file, "blake2b").hexdigest()
    return _digests[identity]


def _config(options: ort.SessionOptions, key: str) -> str | None:
    try:
        return options.get_session_config_entry(key)
    except Exception:  # ORT raises when the entry was never set
        return None


def _cpu_only(providers: Any) -> bool:
    return providers is not None and [p if isinstance(p, str) else None for p in providers] == [CPU]


def session_key(
    path: Any, sess_options: Any, providers: Any, kwargs: dict[str, Any]
) -> tuple[Any, ...] | None:
    """What identifies the session asked for, or None where it must be made fresh."""
    if kwargs or not isinstance(path, (str, os.PathLike)):
        return None
    if not _cpu_only(providers):
        return None
    options = sess_options or ort.SessionOptions()
    if options.enable_profiling or options.optimized_model_filepath:
        return None
    model = Path(path)
    if not model.is_file():
        return None  # ORT's own error, as without sharing
    return (
        _digest(model),
        tuple(getattr(options, name) for name in _OPTION_FIELDS),
        tuple(_config(options, key) for key in _CONFIG_KEYS),
    )


def _one_thread(sess_options: Any, providers: Any) -> None:
    """A CPU-only session's options with one intra-op thread where they left ORT to choose."""
    if _cpu_only(providers) and sess_options is not None and sess_options.intra_op_num_threads == 0:
        sess_options.intra_op_num_threads = 1


class SharedSession(ort.InferenceSession):
    """`ort.InferenceSession`, handing out the session already made for the same key."""

    def __new__(
        cls, path: Any, sess_options: Any = None, providers: Any = None, **kwargs: Any
    ) -> SharedSession:
        key = None
        if cls is SharedSession:  # a test's fake of ORT is made as it asks
            _one_thread(sess_options, providers)
            key = session_key(path, sess_options, providers, kwargs)
        if key is not None and key in _made:
            _made.move_to_end(key)
            return _made[key]  # type: ignore[return-value]
        session = super().__new__(cls)
        session._shared_key = key  # type: ignore[attr-defined]
        return session

    def __init__(
        self, path: Any, sess_options: Any = None, providers: Any = None, **kwargs: Any
    ) -> None:
        if getattr(self, "_built", False):
            return  # handed out again: already made
        global made_here
        super().__init__(path, sess_options, providers=providers, **kwargs)
        made_here += 1
        self._built = True
        key = getattr(self, "_shared_key", None)
        if key is not None:
            _made[key] = self
            while len(_made) > KEPT:
                _made.popitem(last=False)
