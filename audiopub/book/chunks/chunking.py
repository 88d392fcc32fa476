"""Cut a chapter's paragraphs into chunks short enough for a TTS engine to speak in one go.

Engines read best given whole sentences, so sentences are packed greedily into chunks of at
most `max_chars` characters — characters of the spoken form when a `speak` function is given
(see `book.spoken`: "1850" is spoken as "eighteen fifty", so the limit applies to what the
engine reads). Only a sentence that is longer than the limit on its own is cut
smaller: at clause boundaries first, then between words, and as a last resort inside a word.
A chunk never spans two paragraphs, because the stitcher puts a paragraph pause after the last
chunk of each paragraph; nor two voices, where a cast gives quotations to characters
(`book.voicing`): a paragraph is cut at its voiced spans first.

Every cut is made at whitespace except that last resort, so the words of the chunks, in order,
are the words of the paragraphs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from audiopub.book.models import Chunk
from audiopub.book.text import split_sentences
from audiopub.book.voicing import VoicedSpan, voiced_segments

__all__ = ["chunk_paragraphs", "cut_sentence", "split_clauses"]

# A clause ends where a space follows a comma, semicolon, colon, ellipsis, "!", "?" or a
# closing bracket (optionally with a closing quote: '"Well," said he'), or a dash glued to its
# word ("said he— then"). A spaced dash ("a — b") starts the next clause instead, so it is never
# a clause of its own; so does an opening bracket. Only the space is cut, so no word is ever
# split here.
_CLAUSE_BREAK = re.compile(
    r"(?<=[,;:!?)\]])\s+"
    r"|(?<=\S[—–])\s+"
    r"|(?<=[,;:!?][\"'’”])\s+"
    r"|(?<=\.\.\.)\s+"
    r"|(?<=…)\s+"
    r"|(?<=\s-)\s+"
    r"|\s+(?=[—–(\[])"
)

_Splitter = Callable[[str], list[str]]
_Length = Callable[[str], int]


def split_clauses(sentence: str) -> list[str]:
    """Split a sentence at clause boundaries; joining the parts with spaces gives it back."""
    return [part for part in _CLAUSE_BREAK.split(sentence) if part]


def _split_words(text: str) -> list[str]:
    return text.split()


def _hard_split(word: str, max_chars: int) -> list[str]:
    # Last resort, for a single word longer than the limit (a URL, a 300-letter German
    # compound): cut it every `max_chars` characters. The engine mispronounces the seams, but
    # that beats refusing the book; the pieces concatenate back to the word.
    return [word[i : i + max_chars] for i in range(0, len(word), max_chars)]


# From coarse to fine: each level is only used on a piece the level before could not fit.
_SPLITTERS: tuple[_Splitter, ...] = (split_sentences, split_clauses, _split_words)


def _fit(
    text: str, max_chars: int, splitters: Sequence[_Splitter], length: _Length = len
) -> list[str]:
    """Cut `text` into pieces of at most `max_chars` (as `length` counts), packing parts
    greedily.

    A part that fits is packed with its neighbours; a part that does not is cut by the next,
    finer splitter into pieces of its own, so (for example) the tail of a long sentence is not
    glued to the start of the next one.
    """
    if length(text) <= max_chars:
        return [text]
    if not splitters:
        return _hard_split(text, max_chars)
    split, finer = splitters[0], splitters[1:]
    pieces: list[str] = []
    current = ""
    for part in split(text):
        if length(part) > max_chars:
            if current:
                pieces.append(current)
            pieces.extend(_fit(part, max_chars, finer, length))
            current = ""
        elif not current:
            current = part
        elif length(f"{current} {part}") <= max_chars:
            current = f"{current} {part}"
        else:
            pieces.append(current)
            current = part
    if current:
        pieces.append(current)
    return pieces


def cut_sentence(sentence: str, max_chars: int) -> list[str]:
    """A sentence in pieces of at most `max_chars`, cut as chunks are: at clause boundaries
    first, then between words (e.g. for subtitle cues a player shows comfortably)."""
    return _fit(sentence, max_chars, _SPLITTERS[1:])


def chunk_paragraphs(
    paragraphs: Sequence[str],
    max_chars: int,
    chapter_index: int = 0,
    speak: Callable[[str], str] | None = None,
    voiced: Mapping[int, Sequence[VoicedSpan]] | None = None,
) -> list[Chunk]:
    """Chunk one chapter: each chunk has 1..max_chars characters and stays inside a paragraph.

    With `speak` (written text → the words said, e.g. `spoken_form` in the book's language),
    each chunk carries its spoken form and the limit counts its characters; a word that is
    longer than the limit on its own is cut as written. Empty (or whitespace-only) paragraphs
    are skipped. The last chunk of each paragraph has `ends_paragraph=True`. Chunk indices run
    0..n-1 within the chapter.

    `voiced` (paragraph position → its spans read by other voices than the narrator's) cuts a
    paragraph at those spans, so that no chunk holds two voices, and each chunk carries its
    voice ("" for the narrator's).
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    say = speak or (lambda text: text)
    chunks: list[Chunk] = []
    length = (lambda text: len(say(text))) if speak else len
    for position, paragraph in enumerate(paragraphs):
        spans = voiced.get(position, ()) if voiced else ()
        segments = voiced_segments(paragraph, list(spans)) if spans else [(paragraph, "")]
        # One space between words: the cuts (and the length limit) assume it. "" comes back
        # for an empty paragraph or segment.
        pieces = [
            (piece, voice)
            for segment, voice in segments
            for piece in _fit(" ".join(segment.split()), max_chars, _SPLITTERS, length)
            if piece
        ]
        for number, (piece, voice) in enumerate(pieces):
            chunks.append(
                Chunk(
                    chapter_index=chapter_index,
                    index=len(chunks),
                    text=piece,
                    ends_paragraph=number == len(pieces) - 1,
                    spoken=say(piece),
                    voice=voice,
                )
            )
    return chunks
