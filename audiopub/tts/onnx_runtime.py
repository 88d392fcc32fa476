"""The one place that builds ONNX Runtime sessions.

It asks for CUDA then CPU (or CPU only), sets threads, and reports the provider the session
*actually* uses: ONNX Runtime silently falls back to the CPU when CUDA libraries are missing,
and a UI that trusts the request would claim "GPU" while the CPU does the work.

On a GPU, the session's CUDA arena may grow to the device's VRAM budget (`gpu.vram_budget`:
free + this process's own) and no further, and after a run that ran out of memory the next
run hands what the arena holds unused back to the device (`Session.run`,
`Session.run_with_iobinding`).
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import onnxruntime as ort
from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

from audiopub import settings
from audiopub.errors import ModelMissing
from audiopub.gpu.vram_budget import device_budget_bytes
from audiopub.tts.batching import is_out_of_memory
from audiopub.tts.engine import DeviceReport
from audiopub.tts.graph_rewrite import RewriteStep, rewritten, steps_for
from audiopub.tts.node_placement import active_recording

log = logging.getLogger(__name__)

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"

# ORT's default logger prints a screen of errors when CUDA libraries are missing; we report
# one clear line ourselves instead. Level 3 = errors only, 4 = fatal only.
_QUIET = 3
_SILENT = 4
# The run option that frees an arena's unused memory at the end of a run, and the device.
ARENA_SHRINKAGE = "memory.enable_memory_arena_shrinkage"
_Result = TypeVar("_Result")

# A GPU session's CPU threads only run the few nodes CUDA leaves on the CPU (shape arithmetic)
# and launch kernels. ORT's default is a pool of every core, spinning while it waits, which
# takes the cores the planner thread needs to phonemise the next batch.
GPU_INTRA_OP_THREADS = 2


# What ORT raises for a file that is not a usable model (e.g. a Git LFS pointer).
_LOAD_ERRORS = (
    ort_errors.InvalidProtobuf,
    ort_errors.InvalidGraph,
    ort_errors.Fail,
    ort_errors.NoSuchFile,
    ort_errors.InvalidArgument,
    ort_errors.NotImplemented,
)


@dataclass(frozen=True)
class Session:
    """An inference session and the truth about where it runs."""

    inference: ort.InferenceSession
    device: DeviceReport
    # Set by a run that ran out of device memory (or by an engine, when another of its
    # sessions did): the next run shrinks the arena at its end.
    shrink_next_run: threading.Event = field(default_factory=threading.Event, compare=False)

    def run(self, outputs: Sequence[str] | None, feeds: dict[str, Any]) -> list[Any]:
        """`inference.run` (`outputs` None: every output). After a run on a GPU ran out of
        memory, the next one frees the arena's unused memory when it ends: the failed batch's
        peak, which the halved batches don't need and other programs (or other sessions) may."""
        names = None if outputs is None else list(outputs)
        return self._watched(lambda options: self.inference.run(names, feeds, options))

    def run_with_iobinding(self, binding: ort.IOBinding) -> None:
        """`inference.run_with_iobinding`, with `run`'s care for the arena after running out
        of memory: a loop whose values stay on the device runs this way."""
        self._watched(lambda options: self.inference.run_with_iobinding(binding, options))

    def _watched(self, run: Callable[[ort.RunOptions | None], _Result]) -> _Result:
        """`run` with the options that shrink the arena if the run before ran out of memory;
        a run that runs out of memory marks the next one."""
        options = None
        if self.device.on_gpu and self.shrink_next_run.is_set():
            self.shrink_next_run.clear()
            options = arena_shrinkage_options(self.device.device_id or 0)
        try:
            return run(options)
        except Exception as exc:
            if self.device.on_gpu and is_out_of_memory(exc):
                self.shrink_next_run.set()
            raise


def arena_shrinkage_options(device_id: int) -> ort.RunOptions:
    """Run options that shrink CUDA device `device_id`'s arena when the run ends."""
    options = ort.RunOptions()
    options.add_run_config_entry(ARENA_SHRINKAGE, f"gpu:{device_id}")
    return options


def available_providers() -> list[str]:
    """Providers this onnxruntime build offers (the boundary tests fake)."""
    return ort.get_available_providers()


def preload_cuda_libraries() -> None:
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


def cuda_can_run() -> bool:
    """Whether a CUDA session may be had here: this onnxruntime build offers CUDA and the
    NVIDIA driver loads (the CUDA/cuDNN libraries are only known once a session tries)."""
    return CUDA in available_providers() and nvidia_driver_present()


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


def cuda_provider_options(device_id: int = 0, gpu_mem_limit: int | None = None) -> dict[str, str]:
    """The CUDA provider options every GPU session is made with (ORT takes them as strings).

    The search setting matters most: with the joe voice on an H100, EXHAUSTIVE read 74 chars/s
    at batch 1 and 8,074 at batch 48; HEURISTIC 376-454 and ~24,500.
    `gpu_mem_limit`: bytes the arena may grow to (the device's VRAM budget); None: no bound.
    """
    limit = {"gpu_mem_limit": str(gpu_mem_limit)} if gpu_mem_limit else {}
    return {
        **limit,
        "device_id": str(device_id),  # which GPU, so a machine with several can use each one
        # Chunk shapes change every call; EXHAUSTIVE re-benchmarks each convolution per shape.
        "cudnn_conv_algo_search": "HEURISTIC",
        # Grow by what is asked, not by doubling: variable batches would reserve unused VRAM.
        "arena_extend_strategy": "kSameAsRequested",
    }


