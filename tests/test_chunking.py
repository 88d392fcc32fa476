"""Tests for audiopub.book.chunks.chunking: cutting paragraphs into engine-sized chunks."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audiopub.book.chunks.chunking import chunk_paragraphs, split_clauses
from audiopub.book.models import Chunk
from audiopub.book.text import split_sentences

# --- examples ---------------------------------------------------------------------------------


def texts(chunks: list[Chunk]) -> list[str]:
    return [chunk.text for chunk in chunks]


def test_short_paragraph_is_one_chunk() -> None:
    chunks = chunk_paragraphs(["It was a dark and stormy night."], max_chars=400, chapter_index=3)
    assert chunks == [
        Chunk(chapter_index=3, index=0, text="It was a dark and stormy night.", ends_paragraph=True)
    ]


def test_whole_sentences_are_packed_greedily() -> None:
    paragraph = "One two three. Four five six. Seven eight nine. Ten."
    # The first chunk is exactly 29 characters: a sentence that just fits is taken.
    assert texts(chunk_paragraphs([paragraph], max_chars=29)) == [
        "One two three. Four five six.",
        "Seven eight nine. Ten.",
    ]


def test_sentence_splitting_respects_abbreviations_and_quotes() -> None:
    paragraph = '"Stop." Mr. Holmes looked up. J. R. R. Tolkien wrote it.'
    assert texts(chunk_paragraphs([paragraph], max_chars=30)) == [
        '"Stop." Mr. Holmes looked up.',
        "J. R. R. Tolkien wrote it.",
    ]


def test_long_sentence_is_split_at_clauses() -> None:
    sentence = (
        "He walked to the door, opened it slowly; the hall was dark: "
        "nobody had lit the lamps, and the fire was out."
    )
    chunks = texts(chunk_paragraphs([sentence], max_chars=45))
    assert chunks == [
        "He walked to the door, opened it slowly;",
        "the hall was dark: nobody had lit the lamps,",
        "and the fire was out.",
    ]


def test_long_sentence_without_clauses_is_split_between_words() -> None:
    sentence = "the quick brown fox jumps over the lazy dog again and again"
    chunks = texts(chunk_paragraphs([sentence], max_chars=20))
    assert chunks == ["the quick brown fox", "jumps over the lazy", "dog again and again"]
    assert all(len(chunk) <= 20 for chunk in chunks)


def test_tail_of_a_long_sentence_is_not_glued_to_the_next() -> None:
    paragraph = "Alpha beta gamma delta epsilon zeta. Eta."
    assert texts(chunk_paragraphs([paragraph], max_chars=20)) == [
        "Alpha beta gamma",
        "delta epsilon zeta.",
        "Eta.",
    ]


def test_word_longer_than_the_limit_is_cut_as_a_last_resort() -> None:
    url = "https://www.gutenberg.org/ebooks/1661.epub.images"
    chunks = texts(chunk_paragraphs([f"See {url} now."], max_chars=20))
    assert chunks == ["See", url[:20], url[20:40], url[40:], "now."]


def test_german_compound() -> None:
    word = "Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbauunterbeamtengesellschaft"
    chunks = texts(chunk_paragraphs([word], max_chars=30))
    assert "".join(chunks) == word
    assert [len(chunk) for chunk in chunks] == [30, 30, len(word) - 60]


def test_paragraph_boundaries_and_indices() -> None:
    paragraphs = ["First one. Second one.", "", "   ", "Third.", "\n"]
    chunks = chunk_paragraphs(paragraphs, max_chars=12, chapter_index=7)
    assert chunks == [
        Chunk(7, 0, "First one.", ends_paragraph=False),
        Chunk(7, 1, "Second one.", ends_paragraph=True),
        Chunk(7, 2, "Third.", ends_paragraph=True),
    ]


def test_no_paragraphs_gives_no_chunks() -> None:
    assert chunk_paragraphs([], max_chars=100) == []
    assert chunk_paragraphs(["", " "], max_chars=100) == []


def test_whitespace_inside_a_paragraph_is_collapsed() -> None:
    assert texts(chunk_paragraphs(["  a\n\tb   c  "], max_chars=100)) == ["a b c"]


def test_max_chars_of_one() -> None:
    assert texts(chunk_paragraphs(["ab c"], max_chars=1)) == ["a", "b", "c"]


@pytest.mark.parametrize("max_chars", [0, -5])
def test_max_chars_must_be_positive(max_chars: int) -> None:
    with pytest.raises(ValueError, match="max_chars"):
        chunk_paragraphs(["text"], max_chars=max_chars)


def test_supertonic_sized_chunks_of_a_real_paragraph() -> None:
    paragraph = (
        '"You have been in Afghanistan, I perceive." "How on earth did you know that?" I '
        'asked in astonishment. "Never mind," said he, chuckling to himself. "The question '
        'now is about haemoglobin. No doubt you see the significance of this discovery of mine?"'
    )
    chunks = texts(chunk_paragraphs([paragraph], max_chars=80))
    assert all(len(chunk) <= 80 for chunk in chunks)
    assert " ".join(chunks) == paragraph
    # Two whole sentences fit in 80 characters; the third would not.
    assert chunks[0] == (
        '"You have been in Afghanistan, I perceive." "How on earth did you know that?"'
    )


@pytest.mark.parametrize(
    ("sentence", "clauses"),
    [
        ("one, two; three: four", ["one,", "two;", "three:", "four"]),
        ('"Well," said he', ['"Well,"', "said he"]),
        ("wait... what", ["wait...", "what"]),
        ("a — b", ["a", "— b"]),
        ("said he— then", ["said he—", "then"]),
        ("a - b", ["a -", "b"]),
        ("go (now) please", ["go", "(now)", "please"]),
        ("well-known 3,000 men", ["well-known 3,000 men"]),
    ],
)
def test_split_clauses(sentence: str, clauses: list[str]) -> None:
    assert split_clauses(sentence) == clauses


# --- properties -------------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéèüßøñ'-"
_OPENERS = ["", "", "", '"', "“", "(", "'"]
_CLOSERS = ["", "", "", ",", ".", "!", "?", ";", ":", "...", '."', "?”", ",”", ")", "—", "'"]

_plain_word = st.text(_LETTERS, min_size=1, max_size=12)
_long_word = st.text(_LETTERS + "/.:", min_size=20, max_size=700)
_special_word = st.sampled_from(["Mr.", "Mrs.", "Dr.", "J.", "R.", "e.g.", "etc.", "3.14", "—"])
_word = st.one_of(
    st.tuples(st.sampled_from(_OPENERS), _plain_word, st.sampled_from(_CLOSERS)).map("".join),
    _special_word,
    _long_word,
)
_spaces = st.sampled_from([" ", " ", " ", " ", "  ", "\n", "\t "])


@st.composite
def _paragraph(draw: st.DrawFn) -> str:
    words = draw(st.lists(_word, max_size=60))
    spaces = draw(st.lists(_spaces, min_size=len(words) + 1, max_size=len(words) + 1))
    return "".join(space + word for space, word in zip(spaces, words)) + spaces[-1]


_paragraphs = st.lists(st.one_of(_paragraph(), st.sampled_from(["", " ", "\n"])), max_size=6)
_max_chars = st.integers(min_value=20, max_value=500)
_PROPERTY = settings(max_examples=200, deadline=None)


def _by_paragraph(paragraphs: list[str], chunks: list[Chunk]) -> list[tuple[str, list[Chunk]]]:
    """Pair each non-empty paragraph (whitespace collapsed) with its chunks."""
    groups: list[list[Chunk]] = [[]]
    for chunk in chunks:
        groups[-1].append(chunk)
        if chunk.ends_paragraph:
            groups.append([])
    assert groups[-1] == [], "the last chunk must end its paragraph"
    non_empty = [" ".join(p.split()) for p in paragraphs if p.strip()]
    assert len(non_empty) == len(groups) - 1
    return list(zip(non_empty, groups))


@_PROPERTY
@given(_paragraphs, _max_chars)
def test_every_chunk_fits(paragraphs: list[str], max_chars: int) -> None:
    for chunk in chunk_paragraphs(paragraphs, max_chars):
        assert 1 <= len(chunk.text) <= max_chars
        assert chunk.text == " ".join(chunk.text.split())  # trimmed, single spaces


@_PROPERTY
@given(_paragraphs, _max_chars)
def test_every_word_is_kept_in_order(paragraphs: list[str], max_chars: int) -> None:
    """The chunks' words are the input's words, except that a word longer than `max_chars`
    comes out as ceil(len / max_chars) pieces, each a chunk of its own, that concatenate back
    to the word."""
    chunks = chunk_paragraphs(paragraphs, max_chars)
    out = [(word, chunk) for chunk in chunks for word in chunk.text.split()]
    position = 0
    for word in (word for paragraph in paragraphs for word in paragraph.split()):
        if len(word) <= max_chars:
            assert out[position][0] == word
            position += 1
        else:
            count = math.ceil(len(word) / max_chars)
            pieces = out[position : position + count]
            assert "".join(piece for piece, _ in pieces) == word
            assert all(piece == chunk.text for piece, chunk in pieces)
            position += count
    assert position == len(out), "the chunks hold words the input does not"


@_PROPERTY
@given(_paragraphs, _max_chars)
def test_chunks_tile_each_paragraph(paragraphs: list[str], max_chars: int) -> None:
    """Read in order, a paragraph's chunks spell it out exactly (whitespace collapsed), cut
    at a space, or inside a word only when that word is longer than the limit."""
    chunks = chunk_paragraphs(paragraphs, max_chars)
    for text, group in _by_paragraph(paragraphs, chunks):
        position = 0
        for chunk in group:
            assert text.startswith(chunk.text, position)
            position += len(chunk.text)
            if position < len(text) and text[position] == " ":
                position += 1
            elif position < len(text):  # cut inside a word
                word_start = text.rfind(" ", 0, position) + 1
                word_end = text.find(" ", position)
                word = text[word_start:] if word_end == -1 else text[word_start:word_end]
                assert len(word) > max_chars
        assert position == len(text)


@_PROPERTY
@given(_paragraphs, _max_chars, st.integers(min_value=0, max_value=500))
def test_paragraph_ends_and_indices(paragraphs: list[str], max_chars: int, chapter: int) -> None:
    chunks = chunk_paragraphs(paragraphs, max_chars, chapter_index=chapter)
    assert sum(chunk.ends_paragraph for chunk in chunks) == sum(1 for p in paragraphs if p.strip())
    assert [chunk.index for chunk in chunks] == list(range(len(chunks)))
    assert all(chunk.chapter_index == chapter for chunk in chunks)
    assert not chunks or chunks[-1].ends_paragraph


@_PROPERTY
@given(_paragraphs, _max_chars)
def test_sentences_that_fit_are_packed_whole_and_greedily(
    paragraphs: list[str], max_chars: int
) -> None:
    """When every sentence of a paragraph fits, each chunk is a run of whole sentences, and
    the next chunk's first sentence would not have fitted into it."""
    chunks = chunk_paragraphs(paragraphs, max_chars)
    for text, group in _by_paragraph(paragraphs, chunks):
        sentences = split_sentences(text)
        if any(len(sentence) > max_chars for sentence in sentences):
            continue
        first_sentences = []
        for chunk in group:
            taken = []
            while len(" ".join(taken)) < len(chunk.text):
                taken.append(sentences.pop(0))
            assert " ".join(taken) == chunk.text
            first_sentences.append(taken[0])
        assert sentences == []
        for chunk, next_first in zip(group, first_sentences[1:]):
            assert len(chunk.text) + 1 + len(next_first) > max_chars


def test_the_limit_applies_to_the_spoken_form() -> None:
    """ "1850" is fourteen characters once spoken ("eighteen fifty"): the engine's limit counts
    what it reads, and each chunk keeps its written text beside it."""
    from audiopub.book.spoken import spoken_form

    paragraph = "In 1850 he paid £5. In 1851 he paid £6. In 1852 he paid £7."
    chunks = chunk_paragraphs([paragraph], 45, speak=lambda text: spoken_form(text, "en"))
    assert [c.text for c in chunks] == [
        "In 1850 he paid £5.",
        "In 1851 he paid £6.",
        "In 1852 he paid £7.",
    ]
    assert chunks[0].spoken == "In eighteen fifty he paid five pounds."
    assert all(len(c.spoken) <= 45 for c in chunks)
    # Written, the three fit in 60 characters: without the spoken form they would be packed.
    assert len(chunk_paragraphs([paragraph], 60)) == 1
    assert chunk_paragraphs([paragraph], 60)[0].spoken == paragraph
