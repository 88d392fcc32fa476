"""PDF: the text layer of its pages, in reading order, as paragraphs and chapters.

pdfminer.six finds the lines of text and where they sit (`pdf_pages`, run in a process of its
own: it stops itself past `PDF_MAX_SECONDS` of CPU and `PDF_MAX_MEMORY_BYTES`, ends with the
process that started it or when the book's file goes, refuses references in a circle at once,
and a PDF of more than `PDF_MAX_PAGES` pages is refused before its pages are read). Here, from
those lines:

- running heads and footers (a line in the top or bottom margin whose text, less a page
  number, comes back on several pages) and page numbers are not read;
- a page set in two columns (a gutter down the middle that no line crosses) is read left
  column first, then right; lines spanning both (a title) are read where they stand;
- lines are joined into paragraphs (a new one after a larger gap, an indented first line, or a
  short line that ends a sentence), also across pages; a word hyphenated at a line's end is
  joined ("impor-" + "tant" → "important");
- chapters start at the PDF's outline (its bookmarks), else at lines set larger than the text
  or that read as headings ("Chapter 3").

A PDF with no text layer (a scan: its pages are pictures) is refused with a message: Audiopub
does no OCR.
"""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audiopub import settings
from audiopub.book.epub.archive import human_size
from audiopub.book.formats.assemble import BookText, TreeBuilder, build_book, is_heading_text
from audiopub.book.markup import clean_label
from audiopub.book.models import Book
from audiopub.errors import BadBook

__all__ = ["Line", "Page", "book_text", "read_pdf"]

_WORKER = Path(__file__).with_name("pdf_pages.py")
_FILE_GONE = 3  # pdf_pages' exit status when the book's file went away while it was read
MARGIN = 0.12  # the top and bottom share of a page where running heads and numbers sit
_PAGE_NUMBER = re.compile(
    r"^[\W_]*(?:page\s+|p\.\s*)?(?:\d{1,4}|[ivxlcdm]{1,8})(?:\s*(?:/|of)\s*\d{1,4})?[\W_]*$",
    re.IGNORECASE,
)
_EDGE_NUMBER = re.compile(r"^\d{1,4}\s+|\s+\d{1,4}$")
_SENTENCE_END = re.compile(r"[.!?:;…][\"'”’)\]]*$")
_HYPHENATED = re.compile(r"(?<=[^\W\d_])[-\u00ad]$")
HEADING_SIZE = 1.25  # a line this much larger than the text is a heading


@dataclass
class Line:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float


@dataclass
class Page:
    width: float
    height: float
    lines: list[Line]
    images: int = 0


@dataclass
class _Paragraph:
    text: str
    page: int
    size: float
    lines: int = 1
    heading: int = 0  # its heading level; 0: not a heading


def read_pdf(path: Path, name: str, stem: str) -> Book:
    size = path.stat().st_size
    if size > settings.PDF_MAX_BYTES:
        raise BadBook(
            f"{name}: refused: it is {human_size(size)}, over the "
            f"{human_size(settings.PDF_MAX_BYTES)} limit for a PDF"
        )
    found = _pages(path, name)
    pages = [
        Page(p["width"], p["height"], [Line(*line) for line in p["lines"]], p["images"])
        for p in found["pages"]
    ]
    outline = [(int(level), str(title), page) for level, title, page in found["outline"]]
    text = book_text(pages, outline, name)
    text.title = found.get("title")
    author = clean_label(found.get("author") or "")
    text.authors = (author,) if author else ()
    return build_book(text, name, stem)


