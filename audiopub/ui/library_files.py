"""The finished books of the library folder as files: what the Library lists when the job
store can't be read. Each .m4b says its own title and author; no path comes from the client,
only a name the folder holds in the form the web app gives its books."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from audiopub.audio.ffmpeg import probe
from audiopub.errors import AudiopubError

BOOK_NAME: Final = re.compile(r"[0-9a-f]{32}\.m4b")  # `Services.submit` names them so


@dataclass(frozen=True)
class BookFile:
    path: Path
    title: str
    author: str
    size: int


def books_in(folder: Path) -> list[BookFile]:
    """The web app's books in `folder`, newest first (blocking: ffmpeg reads each one's tags)."""
    paths = [p for p in Path(folder).glob("*.m4b") if BOOK_NAME.fullmatch(p.name)]
    books = []
    for path in sorted(paths, key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            tags = probe(path).tags
        except AudiopubError:  # unreadable: still listed, by its name
            tags = {}
        books.append(
            BookFile(
                path,
                tags.get("title", "") or path.stem,
                tags.get("artist", ""),
                path.stat().st_size,
            )
        )
    return books


def book_file(folder: Path, name: str) -> Path | None:
    """The book called `name` in `folder`, if it is one of the web app's books."""
    path = Path(folder) / name
    return path if BOOK_NAME.fullmatch(name) and path.is_file() else None
