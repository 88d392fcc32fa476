"""Pronunciation lexicons: how to say a word or phrase, matched on the book's written text.

A lexicon file is UTF-8 text, one entry a line, tab-separated, `#` starting a comment line:

    # written form <TAB> how to say it <TAB> options (optional)
    Hermione	her-MY-oh-nee
    Hermione	/hɝˈmaɪəni/
    Charles II	Charles the Second
    colou?r	color	regex
    NASA	nasa	case

The second column is a respelling, which every engine reads, or IPA between slashes, which
engines that take phonemes read exactly (Piper: the voice's own phoneme ids); an engine that
takes no phonemes uses a respelling line for the same written form, and without one the
entry is refused with a message naming it. Options: `case` (match the case exactly; by default
case is ignored) and `regex` (the written form is a regular expression; by default it is a
literal word or phrase, matched as whole words only).

Entries match the written text before numbers and abbreviations are put into words
(`book.spoken`), so an entry for "Dr." or "Charles II" wins over every rule; what an entry
claims is said as the entry says, and the rest of the text gets the usual spoken form. Only
what the engine is given changes: titles and the book's text keep their spelling.

Scopes, first wins: the job's own entries (`convert --lexicon FILE`), the book's
(`<data dir>/books/<book key>/lexicon.tsv`), the EPUB's own hints (PLS lexicons and `ssml:ph`
attributes, see `book.pronunciation`), the user's (`<data dir>/lexicon.tsv`); `layered` puts
them in that order. The web app edits the book's and the user's files with
`book.lexicons.lexicon_file`, which keeps their comments.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from audiopub.book.pronunciation import Pronunciation
from audiopub.errors import LexiconError

FILE_NAME: Final = "lexicon.tsv"
# Phonemes travel inside a chunk's spoken text between these marks, to engines that take them.
PHONEMES_OPEN: Final = "⟦"
PHONEMES_CLOSE: Final = "⟧"
PHONEME_SPAN: Final = re.compile(f"{PHONEMES_OPEN}([^{PHONEMES_CLOSE}]*){PHONEMES_CLOSE}")
_OPTIONS: Final = frozenset({"case", "regex"})


@dataclass(frozen=True)
class Entry:
    written: str  # a word or phrase as the book writes it, or a regular expression
    say: str  # a respelling, or IPA when `phonemes`
    phonemes: bool = False
    case: bool = False  # match the case exactly
    regex: bool = False
    source: str = ""  # "file:line", for messages
    # A user's entry must be honoured or refused; a hint from the book itself (its PLS
    # lexicon, ssml:ph) is left to the engine's default where the voice cannot say it.
    strict: bool = True

    def describe(self) -> str:
        said = f"/{self.say}/" if self.phonemes else self.say
        return f"{self.source + ': ' if self.source else ''}{self.written!r} → {said!r}"

    def pattern(self) -> re.Pattern[str]:
        flags = 0 if self.case else re.IGNORECASE
        if self.regex:
            return re.compile(self.written, flags)
        # Whole words only: "Ron" is not the start of "Ronald".
        return re.compile(rf"(?<!\w){re.escape(self.written)}(?!\w)", flags)


def parse(text: str, source: str) -> list[Entry]:
    """The entries of a lexicon file's text; `source` names the file in error messages."""
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        entries.append(parse_line(line, f"{source}:{number}"))
    return entries


def parse_line(line: str, where: str) -> Entry:
    """One entry line; `where` ("file:line") names it in the entry and in error messages."""
    columns = line.rstrip("\r\n").split("\t")
    if len(columns) not in (2, 3) or not columns[0].strip() or not columns[1].strip():
        raise LexiconError(
            f"{where}: expected 'written form<TAB>how to say it<TAB>options', got {line.strip()!r}"
        )
    written, say = columns[0].strip(), columns[1].strip()
    options = set(columns[2].split()) if len(columns) == 3 else set()
    unknown = options - _OPTIONS
    if unknown:
        raise LexiconError(
            f"{where}: unknown option {', '.join(sorted(unknown))!r} "
            f"(options are: {', '.join(sorted(_OPTIONS))})"
        )
    phonemes = len(say) > 2 and say.startswith("/") and say.endswith("/")
    entry = Entry(
        written,
        unicodedata.normalize("NFD", say[1:-1].strip()) if phonemes else say,
        phonemes,
        "case" in options,
        "regex" in options,
        where,
    )
    try:
        entry.pattern()
    except re.error as exc:
        raise LexiconError(f"{where}: {written!r} is not a regular expression ({exc})") from None
    return entry