def cuda_tuning_options(tuning: frozenset[str]) -> dict[str, str]:
    """The optional cuDNN settings `tuning` turns on (`settings.CUDA_TUNINGS`; the others are
    graph rewrites), as provider options: the largest workspace cuDNN's convolution search may
    use (faster algorithms, more VRAM), and 1-D convolutions padded to 2-D NC1D layout (Piper's
    are 1-D)."""
    options = {}
    if "max_workspace" in tuning:
        options["cudnn_conv_use_max_workspace"] = "1"
    if "pad_nc1d" in tuning:
        options["cudnn_conv1d_pad_to_nc1d"] = "1"
    return options


def session_options(threads: int | None, on_gpu: bool = False) -> ort.SessionOptions:
    """Options for every session; `on_gpu` for one that asks for CUDA: `threads` (else
    GPU_INTRA_OP_THREADS) threads."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = _QUIET
    # The pool's threads sleep while they wait instead of spinning. Spinning buys an operator's
    # start a few microseconds, and burns the cores the rest of the work needs: the writer
    # threads, the web server, other engine processes. A Piper paragraph spoken six times on a
    # 2-core machine: 7.5 CPU s with spinning, 4.9 without, and no slower (3.8 s, 3.1 s); with a
    # second process speaking beside it, 6.4 s of wall time each with spinning, 5.0 without.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    if on_gpu:
        options.intra_op_num_threads = threads or GPU_INTRA_OP_THREADS
    else:
        if threads:
            options.intra_op_num_threads = threads
        # No plan of which buffers share memory: ORT makes it when the session is built, and
        # for Piper's 2,755 nodes it was three quarters of the build (3.4 CPU s of a voice's
        # 4.3; 1.0 without). The arena hands freed blocks to the next tensor anyway: 40 chunks
        # spoke as fast and peaked within 1 % of the same memory. (Kept on a GPU, unmeasured.)
        options.enable_mem_reuse = False
    # The graphs here are sequential; a second pool would only compete for the same cores.
    options.inter_op_num_threads = 1
    # A memory pattern is planned and kept for every new set of input shapes, and never freed;
    # every chunk here has its own length, so the patterns only pile up: a Piper engine process
    # kept ~74 KB more after each chunk (+39 MiB of native heap over 450 chunks) and its arena
    # grew to twice the size, so a 400 k-character book peaked 23 % above a 100 k one.
    options.enable_mem_pattern = False
    return options


def create_session(
    model: Path,
    use_gpu: bool,
    threads: int | None = None,
    rewrite: Sequence[RewriteStep] = (),
    *,
    device_id: int = 0,
) -> Session:
    """Load `model`, on CUDA when asked and possible, else on the CPU; say which.

    `rewrite`: steps to load the model through (see `graph_rewrite`); those for the CPU only
    are left out when the session may run on a GPU.
    `device_id`: the CUDA device to use when on a GPU.
    """
    if not model.is_file():
        raise ModelMissing(f"Model file not found: {model}")
    providers = available_providers()
    requested: list[str | tuple[str, dict[str, str]]] = [CPU]
    tuning = settings.cuda_tuning() if use_gpu else frozenset()
    if use_gpu:
        preload_cuda_libraries()
        if CUDA in providers:
            requested = [
                (
                    CUDA,
                    {
                        **cuda_provider_options(device_id, device_budget_bytes(device_id)),
                        **cuda_tuning_options(tuning),
                    },
                ),
                CPU,
            ]
    on_gpu = requested != [CPU]
    source = rewritten(model, steps_for(rewrite, cpu_only_session=not on_gpu, tuning=tuning))
    options = session_options(threads, on_gpu)
    placement = active_recording()
    if placement is not None:  # measuring where the nodes run (`node_placement`)
        options.enable_profiling = True
        options.profile_file_prefix = placement.profile_prefix()

    ort.set_default_logger_severity(_SILENT)
    try:
        inference = ort.InferenceSession(str(source), sess_options=options, providers=requested)
    except _LOAD_ERRORS as exc:
        raise ModelMissing(f"{model} is not a loadable ONNX model ({exc})") from exc
    finally:
        ort.set_default_logger_severity(_QUIET)

    if placement is not None:
        placement.add(inference)
    actual = inference.get_providers()[0]
    reason = None
    if use_gpu and actual == CPU:
        reason = explain_cpu_fallback(providers)
        # Not a warning on stderr: the job's device report says it, once, where people look
        # (the summary after `convert`, the job's card).
        log.info("GPU requested for %s, running on CPU: %s", model.name, reason)
    return Session(
        inference,
        DeviceReport(
            requested_gpu=use_gpu,
            provider=actual,
            fallback_reason=reason,
            device_id=device_id if actual == CUDA else None,
        ),
    )
