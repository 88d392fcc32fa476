"""Which voice reads which stretch of a book: the spans of a cast's quotations that a voice
other than the narrator's reads, with the voices' model identities for the chunk cache.

What a job keeps of its cast (`JobSettings.cast`), so every run of it cuts and voices the same
chunks; the chunker cuts paragraphs at these spans (`chunks.chunking.chunk_paragraphs`). Made from a
book's cast by `voices.casting`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# (start, end, voice): a stretch of one paragraph, in character offsets, that `voice` reads.
VoicedSpan = tuple[int, int, str]


@dataclass(frozen=True)
class Voicing:
    """The voices of a cast, as a job speaks them."""

    engine: str  # every voice is this engine's
    narrator: str  # reads everything no span gives to another voice
    voices: Mapping[str, str] = field(default_factory=dict)  # character → voice
    # voice → `Engine.model_id(voice)`: a voice's files name its chunks' audio.
    models: Mapping[str, str] = field(default_factory=dict)
    # (chapter index, paragraph) → its voiced spans, in order.
    spans: Mapping[tuple[int, int], tuple[VoicedSpan, ...]] = field(default_factory=dict)

    def __hash__(self) -> int:  # its mappings are not hashable: hashed by what names it
        return hash((self.engine, self.narrator, tuple(sorted(self.voices.items()))))

    def in_chapter(self, chapter: int) -> dict[int, tuple[VoicedSpan, ...]]:
        """paragraph → its voiced spans, for one chapter."""
        return {p: spans for (c, p), spans in self.spans.items() if c == chapter}

    def summary(self) -> str:
        """ "3 characters in 2 voices (narrator af_heart)"."""
        return cast_summary(self.voices, self.narrator)

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "narrator": self.narrator,
            "voices": dict(self.voices),
            "models": dict(self.models),
            "spans": [
                [chapter, paragraph, start, end, voice]
                for (chapter, paragraph), spans in sorted(self.spans.items())
                for start, end, voice in spans
            ],
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Voicing:
        spans: dict[tuple[int, int], list[VoicedSpan]] = {}
        for chapter, paragraph, start, end, voice in data.get("spans", ()):
            spans.setdefault((int(chapter), int(paragraph)), []).append(
                (int(start), int(end), str(voice))
            )
        return Voicing(
            str(data["engine"]),
            str(data["narrator"]),
            dict(data.get("voices", {})),
            dict(data.get("models", {})),
            {key: tuple(sorted(value)) for key, value in spans.items()},
        )


def cast_summary(voices: Mapping[str, str], narrator: str) -> str:
    """ "3 characters in 2 voices (narrator af_heart)": characters → voices."""
    return f"{len(voices)} characters in {len(set(voices.values()))} voices (narrator {narrator})"


def voiced_segments(
    paragraph: str, spans: tuple[VoicedSpan, ...] | list[VoicedSpan]
) -> list[tuple[str, str]]:
    """The paragraph as consecutive (text, voice) pieces, "" the narrator's; joined they give
    it back. Each span is widened to the whitespace around it, so no word is ever cut in two
    (a tag glued to its quotation, '"No"—he', is read in the quotation's voice)."""
    pieces: list[tuple[str, str]] = []
    at = 0
    for start, end, voice in sorted(spans):
        start, end = max(start, 0), min(end, len(paragraph))
        while start > at and not paragraph[start - 1].isspace():
            start -= 1
        while end < len(paragraph) and not paragraph[end].isspace():
            end += 1
        start = max(start, at)
        if end <= start:
            continue
        if start > at:
            pieces.append((paragraph[at:start], ""))
        if pieces and pieces[-1][1] == voice:  # two quotations of one voice, nothing between
            pieces[-1] = (pieces[-1][0] + paragraph[start:end], voice)
        else:
            pieces.append((paragraph[start:end], voice))
        at = end
    if at < len(paragraph):
        pieces.append((paragraph[at:], ""))
    return pieces
