"""The book's words and the engine's: word timings kept only where they match by count."""

from __future__ import annotations

import pytest

from audiopub import settings
from audiopub.book.chunks.words import book_word_starts, text_words
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.piper.engine import PiperEngine


def test_words_are_tokens_with_a_letter_or_digit() -> None:
    assert text_words("“Well,” said he — “it is so…” 42!") == [
        "“Well,”",
        "said",
        "he",
        "“it",
        "is",
        "so…”",
        "42!",
    ]
    assert text_words("He said ⟦hɛloʊ wɜːld⟧ twice.") == ["He", "said", "hɛloʊ", "wɜːld", "twice."]


def test_word_starts_are_kept_only_where_every_count_agrees() -> None:
    starts = (10, 20, 30)
    assert book_word_starts("Dr. Watson left.", "Doctor Watson left.", starts) == starts
    assert book_word_starts("I am 21", "I am twenty one", starts) is None  # spoken has 4
    assert book_word_starts("Yes, it was a cat.", "Yes, it was a cat.", starts) is None
    assert book_word_starts("Yes.", "Yes.", None) is None


@pytest.fixture(scope="module")
def engine() -> PiperEngine:
    return PiperEngine(threads=1)


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        # Sentences from the test books, as espeak splits them with the embedded voice.
        ("The Martians seemed in no hurry.", True),
        ("Yes. Antidisestablishmentarianism is long. No.", True),
        ("IN the sea, once upon a time, O my Best Beloved, there was a Whale.", False),  # "upon a"
        ("It was a dark and stormy night.", False),  # "was a" is one word to espeak
    ],
)
def test_espeaks_words_against_the_books(engine: PiperEngine, text: str, matches: bool) -> None:
    (prepared,) = engine.prepare([text], settings.DEFAULT_PIPER_VOICE, SynthesisOptions())
    engine_words = len(prepared.data.word_positions)
    assert (engine_words == len(text_words(text))) is matches
    starts = tuple(range(engine_words))
    assert (book_word_starts(text, text, starts) is not None) is matches
