"""A worker's task for the memory sampler's tests, in a module of its own: a spawned process
imports only this to run it, not the test module and the app behind it (~2 s of CPU)."""

from __future__ import annotations

import time


def hold_memory(mb: int) -> int:
    block = bytearray(mb * 1024 * 1024)
    block[::4096] = b"x" * len(block[::4096])  # touch every page so it is resident
    time.sleep(0.5)  # long enough for the sampler to see it
    return len(block)
