"""Plain text (.txt), as Project Gutenberg and most text editors write it.

- The encoding: as `decoding` tells it (a byte-order mark, else UTF-8, else Windows-1252, which
  extends the Latin-1 of older Gutenberg files, line by line in a file of both); control
  characters are left out, with a note.
- Paragraphs are separated by blank lines; the lines of one paragraph, wrapped at ~70
  characters, are read on as one.
- A paragraph whose first line reads as a heading ("CHAPTER I.", "Chapter 12", "BOOK TWO",
  "Kapitel 3", "I." alone, see `assemble.is_heading_text`) starts a chapter; a paragraph of
  several such lines is a printed table of contents, not read.
- `_italics_` and `*emphasis*` markers are not read out.
- Project Gutenberg's header (with its "Title:", "Author:" and "Language:" lines, which give
  the book's metadata) and licence are cut, as in its EPUBs.
"""

from __future__ import annotations

import re

from audiopub.book.formats.assemble import BookText, TreeBuilder, is_heading_text
from audiopub.book.formats.decoding import decode_text
from audiopub.book.markup import clean_label

__all__ = ["read_plain_text"]

_BLANK_LINE = re.compile(r"\n[ \t\f\v]*\n")
# _word_ and *word*, not snake_case or "5 * 3".
_EMPHASIS = re.compile(r"(?<![\w*])([_*])(?=[^\s_*])(.+?)(?<=[^\s_*])\1(?![\w*])", re.DOTALL)
_CONTENTS = re.compile(
    r"^\W*(?:table of )?contents?\W*$|^\W*inhalt\W*$|^\W*table des matières\W*$|^\W*índice\W*$",
    re.I,
)
_HEADER_FIELD = re.compile(r"^(Title|Author|Language):\s*(.+)$", re.M)
_LANGUAGES = {
    "english": "en",
    "french": "fr",
    "german": "de",
    "spanish": "es",
    "italian": "it",
    "portuguese": "pt",
    "dutch": "nl",
    "finnish": "fi",
    "swedish": "sv",
    "danish": "da",
    "norwegian": "no",
    "polish": "pl",
    "russian": "ru",
    "latin": "la",
}
MAX_HEADING_LINES = 3  # "CHAPTER I." over its title, perhaps over two lines


def read_plain_text(data: bytes) -> BookText:
    decoded = decode_text(data)
    text = decoded.text.replace("\r\n", "\n").replace("\r", "\n")
    builder = TreeBuilder()
    for block in _BLANK_LINE.split(text):
        lines = [clean_label(line) for line in block.split("\n")]
        lines = [line for line in lines if line]
        if not lines:
            continue
        joined = " ".join(lines)
        if sum(map(is_heading_text, lines)) >= 2 or _CONTENTS.match(joined):
            builder.skipped(joined)  # a printed table of contents and its heading
        elif is_heading_text(lines[0]) and len(lines) <= MAX_HEADING_LINES:
            builder.heading(2, _unmarked(joined))
        else:
            builder.paragraph(_unmarked(joined))
    fields = _header_fields(text)
    language = fields.get("Language", "").split(",")[0].strip().lower()
    return BookText(
        builder.root,
        title=fields.get("Title"),
        authors=(fields["Author"],) if "Author" in fields else (),
        language=_LANGUAGES.get(language, language if len(language) == 2 else None),
        notes=decoded.notes,
    )


def _unmarked(text: str) -> str:
    return _EMPHASIS.sub(r"\2", text)


def _header_fields(text: str) -> dict[str, str]:
    """Project Gutenberg's "Title:", "Author:", "Language:" lines, from its header only."""
    start = text.find("*** START OF")
    header = text[:start] if start >= 0 else text[:3000]
    fields: dict[str, str] = {}
    for match in _HEADER_FIELD.finditer(header):
        fields.setdefault(match.group(1), clean_label(match.group(2)))
    return fields
