"""Where each word starts in a Piper chunk's audio: from the model's own phoneme durations."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from voices import add_still_voice

from audiopub.jobs.chunk_work import ChunkTask, synthesize_batch
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.piper.config import encode
from audiopub.tts.piper.engine import PiperEngine
from audiopub.tts.piper.graph import phoneme_starts

STILL = "en_US-still-medium"
LONG_WORD = "Yes. Antidisestablishmentarianism is long. No."


@pytest.fixture(scope="module")
def still_engine(tmp_path_factory: pytest.TempPathFactory) -> PiperEngine:
    folder = tmp_path_factory.mktemp("voices")
    add_still_voice(folder, STILL)
    return PiperEngine(threads=1, voices_dir=folder)


def _rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(samples)))) if len(samples) else 0.0


def test_words_start_at_the_pad_before_their_first_sound() -> None:
    id_map = {"^": [1], "_": [0], "$": [2], " ": [3], ".": [4], "a": [5], "b": [6], "ˈ": [7]}
    encoded = encode(list("ˈab. a . b"), id_map)
    assert encoded.ids == [1, 0, 7, 0, 5, 0, 6, 0, 4, 0, 3, 0, 5, 0, 3, 0, 4, 0, 3, 0, 6, 0, 2]
    # "ˈab." "a" "." (punctuation only: no word) "b"
    assert encoded.word_positions == [1, 11, 19]
    frames = np.array([4, 1, 2, 3, 2, 1, 2, 1, 3, 2, 1, 2, 2, 1, 1, 1, 1, 1, 1, 2, 2, 1, 5])
    assert phoneme_starts(frames, encoded.word_positions, 256) == (
        4 * 256,
        int(frames[:11].sum()) * 256,
        int(frames[:19].sum()) * 256,
    )


def test_word_starts_are_exact(still_engine: PiperEngine) -> None:
    (result,) = still_engine.synthesize([LONG_WORD], STILL, SynthesisOptions())
    starts = result.word_starts
    assert starts is not None and len(starts) == 5  # Yes / Antidis… / is / long / No
    assert list(starts) == sorted(set(starts)) and 0 <= starts[0] and starts[-1] < result.frames
    spans = np.diff([*starts, result.frames])
    assert spans[1] > 8 * spans[2]  # the long word is far longer than "is"
    ten_ms = result.sample_rate // 100
    for word in (1, 4):  # after a full stop: the pause lies before the word, not in it
        before = _rms(result.audio[starts[word] - 2 * ten_ms : starts[word]])
        spoken = _rms(result.audio[starts[word] : starts[word + 1] if word + 1 < 5 else None])
        assert before < 0.05 * spoken


def test_a_batch_gives_each_chunk_the_word_starts_it_has_alone(still_engine: PiperEngine) -> None:
    # espeak says "was a" as one word: its words, not the text's, are what the engine times.
    texts = [LONG_WORD, "It was a dark and stormy night.", "Hello there."]
    options = SynthesisOptions()
    prepared = still_engine.prepare(texts, STILL, options)
    alone = [still_engine.speak([item], STILL, options)[0].word_starts for item in prepared]
    together = [r.word_starts for r in still_engine.speak(prepared, STILL, options)]
    assert together == alone
    assert [len(starts or ()) for starts in together] == [5, 6, 2]


def test_word_starts_travel_with_the_chunk_result(
    still_engine: PiperEngine, tmp_path: Path
) -> None:
    options = SynthesisOptions()
    tasks = [
        ChunkTask(f"k{i}", text, STILL, options, tmp_path / f"{i}.flac")
        for i, text in enumerate([LONG_WORD, "Hello there."])
    ]
    results = synthesize_batch(still_engine, tasks)
    (alone,) = still_engine.synthesize([LONG_WORD], STILL, options)
    assert results[0].word_starts == alone.word_starts
    # What crosses from an engine process to the job: the words come along.
    assert pickle.loads(pickle.dumps(results[1])).word_starts == results[1].word_starts
