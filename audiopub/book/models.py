"""Plain data for a book on its way to audio."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from audiopub.book.pronunciation import Pronunciation


def sniff_image_type(data: bytes) -> str | None:
    """The raster media type from the file's first bytes (EPUB manifests sometimes declare it
    wrongly); None for anything else, e.g. SVG."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass(frozen=True)
class Cover:
    """The cover image as stored in the EPUB."""

    data: bytes
    media_type: str  # e.g. "image/jpeg"


@dataclass(frozen=True)
class Chapter:
    """One narrated section, in reading order.

    `paragraphs` hold normalised text; the first is usually the heading. Paragraph boundaries
    matter: the stitcher puts a longer pause between paragraphs than between sentences.
    """

    index: int
    title: str
    paragraphs: tuple[str, ...]
    # A title page, half-title or dedication (`book.chapters.front_matter`): listed, not
    # narrated unless chosen.
    front_matter: bool = False

    @property
    def char_count(self) -> int:
        return sum(len(p) for p in self.paragraphs)

    @property
    def text(self) -> str:
        return "\n\n".join(self.paragraphs)


@dataclass(frozen=True)
class BookDetails:
    """What the package says beyond title, authors and language (see `book.epub.metadata`)."""

    description: str | None = None
    year: str | None = None
    series: str | None = None
    series_index: str | None = None  # as the book writes it: "2", "2.5"


@dataclass(frozen=True)
class Book:
    title: str
    authors: tuple[str, ...]
    language: str | None
    chapters: tuple[Chapter, ...]
    cover: Cover | None = None
    warnings: tuple[str, ...] = field(default=())
    # How the book itself says to pronounce words (EPUB 3 PLS lexicons, ssml:ph attributes).
    pronunciations: tuple[Pronunciation, ...] = field(default=())
    details: BookDetails = field(default=BookDetails())

    @property
    def author(self) -> str:
        return ", ".join(self.authors)

    @property
    def char_count(self) -> int:
        return sum(c.char_count for c in self.chapters)

    @property
    def default_selection(self) -> list[int]:
        """The 1-based numbers of the chapters narrated unless the user chooses: all but the
        title pages and dedications (all of them if that leaves none)."""
        chosen = [c.index + 1 for c in self.chapters if not c.front_matter]
        return chosen or [c.index + 1 for c in self.chapters]

    def to_dict(self) -> dict[str, Any]:
        """Everything but the cover (binary; stored beside it), as JSON-ready data."""
        return {
            "title": self.title,
            "authors": list(self.authors),
            "language": self.language,
            "chapters": [
                {
                    "index": c.index,
                    "title": c.title,
                    "paragraphs": list(c.paragraphs),
                    **({"front_matter": True} if c.front_matter else {}),
                }
                for c in self.chapters
            ],
            "warnings": list(self.warnings),
            "pronunciations": [hint.to_dict() for hint in self.pronunciations],
            "details": asdict(self.details),
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any], cover: Cover | None = None) -> Book:
        return Book(
            title=data["title"],
            authors=tuple(data["authors"]),
            language=data["language"],
            chapters=tuple(
                Chapter(
                    c["index"],
                    c["title"],
                    tuple(c["paragraphs"]),
                    bool(c.get("front_matter", False)),
                )
                for c in data["chapters"]
            ),
            cover=cover,
            warnings=tuple(data.get("warnings", ())),
            pronunciations=tuple(Pronunciation(**hint) for hint in data.get("pronunciations", ())),
            details=BookDetails(**data.get("details", {})),
        )


def chunk_chars(text: str, ends_paragraph: bool) -> int:
    """A chunk's characters: its text, and the space the chunker cut at after it unless it ends
    its paragraph (a word longer than a chunk, cut inside, counts one more per cut)."""
    return len(text) + (not ends_paragraph)


@dataclass(frozen=True)
class Chunk:
    """A piece of a chapter short enough for the engine to speak in one go.

    `text` is as the book writes it (what titles, subtitles and read-along show); `spoken` is
    what the engine is given: the words a narrator says for it ("Dr. Watson paid £5" → "Doctor
    Watson paid five pounds"), the text itself when nothing needs saying differently.
    """

    chapter_index: int
    index: int  # position within the chapter
    text: str
    ends_paragraph: bool  # the stitcher follows it with a paragraph pause, else a sentence pause
    spoken: str = ""  # "" until the chunker sets it: then the text as written
    # The voice that reads it, where a cast gives it to a character; "": the job's voice.
    voice: str = ""

    def __post_init__(self) -> None:
        if not self.spoken:
            object.__setattr__(self, "spoken", self.text)

    @property
    def char_count(self) -> int:
        """Its characters as its chapter counts them (`Chapter.char_count`), so a book's count
        and its job's agree: its text, and inside a paragraph the space it was cut at."""
        return chunk_chars(self.text, self.ends_paragraph)
