"""The cast of a book as data: its characters and its quotations, each quotation with where it
sits in the book, its own words, and who says it (or that no one could tell).

Spans are character offsets into one of `Chapter.paragraphs`, so the chunker can cut a
paragraph at them and the voices can be looked up per span. Speech that runs over several
paragraphs is one `Quote` per paragraph, each with the same speaker; speech interrupted by a
tag ("Come in," she said, "and sit.") is two quotes with the tag between them read by the
narrator.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

Gender = Literal["female", "male"]

# How a quotation's speaker was found, for the scorer's categories and the user's trust:
# a tag naming the speaker ("said Mrs. Carew"), a tag with a pronoun ("she said"), a name or
# vocative near it, the turn-taking of a two-person exchange, or not at all.
HOW: Final = ("explicit", "pronoun", "nearby", "turn", "none")
How = Literal["explicit", "pronoun", "nearby", "turn", "none"]


@dataclass(frozen=True)
class Quote:
    """One piece of direct speech inside one paragraph."""

    chapter: int  # `Chapter.index`
    paragraph: int  # position in `Chapter.paragraphs`
    start: int  # span in that paragraph, quotation marks included
    end: int
    text: str  # the quotation's own words, without its marks
    speaker: str | None  # `Character.name`; None where no one could tell (the narrator reads it)
    how: How = "none"

    def to_dict(self) -> dict[str, Any]:
        return {
            "chapter": self.chapter,
            "paragraph": self.paragraph,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "speaker": self.speaker,
            "how": self.how,
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Quote:
        return Quote(
            int(data["chapter"]),
            int(data["paragraph"]),
            int(data["start"]),
            int(data["end"]),
            str(data["text"]),
            data["speaker"],
            data.get("how", "none"),
        )


@dataclass(frozen=True)
class Character:
    """A person who speaks: one name, the other names the book calls them by, their gender
    where the text shows it (pronouns, titles), and how many quotations they have."""

    name: str
    aliases: tuple[str, ...] = ()
    gender: Gender | None = None
    lines: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "gender": self.gender,
            "lines": self.lines,
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Character:
        return Character(
            str(data["name"]),
            tuple(data.get("aliases", ())),
            data.get("gender"),
            int(data.get("lines", 0)),
        )


@dataclass(frozen=True)
class Attribution:
    """Every quotation of a book with its speaker, and the characters who speak."""

    characters: tuple[Character, ...] = ()
    quotes: tuple[Quote, ...] = field(default=())

    def in_paragraph(self, chapter: int, paragraph: int) -> list[Quote]:
        """The quotes of one paragraph, in reading order."""
        return sorted(
            (q for q in self.quotes if q.chapter == chapter and q.paragraph == paragraph),
            key=lambda q: q.start,
        )

    def of(self, name: str) -> Iterator[Quote]:
        return (q for q in self.quotes if q.speaker == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "characters": [c.to_dict() for c in self.characters],
            "quotes": [q.to_dict() for q in self.quotes],
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Attribution:
        return Attribution(
            tuple(Character.from_dict(c) for c in data.get("characters", ())),
            tuple(Quote.from_dict(q) for q in data.get("quotes", ())),
        )
