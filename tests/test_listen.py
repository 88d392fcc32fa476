"""Proof-listening's ears and judgement: Whisper base (the real weights, see whisper_model)
hears joe, the log-mel input agrees with faster-whisper's, and `judge` flags what was not said.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import SENTENCES
from tiny_supertonic import build_tiny_model

from audiopub.errors import ListeningUnavailable
from audiopub.listen import Clip, Listener, Thresholds, installed_listening_models, judge
from audiopub.listen.features import log_mel, to_16k
from audiopub.listen.judge import align, normalise
from audiopub.listen.listener import split_windows
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.piper.engine import PiperEngine
from audiopub.tts.supertonic.engine import SupertonicEngine


def faster_whisper_features() -> ModuleType:
    """faster-whisper's feature extractor, loaded from its file (its package would import
    PyAV and the rest; scripts/test.sh installs it without dependencies)."""
    spec = importlib.util.find_spec("faster_whisper")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail(
            "faster-whisper is the oracle of the log-mel input: "
            "pip install --no-deps faster-whisper==1.2.1"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "feature_extractor.py"
    module_spec = importlib.util.spec_from_file_location("fw_feature_extractor", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("n_mels", [80, 128])
def test_log_mel_agrees_with_faster_whisper(n_mels: int) -> None:
    rng = np.random.default_rng(7)
    seconds = np.arange(16_000 * 7) / 16_000
    audio = (
        0.3 * np.sin(2 * np.pi * 440 * seconds) * np.exp(-seconds)
        + 0.05 * rng.standard_normal(seconds.size)
    ).astype(np.float32)
    extractor = faster_whisper_features().FeatureExtractor(feature_size=n_mels)
    # Whisper's window: the clip padded with silence to 30 s, then transformed.
    expected = extractor(np.pad(audio, (0, 480_000 - audio.size)), padding=0)
    assert expected.shape == (n_mels, 3000)
    np.testing.assert_allclose(log_mel(audio, n_mels), expected, atol=1e-5)


def test_resampling_to_16k_keeps_a_tone() -> None:
    rate, hz = 22_050, 1000.0
    tone = np.sin(2 * np.pi * hz * np.arange(rate) / rate).astype(np.float32)
    resampled = to_16k(tone, rate)
    assert resampled.size == 16_000
    np.testing.assert_allclose(
        resampled, np.sin(2 * np.pi * hz * np.arange(16_000) / 16_000), atol=1e-3
    )


def test_a_long_clip_is_cut_in_its_quiet_moments_into_windows_of_30_s() -> None:
    rng = np.random.default_rng(1)
    audio = (0.2 * rng.standard_normal(16_000 * 70)).astype(np.float32)
    audio[16_000 * 27 : 16_000 * 27 + 800] = 0.0  # a pause 27 s in: the first cut
    windows = split_windows(audio)
    assert [w.size <= 480_000 for w in windows] == [True, True, True]
    assert 16_000 * 27 < windows[0].size < 16_000 * 27 + 800
    assert sum(w.size for w in windows) == audio.size  # nothing left out
    np.testing.assert_array_equal(np.concatenate(windows), audio)


def test_judge_says_numbers_as_words_on_both_sides() -> None:
    verdict = judge(
        "In 1886 it cost 2 shillings, on the 21st of May.",
        "In eighteen eighty-six it cost two shillings on the twenty-first of may",
        "en-US",
    )
    assert (verdict.flagged, verdict.wer, verdict.missing_run) == (False, 0.0, 0)
    assert judge("Il avait 21 ans.", "Il avait vingt et un ans.", "fr").wer == 0.0
    assert judge("Don't go — it's late!", "dont go, its LATE", "en").wer == 0.0


def test_judge_counts_the_longest_run_of_words_not_heard() -> None:
    said = (
        "The rain had stopped by the time the train reached the coast, and she counted "
        "the lighthouses one by one as they passed."
    )
    heard = "The rain had stopped by the time the train reached the coast as they passed."
    verdict = judge(said, heard, "en")
    assert verdict.missing_run == 8  # "and she counted the lighthouses one by one"
    assert verdict.flagged and verdict.reason == "8 words in a row not heard"
    assert verdict.wer == pytest.approx(8 / 23)
    shorter = judge(said.replace(" one by one", ""), heard, "en")
    assert (shorter.missing_run, shorter.flagged) == (5, False)  # under the default 6 and WER
    assert judge(said.replace(" one by one", ""), heard, "en", Thresholds(5)).flagged
    # Garble between the words does not break the run of words not heard.
    assert judge("one two three four five six", "one uh two five six", "en").missing_run == 2
    assert judge("one two three four five six", "one two zzz yyy five six", "en").missing_run == 2
    # A spelling of the same word is heard; a different short word is not.
    assert judge("The harbour smelled of tar", "the harbor smell of tar", "en").wer == 0.0
    assert judge("then the end", "the the end", "en").wer == pytest.approx(1 / 3)


def test_judge_flags_spread_errors_by_word_error_rate_only_in_longer_chunks() -> None:
    said = "the quick brown fox jumps over the lazy dog again today"
    heard = "the quick bow fix jumps over a lady dig again today"
    verdict = judge(said, heard, "en")
    assert verdict.missing_run == 3 and verdict.flagged
    assert verdict.reason == "word error rate 45% (flagged above 35%)"
    lenient = judge(said, heard, "en", Thresholds(max_wer=0.5))
    assert not lenient.flagged and lenient.reason == ""


def test_judge_is_lenient_with_a_short_chunk_unless_nothing_of_it_was_heard() -> None:
    assert not judge("Chapter III.", "Chapter 3", "en").flagged
    assert not judge("Yes, sir.", "Yes, Sarah.", "en").flagged  # one word of two misheard
    assert judge("Yes, sir.", "", "en").reason == "no words heard"
    assert judge("Yes.", "Thank you.", "en").reason == "none of its words heard"
    assert not judge("…", "", "en").flagged  # nothing to say, nothing heard


def test_judge_flags_a_short_chunk_heard_as_another_sentence() -> None:
    wrong = judge("Nobody seemed to mind it at all.", "I'm going to cut it.", "en")
    assert wrong.flagged
    assert wrong.reason == "word error rate 71% (flagged above 60% in a chunk of 7 words)"
    # one word of five misheard stays below the short chunks' threshold
    assert not judge("He went down the hill.", "He went down the hall.", "en").flagged


@pytest.fixture
def listener(whisper_listener: Listener) -> Listener:
    return whisper_listener  # loaded once for the run (conftest)


@pytest.fixture(scope="module")
def joe_speech() -> list[Clip]:
    # One thread, as the listener (conftest): the same samples bit for bit, less CPU waiting.
    engine = PiperEngine(threads=1)
    voice = engine.voices()[0].id
    spoken = engine.synthesize(SENTENCES, voice, SynthesisOptions(seed=1))
    return [Clip(result.audio, result.sample_rate, "en-US") for result in spoken]


# What Whisper hears differs a little from one CPU to another: CTranslate2 (the listener) and
# ONNX Runtime (the voice) choose their kernels by instruction set, and CTranslate2's int8
# products run in MKL on Intel CPUs, in oneDNN elsewhere. So these tests assert what listening
# promises, within what was measured with scripts/listening_isa.py (joe, seed 1, SENTENCES:
# 61 words; as one clip over 30 s, 113):
# - AMD EPYC (AVX2, no AVX-512) with CTranslate2's kernels forced to AVX2, AVX and GENERIC,
#   oneDNN's products held to SSE4.1 (ONEDNN_MAX_CPU_ISA), and MKL's (CT2_USE_MKL=1); the
#   voice's samples moved up to 4.8e-5 by turning ONNX Runtime's graph fusions off, and by a
#   -80 dB dither (ONNX Runtime's MLAS kernels follow the CPU's flags, with no switch to force
#   them down): every sentence heard word for word, in a batch and alone alike, WER 0; as one
#   long clip, WER 0.009 (the "a" of "Somewhere a radio" missed), longest run missed 1;
# - an Intel Xeon: "somewhere radio was playing an old dance tune." for that sentence heard in a
#   batch, the same faint "a" missed (WER 1/9 = 0.11; 1 word of 61 = 0.016 for the six).
# So a sentence may lose a word or two (WER 0.25 in sentences of 9 to 12 words) but never be
# flagged, the six together 10 %; a batch and a clip heard alone may differ by one word.
MAX_SENTENCE_WER = 0.25
MAX_WER = 0.1
MAX_BATCH_EDITS = 1


def test_what_another_cpu_heard_is_within_the_tolerance() -> None:
    """The transcript an Intel Xeon made of joe's sentence, which a tolerance of 0.1 refused."""
    heard = judge(SENTENCES[5], "somewhere radio was playing an old dance tune.", "en-US")
    assert heard.wer == pytest.approx(1 / 9) and not heard.flagged
    assert heard.wer <= MAX_SENTENCE_WER
    assert (
        judge(
            " ".join(SENTENCES),
            " ".join([*SENTENCES[:5], "somewhere radio was playing an old dance tune."]),
            "en-US",
        ).wer
        <= MAX_WER
    )


