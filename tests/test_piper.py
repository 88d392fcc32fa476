"""The Piper engine on the real embedded voice."""

import logging

import numpy as np
import pytest

from audiopub import settings
from audiopub.errors import EngineUnavailable
from audiopub.tts.engine import Engine, SynthesisOptions
from audiopub.tts.phonemes import expand_titles, phonemize
from audiopub.tts.piper import PiperEngine, phoneme_ids


@pytest.fixture(scope="module")
def engine() -> PiperEngine:
    return PiperEngine(threads=1)


def test_piper_engine_meets_the_contract(engine: PiperEngine) -> None:
    assert isinstance(engine, Engine)
    assert engine.sample_rate == 22050
    assert not engine.uses_steps
    assert [v.id for v in engine.voices()] == [settings.DEFAULT_PIPER_VOICE]
    assert engine.voices()[0].language == "en-US"


def test_phoneme_ids_follow_piper_layout() -> None:
    id_map = {"^": [1], "_": [0], "$": [2], "a": [14], "b": [15]}
    assert phoneme_ids(["a", "?", "b"], id_map) == [1, 0, 14, 0, 15, 0, 2]


def test_phonemes_are_ipa_with_stress_and_punctuation() -> None:
    phonemes = "".join(phonemize("Hello, world.", "en-us"))
    assert phonemes.startswith("həlˈoʊ,") and phonemes.endswith(".")


@pytest.mark.parametrize("text", ["It cost 42 dollars.", 'He said "yes" -- and left.'])
def test_word_count_mismatches_are_not_warnings(text: str,
                                                caplog: pytest.LogCaptureFixture) -> None:
    # espeak reads "42" as two words and drops "--": phonemizer counts that as a mismatch.
    with caplog.at_level(logging.DEBUG):
        phonemes = "".join(phonemize(text, "en-us"))
    assert phonemes.endswith(".")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    assert any("mismatch" in r.getMessage() and r.name.startswith("audiopub.")
               for r in caplog.records), "the message is still there for debugging"


def test_titles_are_spelled_out_so_no_false_sentence_end() -> None:
    assert expand_titles("Mr. Holmes and Dr. Watson.", "en-us") == "Mister Holmes and Doctor Watson."
    assert expand_titles("Mr. Holmes", "de") == "Mr. Holmes"


def test_real_synthesis_of_a_sentence(engine: PiperEngine) -> None:
    (audio,) = engine.synthesize(
        ["It was a bright cold day in April, and the clocks were striking thirteen."],
        settings.DEFAULT_PIPER_VOICE, SynthesisOptions(seed=1),
    )
    assert audio.dtype == np.float32 and audio.ndim == 1
    seconds = len(audio) / engine.sample_rate
    assert 2.5 < seconds < 8.0  # ~14 words of English speech
    assert 0.02 < float(np.sqrt(np.mean(audio**2))) < 0.5  # speech, neither silence nor clipping
    assert engine.device.provider == "CPUExecutionProvider"


def test_speed_shortens_the_audio(engine: PiperEngine) -> None:
    text = ["The quick brown fox jumps over the lazy dog."]
    voice = settings.DEFAULT_PIPER_VOICE
    (normal,) = engine.synthesize(text, voice, SynthesisOptions(speed=1.0, seed=3))
    (fast,) = engine.synthesize(text, voice, SynthesisOptions(speed=1.5, seed=3))
    assert len(fast) < 0.8 * len(normal)


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
    assert fresh.sample_rate == 22050 and fresh.device.provider == "CPUExecutionProvider"
    assert fresh.model_id(settings.DEFAULT_PIPER_VOICE).startswith("piper:")
    assert made == []
    (audio,) = fresh.synthesize(["Hello there."], settings.DEFAULT_PIPER_VOICE,
                                SynthesisOptions(seed=1))
    assert made == ["en_US-joe-medium.onnx"] and audio.size > 0
    # Loading is its own stage, not counted as phonemes or model time.
    assert fresh.stage_seconds["load"] > fresh.stage_seconds["phonemes"]
    loaded_s = fresh.stage_seconds["load"]
    fresh.synthesize(["Again."], settings.DEFAULT_PIPER_VOICE, SynthesisOptions(seed=1))
    assert len(made) == 1 and fresh.stage_seconds["load"] == loaded_s
