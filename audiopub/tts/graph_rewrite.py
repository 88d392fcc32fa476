"""Models rewritten once for what Audiopub needs from them, and kept in the model cache.

A rewrite is a list of named steps, each changing an `onnx.ModelProto` in place: exposing a
value the graph computes anyway (Piper's phoneme durations, see `piper.graph`), or running the
same arithmetic a faster way on one kind of device (1-D convolutions as 2-D, see
`conv_layout`; a half-precision decoder on a GPU, see `half_precision`). The rewritten file is
made once per (model file, steps) and reused by every session and engine process after it.

A file rather than bytes in memory, and `onnx` imported only to make it: parsing a model with
`onnx` leaves ~100 MB in the process, more than every engine process should carry.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from audiopub import settings
from audiopub.atomic import atomic_write

if TYPE_CHECKING:
    import onnx

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RewriteStep:
    tag: str  # in the cached file's name: change it whenever `apply` changes what it writes
    apply: Callable[[onnx.ModelProto], int]  # in place; how many changes it made (0: none)
    cpu_only: bool = False  # a speed-up for the CPU provider only
    # For GPU sessions only, and only while this CUDA setting (`settings.CUDA_TUNINGS`) is on.
    tuning: str | None = None


def steps_for(
    steps: Sequence[RewriteStep], cpu_only_session: bool, tuning: frozenset[str] = frozenset()
) -> tuple[RewriteStep, ...]:
    """The steps that apply to a session on the CPU alone, or to one that may run on a GPU
    with the CUDA settings `tuning` on."""
    if cpu_only_session:
        return tuple(step for step in steps if step.tuning is None)
    return tuple(
        step
        for step in steps
        if not step.cpu_only and (step.tuning is None or step.tuning in tuning)
    )


def write_rewritten(source: Path, target: Path, steps: Sequence[RewriteStep]) -> bool:
    """Write `source` rewritten by `steps` to `target` (atomically); False, and nothing
    written, when no step changed anything."""
    import onnx  # only to rewrite: see the top

    model = onnx.load(str(source))
    changes = [step.apply(model) for step in steps]  # every step runs, in order
    if not any(changes):
        return False
    with atomic_write(target) as partial:  # a process loading it never sees half a file
        onnx.save(model, str(partial))
    return True


def rewritten(model: Path, steps: Sequence[RewriteStep]) -> Path:
    """`model` rewritten by `steps`, made once and kept in the model cache; `model` itself when
    there are no steps, they change nothing, or the rewrite fails (with a warning): every step
    must leave a model that works without it."""
    if not steps:
        return model
    stat = model.stat()
    source = f"{model.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    tags = "+".join(step.tag for step in steps)
    cached = settings.model_cache_dir() / f"{model.stem}.{key}.{tags}.onnx"
    if cached.is_file():
        return cached
    try:
        _remove_older_versions(model.stem, key)
        if write_rewritten(model, cached, steps):
            return cached
    except Exception as exc:  # noqa: BLE001 - ORT loads the file as it is, or says why not
        log.warning("%s: not rewritten (%s): %s", model.name, tags, exc)
    return model


def _remove_older_versions(stem: str, key: str) -> None:
    """Rewrites made from an earlier version of the same model file. Those of this version
    stay, whatever their steps: another engine process may just have made one."""
    folder = settings.model_cache_dir()
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        parts = path.name.removesuffix(".onnx").rsplit(".", 2)
        if path.suffix == ".onnx" and len(parts) == 3 and parts[0] == stem and parts[1] != key:
            path.unlink(missing_ok=True)