def read(path: Path) -> list[Entry]:
    """The entries of a lexicon file; an unreadable or malformed file is a LexiconError."""
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LexiconError(f"{path}: cannot read this lexicon ({exc})") from exc
    return parse(text, str(path))


def read_if_present(path: Path) -> list[Entry]:
    return read(path) if Path(path).is_file() else []


def book_key(epub: Path) -> str:
    """Names a book's own folder: a digest of its EPUB, so every job of that book shares it."""
    digest = hashlib.sha256()
    with open(epub, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def book_lexicon_path(data_dir: Path, epub: Path) -> Path:
    return Path(data_dir) / "books" / book_key(epub) / FILE_NAME


def user_lexicon_path(data_dir: Path) -> Path:
    return Path(data_dir) / FILE_NAME


def from_book(hints: Iterable[Pronunciation]) -> list[Entry]:
    """Entries for the book's own hints: as written (case and all), honoured where they can be."""
    return [
        Entry(hint.written, hint.say, hint.phonemes, case=True, source=hint.origin, strict=False)
        for hint in hints
    ]


def layered(
    book: Sequence[Entry],
    hints: Iterable[Pronunciation],
    user: Sequence[Entry],
    own: Sequence[Entry] = (),
) -> list[Entry]:
    """Every scope's entries in the order they count, first wins: the job's own, the book's,
    the EPUB's own hints, the user's."""
    return [*own, *book, *from_book(hints), *user]


def entries_to_data(entries: Iterable[Entry]) -> list[dict[str, Any]]:
    """Plain data for a job's settings (JSON)."""
    return [asdict(entry) for entry in entries]


def entries_from_data(data: Iterable[Mapping[str, Any]]) -> tuple[Entry, ...]:
    return tuple(Entry(**dict(item)) for item in data)


def _file(entry: Entry) -> str:
    return entry.source.rsplit(":", 1)[0]


class Lexicon:
    """Entries of every scope, first wins, ready to apply for one engine and voice.

    `phoneme_symbols` are the symbols the voice takes as phonemes (None: it takes none). An
    IPA entry is checked against them now, so a bad entry fails before anything is spoken.
    """

    def __init__(self, entries: Sequence[Entry], phoneme_symbols: frozenset[str] | None) -> None:
        usable = []
        for entry in entries:
            if not entry.phonemes:
                # A voice that takes phonemes reads a word's IPA line, where its file has one.
                if phoneme_symbols is None or not any(
                    other.phonemes
                    and other.written == entry.written
                    and _file(other) == _file(entry)
                    for other in entries
                ):
                    usable.append(entry)
            elif not entry.strict and (
                phoneme_symbols is None or not set(entry.say) - {" "} <= phoneme_symbols
            ):
                continue  # the book's hint, which this voice cannot say: its own reading
            elif phoneme_symbols is None:
                if not any(
                    not other.phonemes and other.written == entry.written for other in entries
                ):
                    raise LexiconError(
                        f"{entry.describe()}: this voice takes no phonemes; add a line with a "
                        f"respelling of {entry.written!r} for it"
                    )
            else:
                unknown = sorted(set(entry.say) - phoneme_symbols - {" "})
                if unknown:
                    raise LexiconError(
                        f"{entry.describe()}: the voice has no phoneme {' '.join(unknown)!r}"
                    )
                usable.append(entry)
        self.entries = tuple(usable)
        self._patterns = [(entry, entry.pattern()) for entry in self.entries]

    def speak(self, text: str, say_plain: Callable[[str], str]) -> str:
        """`text` as it is said: what entries claim as they say it, the rest by `say_plain`."""
        claimed: list[tuple[int, int, Entry]] = []
        for entry, pattern in self._patterns:
            for match in pattern.finditer(text):
                start, end = match.span()
                if start < end and not any(s < end and start < e for s, e, _ in claimed):
                    claimed.append((start, end, entry))
        if not claimed:
            return say_plain(text)
        parts, position = [], 0
        for start, end, entry in sorted(claimed, key=lambda span: span[0]):
            if start > position:
                parts.append(say_plain(text[position:start]))
            parts.append(
                f"{PHONEMES_OPEN}{entry.say}{PHONEMES_CLOSE}" if entry.phonemes else entry.say
            )
            position = end
        if position < len(text):
            parts.append(say_plain(text[position:]))
        return "".join(parts)