def test_the_listener_hears_joe_and_batches_hear_what_single_clips_do(
    listener: Listener, joe_speech: list[Clip]
) -> None:
    assert (listener.size, listener.device) == ("base", "cpu")
    heard = listener.hear(joe_speech)
    verdicts = [
        judge(sentence, text, "en-US") for sentence, text in zip(SENTENCES, heard, strict=True)
    ]
    for sentence, text, verdict in zip(SENTENCES, heard, verdicts):
        assert verdict.wer <= MAX_SENTENCE_WER and not verdict.flagged, (sentence, text)
    words = [len(normalise(sentence, "en-US")) for sentence in SENTENCES]
    edits = sum(round(v.wer * n) for v, n in zip(verdicts, words))
    assert edits / sum(words) <= MAX_WER, heard
    for together, clip in zip(heard, joe_speech, strict=True):
        alone = listener.hear([clip])[0]
        # What the batch heard, judged against what the clip alone was heard to say.
        apart, _ = align(normalise(alone, "en-US"), normalise(together, "en-US"))
        assert apart <= MAX_BATCH_EDITS, (together, alone)


def test_a_clip_over_30_seconds_is_heard_to_its_end(
    listener: Listener, joe_speech: list[Clip]
) -> None:
    rate = joe_speech[0].sample_rate
    pause = np.zeros(rate // 3, dtype=np.float32)
    order = [*range(len(SENTENCES)), 0, 1, 2, 3, 4]
    audio = np.concatenate([part for i in order for part in (joe_speech[i].audio, pause)])
    assert audio.size / rate > 35
    text = " ".join(SENTENCES[i] for i in order)
    heard = listener.hear([Clip(audio, rate, "en")])[0]
    verdict = judge(text, heard, "en")
    # Measured: WER 0.009 (1 word of 113: the faint "a"), longest run missed 1 (see above).
    assert verdict.wer <= MAX_WER and verdict.missing_run <= 2, heard
    # Heard to its end: the last words heard are the last sentence's.
    last = normalise(SENTENCES[4], "en")
    ending, _ = align(last, normalise(heard, "en")[-len(last) :])
    assert ending <= MAX_BATCH_EDITS, heard


def test_a_chunk_whose_audio_lost_its_words_is_flagged(
    listener: Listener, joe_speech: list[Clip]
) -> None:
    rate = joe_speech[0].sample_rate
    silence = Clip(np.zeros(rate * 3, dtype=np.float32), rate, "en")
    other = joe_speech[1]  # the audio of another sentence
    heard = listener.hear([silence, other, joe_speech[0]])
    assert judge(SENTENCES[0], heard[0], "en").flagged
    assert judge(SENTENCES[0], heard[1], "en").flagged
    assert not judge(SENTENCES[0], heard[2], "en").flagged


def test_tones_are_flagged(listener: Listener, tmp_path: Path) -> None:
    engine = SupertonicEngine(build_tiny_model(tmp_path / "tiny"), use_gpu=False)
    voice = engine.voices()[0].id
    spoken = engine.synthesize(SENTENCES[:2], voice, SynthesisOptions(steps=2, seed=3))
    heard = listener.hear([Clip(r.audio, r.sample_rate, "en") for r in spoken])
    for sentence, text in zip(SENTENCES[:2], heard, strict=True):
        assert judge(sentence, text, "en").flagged, text


def test_without_the_listen_extra_the_error_names_it(
    monkeypatch: pytest.MonkeyPatch, whisper_base: Path
) -> None:
    monkeypatch.setitem(sys.modules, "ctranslate2", None)  # import fails as if not installed
    with pytest.raises(ListeningUnavailable, match=r"pip install 'audiopub\[listen\]'"):
        Listener.load("base", models_dir=whisper_base)


def test_a_model_not_installed_names_the_download(tmp_path: Path, whisper_base: Path) -> None:
    assert installed_listening_models(whisper_base) == ["base"]
    assert installed_listening_models(tmp_path) == []
    with pytest.raises(ListeningUnavailable, match="audiopub voices download whisper:small"):
        Listener.load("small", models_dir=whisper_base)