def _pages(path: Path, name: str) -> dict[str, Any]:
    """What `pdf_pages` found, or `BadBook` saying why not."""
    seconds = settings.PDF_MAX_SECONDS
    try:
        done = subprocess.run(
            # -I: the script's folder (with this package's html.py) is not put on the path.
            [
                sys.executable,
                "-I",
                str(_WORKER),
                str(path),
                str(settings.PDF_MAX_PAGES),
                str(settings.PDF_MAX_MEMORY_BYTES),
                str(round(seconds)),
                str(os.getpid()),
            ],
            capture_output=True,
            timeout=seconds,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BadBook(_too_long(name, seconds)) from None
    if done.returncode == _FILE_GONE or not path.exists():
        raise BadBook(f"{name}: the file went away while it was read")
    if done.returncode == -getattr(signal, "SIGXCPU", 0):  # its own CPU limit stopped it
        raise BadBook(_too_long(name, seconds))
    try:
        found: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        found = {
            "error": "memory"
            if done.returncode < 0 or b"MemoryError" in done.stderr
            else "damaged",
            "detail": done.stderr.decode("utf-8", "replace").strip()[-300:],
        }
    error = found.get("error")
    if error == "encrypted":
        raise BadBook(f"{name} is password-protected; Audiopub can't read it")
    if error == "pages":
        raise BadBook(
            f"{name}: refused: it has more than {settings.PDF_MAX_PAGES:,} pages, far more "
            "than any real book"
        )
    if error == "memory":
        raise BadBook(
            f"{name}: refused: reading it needed more than "
            f"{human_size(settings.PDF_MAX_MEMORY_BYTES)} of memory (a damaged or hostile PDF?)"
        )
    if error or done.returncode != 0:
        detail = clean_label(str(found.get("detail") or ""))
        raise BadBook(f"{name}: the PDF is damaged and can't be read ({detail or 'no detail'})")
    return found


def _too_long(name: str, seconds: float) -> str:
    return (
        f"{name}: refused: reading its pages took over {seconds:.0f} s, far longer than "
        "any real book's (a damaged or hostile PDF?)"
    )


# --- from lines to paragraphs ---------------------------------------------------------------


def book_text(pages: list[Page], outline: list[tuple[int, str, int | None]], name: str) -> BookText:
    """The book's text from the lines of its pages; `outline`: (level, title, page index)."""
    if not any(page.lines for page in pages):
        if any(page.images for page in pages):
            raise BadBook(
                f"{name} has no text layer: its pages are pictures, as in a scan. Audiopub "
                "reads text and does no character recognition (OCR); a PDF run through an "
                "OCR program first (such as OCRmyPDF) can be read"
            )
        raise BadBook(f"{name} has no text to narrate")
    _drop_running_heads(pages)
    sizes = [line.size for page in pages for line in page.lines for _ in line.text]
    body_size = statistics.median(sizes) if sizes else 10.0
    paragraphs = _paragraphs(pages, body_size)
    structured = _place_outline(paragraphs, outline)
    builder = TreeBuilder()
    for paragraph in paragraphs:
        if paragraph.heading:
            builder.heading(paragraph.heading, paragraph.text)
        else:
            builder.paragraph(paragraph.text)
    return BookText(builder.root, structured=structured)


def _drop_running_heads(pages: list[Page]) -> None:
    """Lines in the margins that only number the page, or come back on several pages."""
    seen: dict[str, set[int]] = {}
    for number, page in enumerate(pages):
        for line in page.lines:
            if _in_margin(line, page):
                seen.setdefault(_head_key(line.text), set()).add(number)
    repeats = 2 if len(pages) < 6 else 3
    for page in pages:
        page.lines = [
            line
            for line in page.lines
            if not _in_margin(line, page)
            or not (
                _PAGE_NUMBER.match(line.text) or len(seen.get(_head_key(line.text), ())) >= repeats
            )
        ]


def _in_margin(line: Line, page: Page) -> bool:
    return line.y0 > page.height * (1 - MARGIN) or line.y1 < page.height * MARGIN


def _head_key(text: str) -> str:
    """A running head without its page number ("12 THE WAR OF THE WORLDS"); a heading's number
    stays ("CHAPTER 3" at the top of its first page is not a running head)."""
    text = clean_label(text).casefold()
    return text if is_heading_text(text.upper()) else _EDGE_NUMBER.sub("", text)


def _reading_order(page: Page) -> list[list[Line]]:
    """The page's lines in reading order, as runs of lines that read down one column."""
    lines = sorted(page.lines, key=lambda line: -line.y1)
    gutter = _gutter(page, lines)
    if gutter is None:
        return [lines]
    runs: list[list[Line]] = []
    left: list[Line] = []
    right: list[Line] = []
    for line in lines:
        if line.x1 <= gutter:
            left.append(line)
        elif line.x0 >= gutter:
            right.append(line)
        else:  # a line across both columns ends the columns above it
            runs.extend(run for run in (left, right) if run)
            runs.append([line])
            left, right = [], []
    runs.extend(run for run in (left, right) if run)
    return runs


def _gutter(page: Page, lines: list[Line]) -> float | None:
    """The x of a gap down the middle of the page that no line but a few spanning ones
    crosses, with text on both sides; None for a page in one column."""
    if len(lines) < 6:
        return None
    best: tuple[int, float] | None = None
    steps = 30
    for step in range(steps + 1):
        x = page.width * (0.35 + 0.3 * step / steps)
        crossing = sum(line.x0 < x < line.x1 for line in lines)
        if best is None or crossing < best[0]:
            best = (crossing, x)
    assert best is not None
    crossing, x = best
    left = sum(line.x1 <= x for line in lines)
    right = sum(line.x0 >= x for line in lines)
    if left >= 3 and right >= 3 and crossing <= 0.2 * len(lines):
        return x
    return None


def _paragraphs(pages: list[Page], body_size: float) -> list[_Paragraph]:
    out: list[_Paragraph] = []
    room = 0.0  # the space left at the end of the last line read, in its column
    for number, page in enumerate(pages):
        for run in _reading_order(page):
            left = min(line.x0 for line in run)
            right = max(line.x1 for line in run)
            previous: Line | None = None  # the top of a page or column: its indent tells
            for line in run:
                text = clean_label(line.text)
                large = line.size >= HEADING_SIZE * body_size and len(text) <= 120
                last = out[-1] if out else None
                if previous is not None:
                    room = right - previous.x1
                if last is not None and large and last.heading and previous is not None:
                    last.text = f"{last.text} {text}"  # a heading over two lines
                elif (
                    last is None
                    or large
                    or last.heading
                    or _starts_paragraph(line, previous, left, room, body_size, last.text)
                ):
                    heading = (1 if line.size >= 1.6 * body_size else 2) if large else 0
                    out.append(_Paragraph(text, number, line.size, heading=heading))
                else:
                    last.text = _joined(last.text, text)
                    last.lines += 1
                previous = line
            if previous is not None:
                room = right - previous.x1
    return out


def _starts_paragraph(
    line: Line, previous: Line | None, left: float, room: float, size: float, text: str
) -> bool:
    """Does `line` start a paragraph, after `text` (the paragraph so far, whose last line left
    `room` points free at its end)? Yes after a larger gap, at an indented line, or after a
    sentence that ended on a line with room left for this line's first word."""
    if is_heading_text(text):
        return True
    indented = line.x0 > left + size and (previous is None or previous.x0 <= left + size)
    if previous is not None and previous.y0 - line.y1 > 0.7 * min(
        previous.y1 - previous.y0, line.y1 - line.y0
    ):
        return True
    first_word = line.text.split(" ", 1)[0]
    word_width = (line.x1 - line.x0) / max(len(line.text), 1) * len(first_word)
    return indented or (room > word_width + size and _SENTENCE_END.search(text) is not None)


def _joined(text: str, line: str) -> str:
    """The next line read on; a word hyphenated at the end of the line is joined whole."""
    if _HYPHENATED.search(text):  # "Anglo-" + "Saxon" keeps its hyphen
        return text[:-1] + line if line[:1].islower() else text + line
    return f"{text} {line}"


def _place_outline(
    paragraphs: list[_Paragraph], outline: list[tuple[int, str, int | None]]
) -> bool:
    """Mark the paragraphs the outline's entries point at as headings, and only those: where
    the PDF has an outline, it says where chapters are, not type sizes. True if it had any."""
    placed: dict[int, int] = {}  # paragraph index → heading level
    for level, title, page in outline:
        wanted = clean_label(title).casefold()[:40]
        if page is None or not wanted:
            continue
        for index, paragraph in enumerate(paragraphs):
            if paragraph.page == page and paragraph.text.casefold().startswith(wanted):
                placed.setdefault(index, level)
                break
    if placed:
        for index, paragraph in enumerate(paragraphs):
            paragraph.heading = placed.get(index, 0)
    return bool(placed)
