"""Multi-speaker Piper voices: each speaker is a voice, and the speaker reaches the graph, the
job and the chunk cache. On a tiny graph in Piper's format whose audio depends on `sid`."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from voices import (
    ID_SCALE,
    SPEAKER_OFFSETS,
    SPEAKERS,
    add_multi_speaker_voice,
    add_voice_with_rate,
)

from audiopub.cli import main
from audiopub.errors import EngineUnavailable
from audiopub.jobs.models import JobSettings, chunk_cache_key
from audiopub.jobs.store import JobStore
from audiopub.tts.engine import SynthesisOptions, voice_of
from audiopub.tts.piper.engine import PiperEngine
from audiopub.tts.piper.files import find_voices

MODEL = "en_GB-tiny-medium"
FIRST, SECOND, THIRD = (f"{MODEL}#{speaker}" for speaker in SPEAKERS)
TEXTS = ["Hello there.", "A sentence a good deal longer than the first one.", "Yes."]


@pytest.fixture(scope="module")
def voices_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("voices")
    add_multi_speaker_voice(folder, MODEL)
    return folder


@pytest.fixture(scope="module")
def engine(voices_dir: Path) -> PiperEngine:
    return PiperEngine(threads=1, voices_dir=voices_dir)


def expected_audio(engine: PiperEngine, text: str, voice: str) -> np.ndarray:
    """What the tiny graph says for `text` as `voice`: its phoneme ids scaled, shifted by the
    speaker's offset."""
    (prepared,) = engine.prepare([text], voice, SynthesisOptions())
    offset = SPEAKER_OFFSETS[SPEAKERS.index(voice.split("#")[1])]
    return np.asarray(prepared.data.ids, dtype=np.float32) * ID_SCALE + offset


def test_each_speaker_is_a_voice_and_single_speaker_ids_stay(engine: PiperEngine) -> None:
    voices = {voice.id: voice for voice in engine.voices()}
    assert list(voices) == ["en_US-joe-medium", FIRST, SECOND, THIRD]
    assert MODEL not in voices  # the model alone names no speaker
    second = voices[SECOND]
    assert (second.name, second.language, second.speaker, second.model) == (
        f"{MODEL} (speaker p236)",
        "en-GB",
        "p236",
        MODEL,
    )
    assert voices["en_US-joe-medium"].speaker is None
    assert voice_of(engine, SECOND) == second


def test_each_speaker_says_its_own_audio_and_the_same_each_time(engine: PiperEngine) -> None:
    options = SynthesisOptions()
    heard = {
        voice: engine.synthesize(TEXTS[:1], voice, options)[0].audio
        for voice in (FIRST, SECOND, THIRD)
    }
    for voice, audio in heard.items():
        np.testing.assert_allclose(audio, expected_audio(engine, TEXTS[0], voice), atol=1e-6)
    assert not np.allclose(heard[FIRST], heard[SECOND])
    assert not np.allclose(heard[SECOND], heard[THIRD])
    again = engine.synthesize(TEXTS[:1], SECOND, options)[0].audio
    np.testing.assert_array_equal(again, heard[SECOND])


def test_each_row_of_a_batch_is_fed_its_own_speaker(engine: PiperEngine) -> None:
    """Rows prepared for different speakers of one model, spoken in one padded batch: each
    is its speaker's and cut at its own length (the graph pads with the speaker's offset, not
    silence)."""
    options = SynthesisOptions()
    rows = [(TEXTS[0], SECOND), (TEXTS[1], THIRD), (TEXTS[2], FIRST), (TEXTS[0], THIRD)]
    prepared = [engine.prepare([text], voice, options)[0] for text, voice in rows]
    spoken = engine.speak(prepared, SECOND, options)
    assert len({item.length for item in prepared}) == 3  # really padded
    for (text, voice), result in zip(rows, spoken, strict=True):
        np.testing.assert_allclose(result.audio, expected_audio(engine, text, voice), atol=1e-6)


