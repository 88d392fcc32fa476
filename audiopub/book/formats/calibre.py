"""Kindle books (MOBI, AZW, AZW3), read by converting them to EPUB with Calibre's
`ebook-convert` where it is installed; Audiopub has no reader of its own for them."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from audiopub import settings
from audiopub.book.epub.reader import read_epub
from audiopub.book.models import Book
from audiopub.errors import BadBook

__all__ = ["INSTALL_CALIBRE", "read_kindle"]

INSTALL_CALIBRE = (
    "Audiopub reads Kindle books (MOBI, AZW3) through Calibre's ebook-convert, which is not "
    "installed: install Calibre (https://calibre-ebook.com/download, or your system's "
    "package, e.g. `sudo apt install calibre`) so that `ebook-convert` is on the PATH, or "
    "convert the book to EPUB yourself, and try again"
)


def read_kindle(path: Path, name: str) -> Book:
    """The book converted to EPUB by ebook-convert, then read as one (`name` kept)."""
    program = shutil.which("ebook-convert")
    if program is None:
        raise BadBook(f"{name}: {INSTALL_CALIBRE}")
    with tempfile.TemporaryDirectory(prefix="audiopub-kindle-") as folder:
        # ebook-convert picks the input format by the extension, which an upload lacks.
        source = Path(folder) / f"book{_kindle_suffix(path, name)}"
        shutil.copyfile(path, source)
        target = Path(folder) / "book.epub"
        try:
            done = subprocess.run(
                [program, str(source), str(target)],
                capture_output=True,
                text=True,
                timeout=settings.EBOOK_CONVERT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise BadBook(
                f"{name}: Calibre's ebook-convert took over "
                f"{settings.EBOOK_CONVERT_SECONDS:.0f} s to convert it; it was stopped"
            ) from exc
        if done.returncode != 0 or not target.is_file():
            last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no message"]
            drm = " (is it protected by DRM?)" if "DRM" in (done.stderr + done.stdout) else ""
            raise BadBook(
                f"{name}: Calibre's ebook-convert could not convert it{drm}: {last[0][:300]}"
            )
        return read_epub(target, name)


def _kindle_suffix(path: Path, name: str) -> str:
    for candidate in (name, path.name):
        suffix = Path(candidate).suffix.lower()
        if suffix in (".mobi", ".azw", ".azw3"):
            return suffix
    return ".mobi"
