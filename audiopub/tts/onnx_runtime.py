"""The one place that builds ONNX Runtime sessions.

It asks for CUDA then CPU (or CPU only), sets threads, and reports the provider the session
*actually* uses: ONNX Runtime silently falls back to the CPU when CUDA libraries are missing,
and a UI that trusts the request would claim "GPU" while the CPU does the work.
"""

from __future__ import annotations

import ctypes
import glob
import hashlib
import importlib.util
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import onnxruntime as ort
from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

from audiopub import settings
from audiopub.errors import ModelMissing
from audiopub.tts.engine import DeviceReport

log = logging.getLogger(__name__)

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"

# ORT's default logger prints a screen of errors when CUDA libraries are missing; we report
# one clear line ourselves instead. Level 3 = errors only, 4 = fatal only.
_QUIET = 3
_SILENT = 4


# What ORT raises for a file that is not a usable model (e.g. a Git LFS pointer).
_CONV2D_REWRITE = "conv2d-v1"  # in the cached model's name: bump it when conv_layout changes
_LOAD_ERRORS = (
    ort_errors.InvalidProtobuf, ort_errors.InvalidGraph, ort_errors.Fail,
    ort_errors.NoSuchFile, ort_errors.InvalidArgument, ort_errors.NotImplemented,
)


@dataclass(frozen=True)
class Session:
    """An inference session and the truth about where it runs."""

    inference: ort.InferenceSession
    device: DeviceReport


def available_providers() -> list[str]:
    """Providers this onnxruntime build offers (the boundary tests fake)."""
    return ort.get_available_providers()


def _preload_cuda_libraries() -> None:
    # With `audiopub[cuda]`, the CUDA and cuDNN runtimes come as NVIDIA's PyPI wheels; ORT can
    # load them from site-packages so no system CUDA toolkit is needed.
    preload = getattr(ort, "preload_dlls", None)
    # Only with the wheels present: without them preload_dlls prints a page of load failures.
    if preload is not None and importlib.util.find_spec("nvidia") is not None:
        try:
            preload()
        except OSError as exc:  # a missing wheel is diagnosed below, when the session falls back
            log.debug("onnxruntime.preload_dlls failed: %s", exc)


def nvidia_driver_present() -> bool:
    """Whether the NVIDIA driver's user-space library can be loaded."""
    name = "nvcuda.dll" if os.name == "nt" else "libcuda.so.1"
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def explain_cpu_fallback(providers: list[str]) -> str:
    """Why a GPU request ended on the CPU, in words a user can act on."""
    if CUDA not in providers:
        return (
            "this onnxruntime build has no CUDA support "
            "(install onnxruntime-gpu: pip install 'audiopub[cuda]')"
        )
    if not nvidia_driver_present():
        return "no NVIDIA driver found (libcuda could not be loaded)"
    return (
        "the CUDA / cuDNN runtime libraries that this onnxruntime build needs could not be loaded "
        "(pip install 'audiopub[cuda]' installs them)"
    )


def _with_2d_convs(model: Path) -> Path:
    """`model` with its 1-D convolutions as 2-D ones (see `conv_layout`), made once and kept
    in the model cache; `model` itself if it has none or the rewrite fails.

    A file rather than bytes in memory, and `onnx` imported only to make it: parsing a model
    with `onnx` leaves ~100 MB in the process, more than every engine process should carry.
    """
    stat = model.stat()
    source = f"{model.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    cached = settings.model_cache_dir() / f"{model.stem}.{key}.{_CONV2D_REWRITE}.onnx"
    if cached.is_file():
        return cached
    try:
        from audiopub.tts import conv_layout

        for stale in cached.parent.glob(f"{glob.escape(model.stem)}.*.onnx"):
            if stale != cached:  # another engine process may just have made this one
                stale.unlink(missing_ok=True)  # made from an earlier version of the same model
        if conv_layout.write_with_2d_convs(model, cached):
            return cached
    except Exception as exc:  # noqa: BLE001 - only a speed-up: ORT loads the file, or says why not
        log.warning("%s: 1-D convolutions left as they are (%s)", model.name, exc)
    return model


def cuda_provider_options(device_id: int = 0) -> dict[str, str]:
    """The CUDA provider options every GPU session is made with (ORT takes them as strings).

    The search setting matters most: with the joe voice on an H100, EXHAUSTIVE read 74 chars/s
    at batch 1 and 8,074 at batch 48; HEURISTIC 376-454 and ~24,500.
    """
    return {
        "device_id": str(device_id),  # which GPU, so a machine with several can use each one
        # Chunk shapes change every call; EXHAUSTIVE re-benchmarks each convolution per shape.
        "cudnn_conv_algo_search": "HEURISTIC",
        # Grow by what is asked, not by doubling: variable batches would reserve unused VRAM.
        "arena_extend_strategy": "kSameAsRequested",
    }


def session_options(threads: int | None) -> ort.SessionOptions:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = _QUIET
    if threads:
        options.intra_op_num_threads = threads
    # The graphs here are sequential; a second pool would only compete for the same cores.
    options.inter_op_num_threads = 1
    return options


def create_session(model: Path, use_gpu: bool, threads: int | None = None,
                   conv1d_as_2d: bool = False, *, device_id: int = 0) -> Session:
    """Load `model`, on CUDA when asked and possible, else on the CPU; say which.

    `conv1d_as_2d`: on the CPU, run its 1-D convolutions as 2-D ones (see `conv_layout`).
    `device_id`: the CUDA device to use when on a GPU.
    """
    if not model.is_file():
        raise ModelMissing(f"Model file not found: {model}")
    providers = available_providers()
    requested: list[str | tuple[str, dict[str, str]]] = [CPU]
    if use_gpu:
        _preload_cuda_libraries()
        if CUDA in providers:
            requested = [(CUDA, cuda_provider_options(device_id)), CPU]
    source = model
    if conv1d_as_2d and requested == [CPU]:
        source = _with_2d_convs(model)

    ort.set_default_logger_severity(_SILENT)
    try:
        inference = ort.InferenceSession(
            str(source), sess_options=session_options(threads), providers=requested
        )
    except _LOAD_ERRORS as exc:
        raise ModelMissing(f"{model} is not a loadable ONNX model ({exc})") from exc
    finally:
        ort.set_default_logger_severity(_QUIET)

    actual = inference.get_providers()[0]
    reason = None
    if use_gpu and actual == CPU:
        reason = explain_cpu_fallback(providers)
        log.warning("GPU requested for %s, running on CPU: %s", model.name, reason)
    return Session(inference, DeviceReport(requested_gpu=use_gpu, provider=actual,
                                           fallback_reason=reason,
                                           device_id=device_id if actual == CUDA else None))