def test_a_batch_of_one_speaker_matches_its_chunks_alone(
    engine: PiperEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = SynthesisOptions()
    alone = [engine.synthesize([text], THIRD, options)[0].audio for text in TEXTS]
    monkeypatch.setattr(engine, "batch_size", len(TEXTS))
    together = [result.audio for result in engine.synthesize(TEXTS, THIRD, options)]
    for solo, batched in zip(alone, together, strict=True):
        np.testing.assert_array_equal(batched, solo)


@pytest.mark.parametrize(
    "voice, message",
    [
        (
            f"{MODEL}#p999",
            f"'{MODEL}' has no speaker 'p999'; its speakers include {FIRST}, {SECOND}, {THIRD}",
        ),
        (MODEL, f"'{MODEL}' has 3 speakers: choose one, e.g. {FIRST}, {SECOND}, {THIRD}"),
        (
            "en_US-joe-medium#p239",
            "'en_US-joe-medium' has a single speaker: use --voice en_US-joe-medium",
        ),
        (
            "en_GB-nobody-medium#p239",
            f"Unknown Piper voice 'en_GB-nobody-medium'; available: en_US-joe-medium, {MODEL}",
        ),
    ],
)
def test_a_wrong_speaker_is_a_clear_error(engine: PiperEngine, voice: str, message: str) -> None:
    with pytest.raises(EngineUnavailable, match=re.escape(message)):
        engine.model_id(voice)
    with pytest.raises(EngineUnavailable, match=re.escape(message)):
        engine.prepare(TEXTS[:1], voice, SynthesisOptions())


def test_a_model_file_named_with_the_separator_is_not_taken_for_a_speaker(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    add_voice_with_rate(tmp_path, "en_GB-mine#2-medium", 22_050)
    add_voice_with_rate(tmp_path, "en_GB-mine-medium", 22_050)
    assert set(find_voices(tmp_path)) == {"en_US-joe-medium", "en_GB-mine-medium"}
    assert "en_GB-mine#2-medium.onnx: not a voice while its name holds '#'" in caplog.text


def test_two_speakers_never_share_a_cache_key(engine: PiperEngine) -> None:
    keys = {
        chunk_cache_key(TEXTS[0], JobSettings(voice=voice, model_id=engine.model_id(voice)))
        for voice in (FIRST, SECOND, THIRD)
    }
    assert len(keys) == 3


def test_convert_speaks_with_the_speaker_asked_and_reuses_only_its_audio(
    three_chapter_epub: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_multi_speaker_voice(tmp_path / "models" / "piper", MODEL)
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    for number, voice in enumerate((SECOND, THIRD, SECOND)):
        assert (
            main(
                [
                    "convert",
                    str(three_chapter_epub),
                    "--voice",
                    voice,
                    "-o",
                    str(tmp_path / f"book-{number}.m4b"),
                ]
            )
            == 0
        )
    with JobStore.open_default() as store:
        jobs = store.queue.list_jobs()
        chunks = [store.ledger.all_chunks(job.id) for job in jobs]
        levels = [
            [
                float(sf.read(store.job_dir(job.id) / c.audio_path)[0].mean())
                for c in job_chunks
                if c.audio_path
            ]
            for job, job_chunks in zip(jobs, chunks, strict=True)
        ]
    assert [job.settings.voice for job in jobs] == [SECOND, THIRD, SECOND]
    first, other, again = chunks
    # Each chunk as its speaker says it: p236 shifted up, p264 down.
    assert min(levels[0]) > 0.2 and max(levels[1]) < -0.2
    assert not {c.cache_key for c in first} & {c.cache_key for c in other}
    assert all(c.reused_from is None for c in first + other)
    # The same speaker again: every chunk is the first job's audio, shared.
    assert [c.cache_key for c in again] == [c.cache_key for c in first]
    assert {c.reused_from for c in again} == {jobs[0].id}
    assert levels[2] == levels[0]
