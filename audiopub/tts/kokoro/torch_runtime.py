"""Kokoro-82M's network run by PyTorch: what replaces the ONNX session's run for the torch
runtime. Same inputs (token ids with their pads, a style row, the speed), same outputs (the
audio and each token's frames), so phonemes, chunking, word times and trims stay one code path.

On a GPU it runs in reduced precision where the card does that well (bfloat16 from compute
capability 8.0, float16 on Volta and Turing), with TF32 matrix products on Ampere and newer;
the durations are rounded and the spectra inverted in float32 whatever the rest runs in.

Weights from the int8 export run dequantized on float activations. `match_onnx_int8` does
ONNX Runtime's integer arithmetic instead (torch_int8), layer for layer exact against ORT; it
is off by default: it is about 2.6× slower on the CPU and, measured, does not bring the
durations closer to ORT's (ALBERT's twelve passes of one layer and the LSTMs amplify the last
float rounding differences, in the layer norms, softmax and activations, into other int8
roundings: ALBERT's output differs from ORT's by 13 % either way). On a GPU the float path is
the one wanted in any case: it is what the card is fast at.

`run_batch` runs several texts in one padded batch (torch_network's masks): the Kokoro engine
gives it the pieces of the texts the executor batched by length.

`compile_backend` (off by default) puts the parts whose shapes follow only the text's length,
ALBERT and the decoder, through `torch.compile` with dynamic shapes ("inductor" on a GPU); the
alignment between them, data-dependent, stays eager. A part that fails to compile, when made or
on its first run, runs eager instead, and the log says why once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from audiopub.errors import EngineUnavailable
from audiopub.tts.batching import is_out_of_memory

# PyTorch is an optional extra (`audiopub[torch]`) and takes seconds to import: it and the
# modules built on it (torch_network, torch_weights, torch_int8) are imported inside the
# functions that run the network, so choosing a runtime or ONNX Runtime's path never needs it.
if TYPE_CHECKING:
    import torch

    from audiopub.tts.kokoro.torch_network import KokoroNetwork

log = logging.getLogger(__name__)

INSTALL: Final = "pip install 'audiopub[torch]' (PyTorch and safetensors)"
ONNX: Final = "onnx"
TORCH: Final = "torch"
AUTO: Final = "auto"
RUNTIMES: Final = (ONNX, TORCH, AUTO)
# What `torch.compile` takes on: their input shapes follow the text's length alone.
COMPILED_PARTS: Final = ("bert", "decoder")


def require_torch() -> None:
    """PyTorch and safetensors importable, else an error that says what to install."""
    try:
        import safetensors  # noqa: F401 - optional, with PyTorch
        import torch  # noqa: F401 - optional: see the top
    except ImportError as exc:
        raise EngineUnavailable(
            f"The torch runtime needs PyTorch ({exc.name} is not installed): {INSTALL}"
        ) from exc


def torch_cuda_works() -> bool:
    """CUDA usable through PyTorch (False where PyTorch is not installed)."""
    try:
        import torch  # PyTorch: see the top
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def choose_runtime(asked: str, use_gpu: bool, ort_cuda_works: bool) -> str:
    """`auto`: torch where the GPU is wanted and CUDA works through PyTorch but not through
    ONNX Runtime; ONNX Runtime otherwise (its int8 graph is the CPU's fastest)."""
    if asked not in RUNTIMES:
        raise EngineUnavailable(f"Unknown runtime {asked!r}: one of {', '.join(RUNTIMES)}")
    if asked != AUTO:
        return asked
    # Said at the level a command shows by default: the person asked to be told.
    if use_gpu and not ort_cuda_works and torch_cuda_works():
        log.warning("Kokoro runtime auto: torch (CUDA works through PyTorch, not ONNX Runtime)")
        return TORCH
    log.warning("Kokoro runtime auto: onnx")
    return ONNX


@dataclass(frozen=True)
class Precision:
    """What the network computes in on its device."""

    dtype: str  # "float32", "bfloat16" or "float16"
    tf32: bool


def precision_for(
    device: str, capability: tuple[int, int] | None, allow_reduced: bool
) -> Precision:
    """bfloat16 and TF32 on sm_80 and newer, float16 on Volta/Turing (sm_70–75), float32 on
    the CPU, older cards, or when reduced precision is switched off."""
    if device != "cuda" or capability is None:
        return Precision("float32", False)
    ampere = capability >= (8, 0)
    if not allow_reduced:
        return Precision("float32", ampere)
    if ampere:
        return Precision("bfloat16", True)
    if capability >= (7, 0):
        return Precision("float16", False)
    return Precision("float32", False)


class TorchKokoro:
    """The network on one device, its weights from `model` (made once, cached beside it)."""

    def __init__(
        self,
        model: Path,
        use_gpu: bool = False,
        device_id: int = 0,
        threads: int | None = None,
        reduced_precision: bool = True,
        match_onnx_int8: bool = False,
        compile_backend: str | Callable[..., Any] | None = None,
    ) -> None:
        """`match_onnx_int8`: the int8 export's integer arithmetic in its int8 layers (nothing
        to match in weights that were never int8). `compile_backend`: torch.compile's backend
        for ALBERT and the decoder (`compile`); None: eager."""
        require_torch()
        import torch  # PyTorch: see the top

        from audiopub.tts.kokoro.torch_int8 import match_int8, quantized_weights  # PyTorch
        from audiopub.tts.kokoro.torch_network import KokoroNetwork  # PyTorch
        from audiopub.tts.kokoro.torch_weights import check_complete, load_state, unused  # PyTorch

        on_gpu = use_gpu and torch.cuda.is_available()
        self.device = torch.device(f"cuda:{device_id}" if on_gpu else "cpu")
        capability = torch.cuda.get_device_capability(self.device) if on_gpu else None
        self.precision = precision_for(self.device.type, capability, reduced_precision)
        if self.precision.tf32:
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        # PyTorch's threads are the process's, not this engine's: an engine process sized to
        # its share of the cores sets them; a one-thread engine (previews) beside a job's
        # engine in the same process leaves them, or it would slow the job to one core.
        if threads and threads > 1 and not on_gpu:
            torch.set_num_threads(threads)
        state = {key: value for key, value in load_state(model).items() if not unused(key)}
        network = KokoroNetwork()
        expected = network.state_dict().keys()
        check_complete(expected, state)
        network.load_state_dict({key: state[key] for key in expected})
        self.int8_layers = match_int8(network, quantized_weights(state)) if match_onnx_int8 else 0
        self.network: KokoroNetwork = network.eval().to(self.device)
        self._lock = threading.Lock()
        self._eager: dict[str, torch.nn.Module] = {}  # the compiled parts' own modules
        if compile_backend is not None:
            self.compile(compile_backend)
        log.info(
            "Kokoro on PyTorch: %s, %s%s",
            self.device,
            self.precision.dtype,
            f", ONNX Runtime's int8 arithmetic in {self.int8_layers} layers"
            if self.int8_layers
            else "",
        )

    @property
    def compiled(self) -> bool:
        """Whether ALBERT and the decoder run compiled (False after a failed compilation)."""
        return bool(self._eager)

    def compile(self, backend: str | Callable[..., Any] = "inductor") -> None:
        """ALBERT and the decoder through `torch.compile`, with dynamic shapes (a new text
        length is not a new compilation); eager, said once, where that fails."""
        import torch  # PyTorch: see the top

        try:
            for name in COMPILED_PARTS:
                part = getattr(self.network, name)
                self._eager[name] = part
                setattr(self.network, name, torch.compile(part, backend=backend, dynamic=True))
        except Exception as exc:  # noqa: BLE001 - any failure to compile means eager
            self._run_eager(exc)

    def _run_eager(self, failure: BaseException) -> None:
        """Back to the eager modules after `failure` to compile."""
        root = failure
        while True:  # the compiler's own error, under dynamo's wrapping
            inner = getattr(root, "inner_exception", None) or root.__cause__
            if not isinstance(inner, BaseException):
                break
            root = inner
        reason = str(root).strip().splitlines()
        log.warning(
            "torch.compile failed for Kokoro (%s: %s); running eager",
            type(root).__name__,
            reason[0] if reason else "no message",
        )
        for name, part in self._eager.items():
            setattr(self.network, name, part)
        self._eager.clear()

    @property
    def provider(self) -> str:
        return f"torch:{self.device.type}"

    def run(
        self, ids: np.ndarray, style: np.ndarray, speed: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """ids [1, T] int64, style [1, 256] float32 → audio [samples] float32, frames [T] int64."""
        return self.run_batch([ids.reshape(-1)], style.reshape(1, -1), speed)[0]

    def run_batch(
        self, ids: Sequence[np.ndarray], styles: np.ndarray, speed: float
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Several texts in one padded run: ids, each [T_i] int64 with its pads; styles
        [B, 256] float32, a row each → each text's audio [samples] float32 and frames [T_i]
        int64, the same as it gets alone (to float rounding)."""
        import torch  # PyTorch: see the top

        lengths = [len(row) for row in ids]
        padded = np.zeros((len(ids), max(lengths)), dtype=np.int64)
        for number, row in enumerate(ids):
            padded[number, : len(row)] = row
        dtype = getattr(torch, self.precision.dtype)
        with self._lock, torch.inference_mode():
            tokens = _to_device(torch.from_numpy(padded), self.device)
            rows = _to_device(torch.from_numpy(styles.astype(np.float32)), self.device)
            try:
                with torch.autocast(
                    device_type=self.device.type, dtype=dtype, enabled=dtype is not torch.float32
                ):
                    spoken = self._speak(tokens, lengths, rows, float(speed))
            except torch.cuda.OutOfMemoryError:
                # Give the failed run's blocks back before the caller retries smaller (its
                # message says "out of memory", as batching.is_out_of_memory reads it).
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                raise
            return [(audio.float().cpu().numpy(), frames.cpu().numpy()) for audio, frames in spoken]

    def _speak(
        self, tokens: torch.Tensor, lengths: list[int], rows: torch.Tensor, speed: float
    ) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The network's batch; compiled parts compile on their first run, and one that fails
        to leaves the run, and every later one, to the eager modules."""
        import torch  # PyTorch: see the top

        if not self._eager:
            return self.network.speak_batch(tokens, lengths, rows, speed)
        try:
            return self.network.speak_batch(tokens, lengths, rows, speed)
        except Exception as exc:  # noqa: BLE001 - a compiler's error: the eager run decides
            if isinstance(exc, torch.cuda.OutOfMemoryError) or is_out_of_memory(exc):
                raise  # the batch is too big, compiled or not: the caller halves it
            self._run_eager(exc)
        return self.network.speak_batch(tokens, lengths, rows, speed)


def _to_device(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """To the GPU from pinned memory without waiting on the copy; as is on the CPU."""
    if device.type != "cuda":
        return tensor
    return tensor.pin_memory().to(device, non_blocking=True)
