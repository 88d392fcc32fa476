"""The Kokoro engine with the real Kokoro-82M (int8) and real voices (see kokoro_model): exact
lengths and word starts, voice mixes, the token window, phonemes by language, lexicon IPA.

The model runs slowly on a small CPU, so the runs are few and share one engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from kokoro_model import install_folder, voice_vectors

from audiopub.book.lexicons.lexicon import PHONEMES_CLOSE, PHONEMES_OPEN
from audiopub.errors import EngineUnavailable
from audiopub.tts.engine import SynthesisOptions, voice_of
from audiopub.tts.kokoro.engine import KokoroEngine, espeak_language, split_window, tokenize
from audiopub.tts.kokoro.files import STYLE_ROWS, parse_mix
from audiopub.tts.kokoro.graph import SAMPLES_PER_FRAME
from audiopub.tts.phonemes import phonemize

ENGLISH = SynthesisOptions(language="en")


@pytest.fixture(scope="module")
def model_file(kokoro_model_file: Path) -> Path:
    return kokoro_model_file


@pytest.fixture(scope="module")
def engine(model_file: Path, tmp_path_factory: pytest.TempPathFactory) -> KokoroEngine:
    # The rewritten graph is cached with the module's engine, not in each test's data dir.
    cache = tmp_path_factory.mktemp("kokoro-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIOPUB_DATA_DIR", str(cache))
        folder = install_folder(tmp_path_factory.mktemp("models") / "kokoro", model_file)
        # One thread: ORT's default pool of every core spins while it waits, which on a busy
        # machine costs CPU time and gives nothing (the same samples either way).
        loaded = KokoroEngine(folder, threads=1)
        loaded._load()
    return loaded


def test_a_chunk_is_600_samples_per_frame_and_sounds_as_the_unrewritten_graph(
    engine: KokoroEngine, model_file: Path
) -> None:
    text = "The harbour smelled of tar, salt and fresh bread."
    (result,) = engine.synthesize([text], "jm_kumo", ENGLISH)
    (prepared,) = engine.prepare([text], "jm_kumo", ENGLISH)
    (piece,) = prepared.data
    # The original graph, untouched, as ONNX Runtime runs it: the same samples, and no more
    # than the durations say.
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # as the engine's
    original = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
    style = voice_vectors()["jm_kumo"].reshape(STYLE_ROWS, -1)[len(piece.tokens) - 1]
    (audio,) = original.run(
        ["audio"],
        {
            "tokens": np.array([[0, *piece.tokens, 0]], dtype=np.int64),
            "style": style.reshape(1, -1),
            "speed": np.array([1.0], dtype=np.float32),
        },
    )
    audio = audio.reshape(-1)
    assert result.frames == len(audio) and result.frames % SAMPLES_PER_FRAME == 0
    np.testing.assert_allclose(result.audio, np.clip(audio, -1, 1), atol=1e-6)
    # Word starts: one per word, rising, each inside the chunk.
    starts = result.word_starts
    assert starts is not None and len(starts) == len(text.split())
    assert list(starts) == sorted(set(starts)) and 0 < starts[0] and starts[-1] < result.frames
    assert result.sample_rate == 24_000


def test_a_paragraph_past_the_token_window_is_split_at_clauses_and_spoken_whole(
    engine: KokoroEngine,
) -> None:
    clause = "the lamps were lit along the quay while the boats came slowly home"
    text = ", ".join([clause] * 8) + "."  # 559 phonemes: just past the 510-token window
    (prepared,) = engine.prepare([text], "jm_kumo", ENGLISH)
    pieces = prepared.data
    assert prepared.length > STYLE_ROWS and len(pieces) == 2
    tokens, _, _ = tokenize(phonemize(text, "en-us"), engine.vocab)
    assert [t for piece in pieces for t in piece.tokens] == tokens  # nothing left out
    comma = engine.vocab[","]
    assert pieces[0].tokens[-1] == comma  # cut after a clause
    (result,) = engine.speak([prepared], "jm_kumo", ENGLISH)
    assert result.frames % SAMPLES_PER_FRAME == 0
    starts = result.word_starts
    assert starts is not None and len(starts) == len(text.split())
    assert list(starts) == sorted(set(starts)) and starts[-1] < result.frames


def test_split_window_prefers_clauses_then_words() -> None:
    # tokens: a a , b b SPACE c c ; d  (the space is 16, clause ends marked)
    tokens = [1, 1, 3, 2, 2, 16, 4, 4, 5, 6]
    ends = [t in (3, 5) for t in tokens]
    starts = [0, 3, 6, 9]
    pieces = split_window(tokens, starts, ends, 16, window=5)
    assert [list(p.tokens) for p in pieces] == [[1, 1, 3], [2, 2], [16, 4, 4, 5, 6]]
    assert [list(p.word_positions) for p in pieces] == [[0], [0], [1, 4]]
    no_clause = split_window([1, 1, 16, 2, 2, 16, 3], [0, 3, 6], [False] * 7, 16, window=4)
    assert [list(p.tokens) for p in no_clause] == [[1, 1], [16, 2, 2], [16, 3]]
    assert [list(p.word_positions) for p in no_clause] == [[0], [1], [1]]


def test_a_mix_is_the_weighted_sum_of_its_voices_and_a_voice_of_its_own(
    engine: KokoroEngine,
) -> None:
    vectors = voice_vectors()
    mix = parse_mix("jm_kumo:0.6+jf_alpha:0.4")
    expected = 0.6 * vectors["jm_kumo"] + 0.4 * vectors["jf_alpha"]
    np.testing.assert_allclose(mix.style(engine.files), expected.reshape(STYLE_ROWS, -1), rtol=1e-6)
    ids = {
        engine.model_id(v)
        for v in ("jm_kumo", "jf_alpha", "jm_kumo:0.6+jf_alpha:0.4", "jm_kumo:0.5+jf_alpha:0.5")
    }
    assert len(ids) == 4
    assert voice_of(engine, "jm_kumo:0.6+jf_alpha:0.4").language == "ja"
    assert parse_mix("jm_kumo+jf_alpha").parts == (("jm_kumo", 0.5), ("jf_alpha", 0.5))


@pytest.mark.parametrize(
    ("voice", "message"),
    [
        ("jm_kumo:0.6+jf_alpha:x", "'x' is not a weight"),
        ("jm_kumo:1.5+jf_alpha:-0.5", "'1.5' is not a weight"),
        ("jm_kumo:0.6+jf_alpha:0.6", "add up to 1.2, not 1"),
        ("jm_kumo:0.6+jf_alpha", "give every voice a weight"),
        ("jm_kumo+", "empty part"),
        ("jm_kumo:0.5+jm_kumo:0.5", "names a voice twice"),
        (
            "jm_kumo:0.5+af_nobody:0.5",
            "Unknown Kokoro voice 'af_nobody'; available: jf_alpha, jm_kumo",
        ),
    ],
)
def test_a_bad_mix_is_a_clear_error(engine: KokoroEngine, voice: str, message: str) -> None:
    with pytest.raises(EngineUnavailable, match=message.replace("(", r"\(").replace(".", r"\.")):
        engine.model_id(voice)
    with pytest.raises(EngineUnavailable):
        engine.prepare(["Hello."], voice, ENGLISH)


def test_a_voice_is_phonemised_in_its_language_or_the_books(engine: KokoroEngine) -> None:
    text = "Le chat dort près de la fenêtre."
    french = tokenize(phonemize(text, "fr-fr"), engine.vocab)[0]
    english = tokenize(phonemize(text, "en-us"), engine.vocab)[0]
    assert french != english
    # A French voice (by its name's first letter) with no book language: French phonemes.
    assert espeak_language(None, "ff_siwis") == "fr-fr"
    assert espeak_language("en-GB", "af_heart") == "en-us"  # the voice's English
    assert espeak_language("fr", "jm_kumo") == "fr-fr"  # the book's, where Kokoro speaks it
    assert espeak_language("de", "jm_kumo") == "ja"
    (prepared,) = engine.prepare([text], "jm_kumo", SynthesisOptions(language="fr-FR"))
    assert [t for piece in prepared.data for t in piece.tokens] == french
    # "ç" is one symbol of Kokoro's (composed); "ɑ̃" a vowel and the combining tilde.
    tokens = tokenize(phonemize("Ça commence.", "fr-fr"), engine.vocab)[0]
    assert engine.vocab["ç"] in tokens or engine.vocab["s"] in tokens
    assert engine.vocab["\u0303"] in tokens


def test_a_lexicon_ipa_entry_reaches_kokoro_as_its_phonemes(engine: KokoroEngine) -> None:
    ipa = "kəkˈɔɹoʊ"
    (prepared,) = engine.prepare(
        [f"Say {PHONEMES_OPEN}{ipa}{PHONEMES_CLOSE} now."], "jm_kumo", ENGLISH
    )
    tokens = [t for piece in prepared.data for t in piece.tokens]
    wanted = [engine.vocab[symbol] for symbol in ipa]
    assert any(tokens[i : i + len(wanted)] == wanted for i in range(len(tokens)))
    assert set(ipa) <= engine.phoneme_symbols("jm_kumo")
    assert len(prepared.data[0].word_positions) == 3


def test_voices_say_their_language_and_gender(engine: KokoroEngine) -> None:
    voices = {voice.id: voice for voice in engine.voices()}
    assert set(voices) == {"jm_kumo", "jf_alpha"}
    assert voices["jm_kumo"].language == "ja" and "male" in voices["jm_kumo"].name
    assert "female" in voices["jf_alpha"].name


def test_the_bench_reads_its_english_texts_as_english_with_any_voice(engine: KokoroEngine) -> None:
    import argparse

    from audiopub.bench import run
    from audiopub.bench.texts import TEXTS

    options = run._options(argparse.Namespace(seed=None), None)
    (prepared,) = engine.prepare([TEXTS["short"]], "jm_kumo", options)
    english = tokenize(phonemize(TEXTS["short"], "en-us"), engine.vocab)[0]
    assert [t for piece in prepared.data for t in piece.tokens] == english
