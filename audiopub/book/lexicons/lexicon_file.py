"""A lexicon file as an editor shows it: rows to change, written back as the file a person
would have written (the format is `book.lexicons.lexicon`'s).

People edit the same files by hand, so their notes survive the editor: each run of comment and
blank lines stays with the entry that follows it (a heading over a group of names stays over
the group), and the lines after the last entry stay at the end. A deleted row hands its notes
to the row after it. A row is refused, naming the file and row, when its line would not read
back as the same entry: a tab or line break in a field, a written form starting with `#` (a
comment), a missing column, a bad option or regular expression. Rows left empty are dropped.

A save writes the whole file at once (`atomic.atomic_write`), and not at all when a row is
refused or when the file changed on disk since it was loaded (someone edited it meanwhile).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from audiopub.atomic import atomic_write
from audiopub.book.lexicons.lexicon import Entry, parse_line
from audiopub.errors import LexiconError

OPTIONS: Final = ("case", "regex")


@dataclass
class Row:
    """One entry as the editor shows it, with the notes (comment and blank lines) above it."""

    written: str = ""
    say: str = ""
    case: bool = False
    regex: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.written.strip() and not self.say.strip()

    @property
    def complete(self) -> bool:
        return bool(self.written.strip()) and bool(self.say.strip())

    def line(self) -> str:
        options = " ".join(name for name in OPTIONS if getattr(self, name))
        return "\t".join([self.written.strip(), self.say.strip(), *([options] if options else [])])


@dataclass
class LexiconFile:
    rows: list[Row] = field(default_factory=list)
    notes_at_end: list[str] = field(default_factory=list)
    # The file's text when it was loaded (None: there was no file), to notice edits made
    # elsewhere before overwriting them.
    loaded_text: str | None = None

    def add(self, written: str = "", say: str = "") -> Row:
        row = Row(written, say)
        if not self.rows:  # notes in a file without entries head the first one
            row.notes, self.notes_at_end = self.notes_at_end, []
        self.rows.append(row)
        return row

    def delete(self, index: int) -> None:
        row = self.rows.pop(index)
        following = self.rows[index].notes if index < len(self.rows) else self.notes_at_end
        following[:0] = row.notes

    def entries(self, source: str, *, complete_only: bool = False) -> list[Entry]:
        """The rows' entries, each named "`source`:row N" (N counts from 1, as the editor
        shows them). A row with one column still empty is refused, or skipped with
        `complete_only` (a row still being typed: what is said then is the voice's default)."""
        entries = []
        for number, row in enumerate(self.rows, start=1):
            where = f"{source}:row {number}"
            _check_fields(row, where)
            if row.empty or (complete_only and not row.complete):
                continue
            if not row.written.strip():
                raise LexiconError(
                    f"{where}: the written form is empty (how to say it: {row.say.strip()!r})"
                )
            if not row.say.strip():
                raise LexiconError(
                    f"{where}: say how {row.written.strip()!r} is said: a "
                    "respelling, or IPA between slashes"
                )
            entries.append(parse_line(row.line(), where))
        return entries

    def text(self) -> str:
        lines: list[str] = []
        for row in self.rows:
            lines.extend(row.notes)
            if not row.empty:
                lines.append(row.line())
        lines.extend(self.notes_at_end)
        return "".join(f"{line}\n" for line in lines)


def _check_fields(row: Row, where: str) -> None:
    for name, value in (("written form", row.written), ("how to say it", row.say)):
        # splitlines() is how the file is read back: every break it knows would cut the line.
        if "\t" in value or (value and value.splitlines() != [value]):
            raise LexiconError(
                f"{where}: the {name} {value.strip()!r} contains a tab or a line "
                "break, which a lexicon line cannot hold"
            )
    if row.written.strip().startswith("#"):
        raise LexiconError(
            f"{where}: a written form cannot start with '#' (the line would be "
            "read as a comment); use the regex option and write [#]…"
        )


def from_text(text: str, source: str) -> LexiconFile:
    """The rows of a lexicon file's text. A line that is not a full entry becomes a row to
    fix (its columns as they are); only an option the editor cannot show is refused."""
    lexicon = LexiconFile(loaded_text=text)
    notes: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            notes.append(line)
            continue
        written, say, options = [*line.split("\t", 2), "", ""][:3]
        unknown = set(options.split()) - set(OPTIONS)
        if unknown:
            raise LexiconError(
                f"{source}:{number}: unknown option "
                f"{', '.join(sorted(unknown))!r} (options are: "
                f"{', '.join(OPTIONS)}); fix this line in a text editor"
            )
        lexicon.rows.append(
            Row(
                written.strip(),
                say.strip(),
                "case" in options.split(),
                "regex" in options.split(),
                notes,
            )
        )
        notes = []
    lexicon.notes_at_end = notes
    return lexicon


def load(path: Path) -> LexiconFile:
    """The file's rows; no file yet is an empty lexicon."""
    path = Path(path)
    if not path.exists():
        return LexiconFile()
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LexiconError(f"{path}: cannot read this lexicon ({exc})") from exc
    return from_text(text, str(path))


def save(
    path: Path, lexicon: LexiconFile, check: Callable[[list[Entry]], object] | None = None
) -> list[Entry]:
    """Write the rows to `path` and return their entries; `check` may refuse the entries
    (e.g. `Lexicon(entries, voice symbols)`) before anything is written."""
    path = Path(path)
    entries = lexicon.entries(str(path))
    if check is not None:
        check(entries)
    on_disk = _current_text(path)
    if on_disk != lexicon.loaded_text:
        raise LexiconError(
            f"{path} was changed elsewhere since it was opened here; reload it "
            "to see those changes (yours are not saved)"
        )
    text = lexicon.text()
    if on_disk is None and not text:
        return entries  # nothing to keep: no need for an empty file
    try:
        with atomic_write(path) as temp:
            temp.write_text(text, "utf-8")
    except OSError as exc:  # a read-only folder, a full disk: the old file stays as it was
        raise LexiconError(f"{path}: cannot write this lexicon ({exc})") from exc
    lexicon.loaded_text = text
    return entries


def _current_text(path: Path) -> str | None:
    try:
        return path.read_text("utf-8")
    except (FileNotFoundError, NotADirectoryError):  # no such file (yet)
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise LexiconError(f"{path}: cannot read this lexicon ({exc})") from exc
