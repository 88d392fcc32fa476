"""The book's words, and when each is heard: the engine's word timings mapped onto the text.

The engine speaks a chunk's spoken form ("Dr. Watson paid £5" → "Doctor Watson paid five
pounds"), cut into words by its own front end (espeak, for Piper, which says "was a" or
"I am" as one word); exports show the book's text. A chunk's word timings are mapped onto the
book's words only where the three agree word for word by count:

    the engine's words  ==  the spoken form's words  ==  the book text's words

A word here is a whitespace-separated token holding a letter or a digit (a lone "—" or "..."
is no word; a lexicon's phonemes count as the words between their marks). Where the counts
differ the chunk has no word timings at all, rather than words shifted onto their neighbours.
Counts can only agree by accident where the engine merges two words and splits another in the
same chunk. espeak merges often ("was a", "upon a"): on three of the test books 35-39% of the
chunks (29-33% of the words) keep word timings, the rest are timed by sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

from audiopub.book.lexicons.lexicon import PHONEME_SPAN


def text_words(text: str) -> list[str]:
    """The words of `text`, in order: tokens between whitespace that hold a letter or digit."""
    plain = PHONEME_SPAN.sub(lambda match: match.group(1), text)
    return [token for token in plain.split() if any(char.isalnum() for char in token)]


def book_word_starts(
    text: str, spoken: str, engine_starts: Sequence[int] | None
) -> tuple[int, ...] | None:
    """`engine_starts` (one per engine word of `spoken`) as the starts of `text`'s words, or
    None where the words can't be matched safely (see the module docstring)."""
    if engine_starts is None:
        return None
    count = len(engine_starts)
    if count == 0 or len(text_words(spoken)) != count or len(text_words(text)) != count:
        return None
    return tuple(engine_starts)
