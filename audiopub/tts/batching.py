"""Which chunks run together: batches by length, bounded by what they produce.

A padded batch costs as much as its longest item times its size, so chunks of similar length
go together ("batching by length") and the padding stays small. A batch is bounded by a count
and, on a GPU, by the size of what it produces: memory grows with the padded audio, not with
the number of chunks (a batch of 128 Piper chunks asked for one 4.4 GB convolution buffer on
an 80 GB card). When the device still runs out of memory, the caller halves the batch
(`is_out_of_memory`) and plans smaller ones until batches have run cleanly for a while
(`BatchLimits.halved`, `BatchLimits.grown`). The padded-characters bound is for speech at
normal speed: slower speech makes more audio of each character (`BatchLimits.at_speed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from audiopub import settings

# Longest / shortest text in one batch: at 1.5 the padding is at most a third of a batch.
MAX_LENGTH_RATIO: Final = 1.5
# GPU memory per sample of padded output audio, activations and convolution workspace together.
# An estimate with headroom: the failed Piper batch above asked for ~200 bytes per output
# sample in its single largest buffer. An underestimate costs one halving, not the job.
BYTES_PER_OUTPUT_SAMPLE: Final = 1024
# Share of the free VRAM a batch may plan to use: ONNX Runtime's arena, cuDNN's workspaces and
# other programs on the card need the rest.
VRAM_SHARE: Final = 0.5


@dataclass(frozen=True)
class BatchLimits:
    """How big one padded batch may be."""

    max_items: int
    # Items × longest text, in characters; None: no bound beyond the count (the CPU).
    max_padded_chars: int | None = None
    max_length_ratio: float = MAX_LENGTH_RATIO

    def __post_init__(self) -> None:
        if self.max_items < 1:
            raise ValueError(f"a batch holds at least one chunk, not {self.max_items}")

    def halved(self, failed_size: int) -> BatchLimits:
        """Limits after a batch of `failed_size` items ran out of memory."""
        return replace(self, max_items=max(1, min(self.max_items, failed_size // 2)))

    def grown(self, ceiling: int) -> BatchLimits:
        """Limits after batches ran cleanly since a halving: twice the items, up to `ceiling`."""
        return replace(self, max_items=max(self.max_items, min(ceiling, self.max_items * 2)))

    def at_speed(self, speed: float) -> BatchLimits:
        """The limits for speech at `speed` (those given are for DEFAULT_SPEED): 0.7x makes
        1/0.7 the audio of each character, so a batch takes 0.7 the padded characters."""
        if self.max_padded_chars is None or speed == settings.DEFAULT_SPEED:
            return self
        scaled = self.max_padded_chars * speed / settings.DEFAULT_SPEED
        return replace(self, max_padded_chars=max(1, int(scaled)))


def plan_batches(lengths: Sequence[int], limits: BatchLimits) -> list[list[int]]:
    """Indices of `lengths` grouped into batches of similar length within `limits`.

    Each batch lists its indices in reading order, and batches come in the reading order of
    their first item, so the start of a window is ready first. With `max_items` 1 every index
    is its own batch, in order.
    """
    batches: list[list[int]] = []
    for index in sorted(range(len(lengths)), key=lambda i: (lengths[i], i)):
        current = batches[-1] if batches else None
        if current is not None and _fits(current, lengths, index, limits):
            current.append(index)
        else:
            batches.append([index])
    for batch in batches:
        batch.sort()
    return sorted(batches, key=lambda batch: batch[0])


def _fits(batch: list[int], lengths: Sequence[int], index: int, limits: BatchLimits) -> bool:
    shortest, longest = max(1, lengths[batch[0]]), lengths[index]  # batch is sorted by length
    if len(batch) >= limits.max_items or longest > shortest * limits.max_length_ratio:
        return False
    return limits.max_padded_chars is None or (len(batch) + 1) * longest <= limits.max_padded_chars


def padded_chars_for_vram(
    free_bytes: int, sample_rate: int, speed: float = settings.DEFAULT_SPEED
) -> int:
    """Characters of padded batch that `free_bytes` of GPU memory can take: the audio they
    make, at the slow end of speech (15 characters per second), in BYTES_PER_OUTPUT_SAMPLE."""
    samples_per_char = sample_rate / (settings.CHARS_PER_AUDIO_SECOND * speed)
    return max(1, int(free_bytes * VRAM_SHARE / BYTES_PER_OUTPUT_SAMPLE / samples_per_char))


# How ONNX Runtime's CUDA provider, cuDNN and cuBLAS say a device ran out of memory.
_OUT_OF_MEMORY = (
    "failed to allocate memory",
    "out of memory",
    "cudaerrormemoryallocation",
    "cudnn_status_alloc_failed",
    "cublas_status_alloc_failed",
)


def is_out_of_memory(error: BaseException) -> bool:
    """Whether `error`, or an error it was raised from, says a device ran out of memory."""
    seen: BaseException | None = error
    while seen is not None:
        if any(phrase in str(seen).lower() for phrase in _OUT_OF_MEMORY):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
