"""The book's tags and chapter marks, and the ffmetadata text that carries them to ffmpeg.

ffmpeg reads global tags and chapters from an ffmetadata file (`;FFMETADATA1`, `key=value`
lines, `[CHAPTER]` sections) and writes the same format back when asked (`-f ffmetadata`):
`build_ffmetadata` makes one for a mux, `parse_ffmetadata` reads one back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import langcodes

from audiopub.book.models import Book

# iTunes "stik" media kind 2 = Audiobook, so Apple software files the book correctly.
MEDIA_KIND_AUDIOBOOK: Final = "2"


@dataclass(frozen=True)
class ChapterMark:
    """Where a chapter sits in the finished book, in seconds."""

    title: str
    start_s: float
    end_s: float


@dataclass(frozen=True)
class BookTags:
    """Global tags of the audiobook."""

    title: str
    author: str
    album: str | None = None  # defaults to the title
    genre: str = "Audiobook"
    year: str | None = None
    comment: str | None = None
    track: str | None = None  # "3/12": a chapter file's place in the book
    language: str | None = None  # BCP 47, as the book says it: "fr", "en-GB"
    narrator: str | None = None  # who reads it: the engine and voice
    description: str | None = None
    # The iTunes media kind "Audiobook": an MP4 atom; other containers would keep it as an
    # odd custom tag.
    itunes_audiobook: bool = True


def book_tags(
    book: Book, narrator: str, *, title: str | None = None, track: str | None = None
) -> BookTags:
    """The tags every file made of `book` carries (the .m4b, the whole-book MP3, each chapter's
    file, the read-aloud EPUB's audio); `title` and `track` are one chapter's file's own."""
    return BookTags(
        title=book.title if title is None else title,
        author=book.author,
        album=book.title,
        year=book.details.year,
        language=book.language,
        narrator=narrator,
        description=book.details.description,
        track=track,
    )


def stream_language(tag: str | None) -> str | None:
    """The ISO 639-2/T code an MP4 audio stream stores for a BCP 47 tag ("fr-FR" → "fra",
    "de" → "deu"); None for no tag or one no registry knows (the stream stays "und")."""
    if not tag:
        return None
    try:
        return langcodes.Language.get(tag).to_alpha3()  # the terminology code, as MP4 wants
    except (LookupError, ValueError):
        return None


def escape_ffmetadata(value: str) -> str:
    r"""Escape a value for an ffmetadata file: a backslash before = ; # \ and newline.

    Carriage returns are escaped too: ffmpeg's reader ends a line at an unescaped CR.
    """
    return "".join("\\" + ch if ch in "=;#\\\n\r" else ch for ch in value)


def _metadata_line(key: str, value: str) -> str:
    # ffmpeg's reader takes an escaped backslash right before the line end for an escaped
    # newline and swallows the next line, so a value can't end in a backslash.
    value = value.rstrip("\\")
    return f"{key}={escape_ffmetadata(value)}"


def _tag_items(tags: BookTags) -> list[tuple[str, str]]:
    items = [
        ("title", tags.title),
        ("artist", tags.author),
        ("album_artist", tags.author),
        ("album", tags.album or tags.title),
        ("genre", tags.genre),
        ("date", tags.year),
        ("comment", tags.comment),
        ("description", tags.description),
        # No container has a narrator field ffmpeg writes: audiobook players and libraries
        # (Audiobookshelf, iTunes' "Composer") read the narrator from the composer tag.
        ("composer", tags.narrator),
        ("track", tags.track),
        ("language", tags.language),
        ("media_type", MEDIA_KIND_AUDIOBOOK if tags.itunes_audiobook else None),
    ]
    return [(key, str(value)) for key, value in items if value]


def _chapter_ms(chapters: Sequence[ChapterMark]) -> list[tuple[int, int]]:
    """Integer-millisecond (start, end) pairs, each end equal to the next start."""
    starts = [round(c.start_s * 1000) for c in chapters]
    ends = (starts[1:] + [round(chapters[-1].end_s * 1000)]) if chapters else []
    for number, (chapter, start, end) in enumerate(zip(chapters, starts, ends), start=1):
        if end <= start:
            raise ValueError(f"chapter {number} ({chapter.title!r}) has no length")
    return list(zip(starts, ends))


def build_ffmetadata(tags: BookTags, chapters: Sequence[ChapterMark]) -> str:
    """The ffmetadata file carrying the book's tags and chapter marks."""
    lines = [";FFMETADATA1"]
    lines += [_metadata_line(key, value) for key, value in _tag_items(tags)]
    for chapter, (start, end) in zip(chapters, _chapter_ms(chapters)):
        lines += [
            "[CHAPTER]",
            "TIMEBASE=1/1000",
            f"START={start}",
            f"END={end}",
            _metadata_line("title", chapter.title),
        ]
    return "\n".join(lines) + "\n"


def _logical_lines(text: str) -> Iterable[list[tuple[str, bool]]]:
    """Split ffmetadata into lines of (character, was_escaped), honouring backslash escapes."""
    line: list[tuple[str, bool]] = []
    chars = iter(text)
    for ch in chars:
        if ch == "\\":
            line.append((next(chars, ""), True))
        elif ch == "\n":
            yield line
            line = []
        else:
            line.append((ch, False))
    if line:
        yield line


def _split_key_value(line: list[tuple[str, bool]]) -> tuple[str, str] | None:
    for i, (ch, escaped) in enumerate(line):
        if ch == "=" and not escaped:
            key = "".join(c for c, _ in line[:i])
            return key, "".join(c for c, _ in line[i + 1 :])
    return None


def _chapter_from_section(section: dict[str, str]) -> ChapterMark:
    num, _, den = section.get("TIMEBASE", "1/1000").partition("/")
    timebase = Fraction(int(num), int(den or 1))
    start = float(int(section.get("START", "0")) * timebase)
    end = float(int(section.get("END", "0")) * timebase)
    return ChapterMark(section.get("title", ""), start, end)


def parse_ffmetadata(text: str) -> tuple[dict[str, str], list[ChapterMark]]:
    """Global tags and chapters from ffmetadata text (as `ffmpeg -f ffmetadata` writes it)."""
    tags: dict[str, str] = {}
    sections: list[dict[str, str]] = []
    current = tags  # where key=value lines go
    for line in _logical_lines(text):
        if not line or (line[0][0] in ";#" and not line[0][1]):
            continue  # blank line or comment
        plain = "".join(ch for ch, _ in line)
        is_header = not any(escaped for _, escaped in line) and plain.startswith("[")
        if is_header and plain == "[CHAPTER]":
            sections.append({})
            current = sections[-1]
        elif is_header:
            current = {}  # [STREAM] or an unknown section: read and ignore
        elif (pair := _split_key_value(line)) is not None:
            current[pair[0]] = pair[1]
    return tags, [_chapter_from_section(s) for s in sections]
