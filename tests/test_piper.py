"""The Piper engine on the real embedded voice."""

import logging
from pathlib import Path

import numpy as np
import pytest
from voices import add_voice_with_rate

from audiopub import settings
from audiopub.errors import EngineUnavailable
from audiopub.tts.engine import Engine, SynthesisOptions
from audiopub.tts.phonemes import expand_titles, phonemize
from audiopub.tts.piper.config import phoneme_ids
from audiopub.tts.piper.engine import PiperEngine


@pytest.fixture(scope="module")
def engine() -> PiperEngine:
    return PiperEngine(threads=1)


def test_piper_engine_meets_the_contract(engine: PiperEngine) -> None:
    assert isinstance(engine, Engine)
    assert not engine.uses_steps
    assert [v.id for v in engine.voices()] == [settings.DEFAULT_PIPER_VOICE]
    assert engine.voices()[0].language == "en-US"
    assert engine.voices()[0].sample_rate == 22050


def test_each_result_carries_its_voices_own_sample_rate(tmp_path: Path) -> None:
    """A 16 kHz voice (Piper's x_low and low qualities) reports 16 kHz, beside the 22.05 kHz
    default, from one engine object: nothing about the last call is kept on the engine."""
    add_voice_with_rate(tmp_path, "en_US-test-x_low", 16_000)
    engine = PiperEngine(threads=1, voices_dir=tmp_path)
    assert {v.id: v.sample_rate for v in engine.voices()} == {
        settings.DEFAULT_PIPER_VOICE: 22_050,
        "en_US-test-x_low": 16_000,
    }
    options = SynthesisOptions(seed=1)
    (low,) = engine.synthesize(["Hello there."], "en_US-test-x_low", options)
    (default,) = engine.synthesize(["Hello there."], settings.DEFAULT_PIPER_VOICE, options)
    assert (low.sample_rate, default.sample_rate) == (16_000, 22_050)
    assert low.duration_s == pytest.approx(low.frames / 16_000)
    assert set(low.stage_seconds) == {"load", "phonemes", "model"}


def test_phoneme_ids_follow_piper_layout() -> None:
    id_map = {"^": [1], "_": [0], "$": [2], "a": [14], "b": [15]}
    assert phoneme_ids(["a", "?", "b"], id_map) == [1, 0, 14, 0, 15, 0, 2]


def test_phonemes_are_ipa_with_stress_and_punctuation() -> None:
    phonemes = "".join(phonemize("Hello, world.", "en-us"))
    assert phonemes.startswith("həlˈoʊ,") and phonemes.endswith(".")


@pytest.mark.parametrize("text", ["It cost 42 dollars.", 'He said "yes" -- and left.'])
def test_word_count_mismatches_are_not_warnings(
    text: str, caplog: pytest.LogCaptureFixture
) -> None:
    # espeak reads "42" as two words and drops "--": phonemizer counts that as a mismatch.
    with caplog.at_level(logging.DEBUG):
        phonemes = "".join(phonemize(text, "en-us"))
    assert phonemes.endswith(".")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    assert any(
        "mismatch" in r.getMessage() and r.name.startswith("audiopub.") for r in caplog.records
    ), "the message is still there for debugging"


def test_titles_are_spelled_out_so_no_false_sentence_end() -> None:
    expanded = expand_titles("Mr. Holmes and Dr. Watson.", "en-us")
    assert expanded == "Mister Holmes and Doctor Watson."
    assert expand_titles("Mr. Holmes", "de") == "Mr. Holmes"


def test_real_synthesis_of_a_sentence(engine: PiperEngine) -> None:
    (result,) = engine.synthesize(
        ["It was a bright cold day in April, and the clocks were striking thirteen."],
        settings.DEFAULT_PIPER_VOICE,
        SynthesisOptions(seed=1),
    )
    audio = result.audio
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert result.sample_rate == 22050 and result.frames == len(audio)
    assert 2.5 < result.duration_s < 8.0  # ~14 words of English speech
    assert 0.02 < float(np.sqrt(np.mean(audio**2))) < 0.5  # speech, neither silence nor clipping
    assert engine.device.provider == "CPUExecutionProvider"


def test_speed_shortens_the_audio(engine: PiperEngine) -> None:
    text = ["The quick brown fox jumps over the lazy dog."]
    voice = settings.DEFAULT_PIPER_VOICE
    (normal,) = engine.synthesize(text, voice, SynthesisOptions(speed=1.0, seed=3))
    (fast,) = engine.synthesize(text, voice, SynthesisOptions(speed=1.5, seed=3))
    assert fast.frames < 0.8 * normal.frames


def test_unknown_voice_names_the_available_ones(engine: PiperEngine) -> None:
    with pytest.raises(EngineUnavailable, match="en_US-joe-medium"):
        engine.synthesize(["Hi."], "nl_NL-nobody", SynthesisOptions())


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="speed"):
        SynthesisOptions(speed=5.0)
    with pytest.raises(ValueError, match="steps"):
        SynthesisOptions(steps=1)


def test_the_onnx_session_is_made_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that only plans (the job's parent on a CPU) never loads the model."""
    from audiopub.tts import onnx_runtime

    made: list[str] = []
    real = onnx_runtime.create_session

    def create_session(model, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(model.name)
        return real(model, *args, **kwargs)

    monkeypatch.setattr(onnx_runtime, "create_session", create_session)
    fresh = PiperEngine()
    assert fresh.voices()[0].sample_rate == 22050
    assert fresh.device.provider == "CPUExecutionProvider"
    assert fresh.model_id(settings.DEFAULT_PIPER_VOICE).startswith("piper:")
    assert made == []
    (first,) = fresh.synthesize(
        ["Hello there."], settings.DEFAULT_PIPER_VOICE, SynthesisOptions(seed=1)
    )
    assert made == ["en_US-joe-medium.onnx"] and first.frames > 0
    # Loading is its own stage of the chunk that paid for it, not phonemes or model time.
    assert first.stage_seconds["load"] > first.stage_seconds["phonemes"]
    (again,) = fresh.synthesize(["Again."], settings.DEFAULT_PIPER_VOICE, SynthesisOptions(seed=1))
    assert len(made) == 1 and "load" not in again.stage_seconds
