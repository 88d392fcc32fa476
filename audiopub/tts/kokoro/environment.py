"""Kokoro's own settings, each an environment variable (listed by `KOKORO.settings`)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from audiopub.settings import EngineSetting, folder

# What runs Kokoro's network: ONNX Runtime, PyTorch, or `auto` (PyTorch where CUDA works
# through it and not through ONNX Runtime).
RUNTIMES: Final = ("onnx", "torch", "auto")


def parse_runtime(text: str) -> str:
    """One of RUNTIMES, in any case (empty: onnx); ValueError names them."""
    runtime = text.strip().lower() or "onnx"
    if runtime not in RUNTIMES:
        raise ValueError(f"expected one of {', '.join(RUNTIMES)}, not {text!r}")
    return runtime


DIR: Final[EngineSetting[Path | None]] = EngineSetting(
    "AUDIOPUB_KOKORO_DIR", folder, None, "Kokoro's folder (default `models/kokoro/`)"
)
RUNTIME: Final[EngineSetting[str]] = EngineSetting(
    "AUDIOPUB_KOKORO_RUNTIME",
    parse_runtime,
    "onnx",
    "what runs Kokoro: `onnx` (default), `torch` or `auto` (`convert --runtime`)",
)
SETTINGS: Final = (DIR, RUNTIME)
