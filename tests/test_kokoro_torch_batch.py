"""Kokoro-82M on PyTorch in padded batches: the real int8 model's weights, several pieces in one
run, each with the durations and (to float rounding) the audio it gets alone; a batch the
device has no room for is halved by the executor, as for every engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.kokoro.engine import PAD, KokoroEngine, Piece

pytest.importorskip("torch", reason="scripts/test.sh installs torch==2.13.0")
pytestmark = [pytest.mark.timeout(900), pytest.mark.usefixtures("torch_on_one_thread")]

VOICE = "jf_alpha"
OPTIONS = SynthesisOptions(language="en")
# 13, 17, 18 and 18 tokens (12 to 17 characters): one batch by length (within 1.5×), the
# shorter two padded.
TEXTS = ("It was late.", "The rain stopped.", "Good night, Tom.", "The sea was calm.")
# The decoder amplifies float rounding: prosody features moved by 1e-6 at random moved the
# audio of a text run alone by 1.1e-2 at its peak and by 1 % of its RMS (measured). Batching
# moves the encoders' outputs by a few times that (≤ 2e-5 measured: other matrix shapes, the
# masked attention, packed LSTMs), and the audio by 0.4 % to 1.4 % of its RMS (measured on
# these texts, peaks ≤ 1.6e-2). Padding leaking in would move the encoders' outputs by far
# more than FRONT_TOLERANCE; the audio's bound is twice the largest difference measured.
FRONT_TOLERANCE = 1e-4
RELATIVE_RMS = 0.03
FLAC_STEP = 2 / 32768  # chunk files are 16-bit


@pytest.fixture(scope="module")
def engine(kokoro_torch_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> KokoroEngine:
    folder = kokoro_torch_folder  # its weights shared with test_kokoro_torch (conftest)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIOPUB_DATA_DIR", str(tmp_path_factory.mktemp("kokoro-cache")))
        engine = KokoroEngine(folder, runtime="torch")
        engine.load_voice(VOICE)
    return engine


@pytest.fixture(scope="module")
def pieces(engine: KokoroEngine) -> list[Piece]:
    return [item.data[0] for item in engine.prepare(list(TEXTS), VOICE, OPTIONS)]


@pytest.fixture(scope="module")
def inputs(engine: KokoroEngine, pieces: list[Piece]) -> tuple[list[np.ndarray], np.ndarray]:
    """Each piece's ids with its pads, and its style row, as the engine makes them."""
    style = engine._mix(VOICE).style(engine.files)
    ids = [np.array([PAD, *piece.tokens, PAD], dtype=np.int64) for piece in pieces]
    return ids, np.stack([style[len(piece.tokens) - 1] for piece in pieces])


@pytest.fixture(scope="module")
def alone(
    engine: KokoroEngine, inputs: tuple[list[np.ndarray], np.ndarray]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each piece run on its own (audio, frames): the reference every batch is held to."""
    runtime = engine._load_torch()
    return [runtime.run(ids[None], row[None], OPTIONS.speed) for ids, row in zip(*inputs)]


def _assert_same_sound(got: np.ndarray, expected: np.ndarray, absolute: float = 0.0) -> None:
    assert len(got) == len(expected)
    difference = np.sqrt(np.mean((got - expected) ** 2))
    assert difference <= RELATIVE_RMS * np.sqrt(np.mean(expected**2)) + absolute


def test_a_padded_batch_gives_each_piece_its_own_durations_and_audio(
    engine: KokoroEngine,
    inputs: tuple[list[np.ndarray], np.ndarray],
    alone: list[tuple[np.ndarray, np.ndarray]],
) -> None:
    import torch

    runtime = engine._load_torch()
    ids, rows = inputs
    spoken = runtime.run_batch(ids, rows, OPTIONS.speed)
    for (audio, frames), (own_audio, own_frames) in zip(spoken, alone, strict=True):
        np.testing.assert_array_equal(frames, own_frames)  # every word starts where it did
        _assert_same_sound(audio, own_audio)

    # Where the padding could leak in (attention, convolutions, both LSTM directions): the
    # encoders' outputs per token, batched against alone.
    network = runtime.network
    lengths = [len(row) for row in ids]
    padded = torch.zeros((len(ids), max(lengths)), dtype=torch.long)
    for number, row in enumerate(ids):
        padded[number, : len(row)] = torch.from_numpy(row)
    styles = torch.from_numpy(rows)
    with torch.inference_mode():
        frames, features = network.durations(padded, styles, 1.0, torch.tensor(lengths))
        text = network.text_encoder(padded, torch.tensor(lengths))
        for number, length in enumerate(lengths):
            own_frames, own_features = network.durations(
                padded[number : number + 1, :length], styles[number : number + 1], 1.0
            )
            own_text = network.text_encoder(padded[number : number + 1, :length])
            assert torch.equal(frames[number, :length], own_frames[0])
            assert not frames[number, length:].any()  # the padding speaks no frames
            torch.testing.assert_close(
                features[number, :length], own_features[0], atol=FRONT_TOLERANCE, rtol=0
            )
            torch.testing.assert_close(
                text[number, :, :length], own_text[0], atol=FRONT_TOLERANCE, rtol=0
            )


def test_out_of_memory_halves_the_batch_and_each_chunk_sounds_as_alone(
    engine: KokoroEngine,
    pieces: list[Piece],
    alone: list[tuple[np.ndarray, np.ndarray]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The executor's halving, with the engine's real batches: the device has room for two
    pieces at a time; a batch of four fails in the network's first layer and runs as 2 + 2."""
    import torch

    from audiopub.jobs.chunk_work import ChunkTask
    from audiopub.jobs.device_executor import DeviceExecutor
    from audiopub.tts.batching import BatchLimits

    bert = engine._load_torch().network.bert
    real = bert.forward
    sizes: list[int] = []

    def forward(ids: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        sizes.append(ids.shape[0])
        if ids.shape[0] > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(ids, mask)

    monkeypatch.setattr(bert, "forward", forward)
    tasks = [
        ChunkTask(f"chunk-{n}", text, VOICE, OPTIONS, tmp_path / f"{n}.flac")
        for n, text in enumerate(TEXTS)
    ]
    notes: list[str] = []
    results = list(DeviceExecutor([engine], BatchLimits(len(TEXTS))).map(tasks, notes.append))

    assert sizes == [4, 2, 2]
    assert any("ran out of memory on a batch of 4 chunks" in note for note in notes)
    for task, result, piece, (own_audio, own_frames) in zip(
        tasks, results, pieces, alone, strict=True
    ):
        expected_audio, expected_starts = engine._finish(piece, own_audio, own_frames)
        assert result.error is None and result.key == task.key
        assert result.word_starts == expected_starts
        audio, _ = sf.read(str(task.out_path), dtype="float32")
        _assert_same_sound(audio, expected_audio, FLAC_STEP)


def test_the_torch_runtime_batches_chunks_where_onnx_runtime_cannot(
    engine: KokoroEngine, kokoro_model_file: Path
) -> None:
    assert engine.batch_size > 1
    assert KokoroEngine(engine.files.folder).batch_size == 1  # the export's batch is 1
