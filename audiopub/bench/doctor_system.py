"""Which CUDA and cuDNN libraries this process can load, and from where: ONNX Runtime's CUDA
provider needs them, and a missing or mismatched one is the usual reason a GPU session falls
back to the CPU. NVIDIA's PyPI wheels (`audiopub[cuda]`) are preloaded first, as a session does.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Final

from audiopub.tts import onnx_runtime

# Library → the file names it goes by, newest major version first (Linux, then Windows).
CUDA_LIBRARIES: Final = {
    "cudart": ("libcudart.so.13", "libcudart.so.12", "cudart64_13.dll", "cudart64_12.dll"),
    "cublas": ("libcublas.so.13", "libcublas.so.12", "cublas64_13.dll", "cublas64_12.dll"),
    "cublasLt": (
        "libcublasLt.so.13",
        "libcublasLt.so.12",
        "cublasLt64_13.dll",
        "cublasLt64_12.dll",
    ),
    "cufft": ("libcufft.so.12", "libcufft.so.11", "cufft64_12.dll", "cufft64_11.dll"),
    "cudnn": ("libcudnn.so.9", "cudnn64_9.dll"),
}


def cuda_libraries() -> dict[str, str | None]:
    """Per library, the file that loaded (its path where the system says), or None."""
    onnx_runtime.preload_cuda_libraries()
    found: dict[str, str | None] = {}
    for library, names in CUDA_LIBRARIES.items():
        found[library] = next((name for name in names if _loads(name)), None)
    return {library: _path_of(name) if name else None for library, name in found.items()}


def _loads(name: str) -> bool:
    if (name.endswith(".dll")) != (os.name == "nt"):
        return False
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def _path_of(name: str, maps: Path = Path("/proc/self/maps")) -> str:
    """Where a loaded library's file is (Linux: the process's memory map), else its name."""
    try:
        for line in maps.read_text().splitlines():
            path = line.split(maxsplit=5)[-1]
            if path.endswith("/" + name):
                return path
    except OSError:
        pass
    return name
