"""The batch planner: by length, within limits, in reading order; out-of-memory errors known."""

from __future__ import annotations

import pytest

from audiopub import settings
from audiopub.errors import SettingInvalid, SynthesisFailed
from audiopub.jobs.chunk_work import ChunkResult, ChunkTask, in_task_order, planned_batches
from audiopub.tts.batching import (
    BYTES_PER_OUTPUT_SAMPLE,
    BatchLimits,
    is_out_of_memory,
    padded_chars_for_vram,
    plan_batches,
)
from audiopub.tts.engine import SynthesisOptions


def test_batches_group_similar_lengths_and_keep_reading_order() -> None:
    lengths = [70, 10, 12, 69, 40, 11]
    assert plan_batches(lengths, BatchLimits(16)) == [[0, 3], [1, 2, 5], [4]]
    assert plan_batches(lengths, BatchLimits(2, max_length_ratio=100)) == [[0, 3], [1, 5], [2, 4]]
    assert plan_batches(lengths, BatchLimits(1)) == [[i] for i in range(6)]
    assert plan_batches([], BatchLimits(4)) == []


def test_a_batch_is_bounded_by_its_padded_size() -> None:
    lengths = [100] * 10
    # 3 × 100 padded characters fit in 350, a fourth would not.
    assert [len(b) for b in plan_batches(lengths, BatchLimits(64, max_padded_chars=350))] == [
        3,
        3,
        3,
        1,
    ]
    # A chunk longer than the whole budget still runs, alone.
    assert plan_batches([500, 500], BatchLimits(64, max_padded_chars=350)) == [[0], [1]]


def test_halving_after_out_of_memory_never_goes_below_one() -> None:
    limits = BatchLimits(64)
    assert limits.halved(64).max_items == 32
    assert limits.halved(10).max_items == 5  # the batch that failed was already smaller
    assert BatchLimits(1).halved(1).max_items == 1
    with pytest.raises(ValueError, match="at least one"):
        BatchLimits(0)


def test_the_vram_budget_counts_the_audio_a_batch_makes() -> None:
    # 8 GiB free, half of it for batches, 1 KiB per sample of 22.05 kHz audio, 15 chars/s:
    budget = padded_chars_for_vram(8 << 30, 22_050)
    assert budget == int((8 << 30) * 0.5 / BYTES_PER_OUTPUT_SAMPLE / (22_050 / 15))
    assert 2_500 < budget < 3_000  # about 14 chunks of 200 characters
    assert padded_chars_for_vram(8 << 30, 22_050, speed=2.0) == pytest.approx(2 * budget, 1)
    assert padded_chars_for_vram(0, 22_050) == 1


def test_out_of_memory_errors_are_known_through_their_causes() -> None:
    arena = RuntimeError(
        "[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code "
        "returned while running Conv node. Status Message: BFCArena::"
        "AllocateRawInternal Failed to allocate memory for requested buffer "
        "of size 4487905280"
    )
    assert is_out_of_memory(arena)
    assert is_out_of_memory(RuntimeError("CUDA failure 2: out of memory ; GPU=0"))
    assert is_out_of_memory(RuntimeError("CUDNN_STATUS_ALLOC_FAILED"))
    try:
        try:
            raise arena
        except RuntimeError as exc:
            raise SynthesisFailed("Supertonic failed on 8 chunk(s)") from exc
    except SynthesisFailed as wrapped:
        assert is_out_of_memory(wrapped)
    assert not is_out_of_memory(RuntimeError("Invalid input name: sid"))


def _task(number: int, text: str, voice: str = "v") -> ChunkTask:
    return ChunkTask(f"k{number}", text, voice, SynthesisOptions(), None)  # type: ignore[arg-type]


def test_planned_batches_never_mix_voices_and_cover_every_task_once() -> None:
    texts = ["a" * n for n in (5, 50, 6, 51, 7, 52)]
    tasks = [_task(i, t, voice="v" if i < 4 else "w") for i, t in enumerate(texts)]
    batches = list(planned_batches(tasks, lambda: BatchLimits(8)))
    assert [[position for position, _ in batch] for batch in batches] == [[0, 2], [1, 3], [4], [5]]
    for batch in batches:
        assert len({task.voice for _, task in batch}) == 1


def test_voices_taking_turns_fill_batches_of_their_own_in_reading_order() -> None:
    # A cast: the narrator and a character in turn, as a dialogue is cut.
    tasks = [_task(i, "a" * (40 + i), voice="narrator" if i % 2 else "holmes") for i in range(8)]
    batches = list(planned_batches(tasks, lambda: BatchLimits(8)))
    assert [[position for position, _ in batch] for batch in batches] == [
        [0, 2, 4, 6],
        [1, 3, 5, 7],
    ]
    alone = list(planned_batches(tasks, lambda: BatchLimits(1)))
    assert [[position for position, _ in batch] for batch in alone] == [[i] for i in range(8)]


def test_results_come_back_in_task_order_whatever_order_batches_finish() -> None:
    def result(position: int) -> tuple[int, ChunkResult]:
        return position, ChunkResult(f"k{position}", position, 1, 0.0, "CPU")

    finished = [[result(1), result(3)], [result(0)], [result(4), result(2)]]
    assert [r.key for r in in_task_order(finished)] == ["k0", "k1", "k2", "k3", "k4"]


def test_the_batch_size_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIOPUB_BATCH_SIZE", "16")
    assert settings.batch_size_override() == 16
    for bad in ("0", "lots", str(settings.MAX_BATCH_SIZE + 1)):
        monkeypatch.setenv("AUDIOPUB_BATCH_SIZE", bad)
        with pytest.raises(SettingInvalid, match="AUDIOPUB_BATCH_SIZE"):
            settings.batch_size_override()
    monkeypatch.delenv("AUDIOPUB_BATCH_SIZE")
    assert settings.batch_size_override() is None
