"""Which chapters are only the book's front matter: listed, but not narrated unless asked for.

A title page, a half-title or a dedication is not a chapter a listener wants to hear: the
audiobook's own title says the title, and a few seconds of "Frankenstein;" before "Letter 1"
sound like a mistake. They stay in the chapter list, unticked (the page and `convert` agree,
through `Book.default_selection`).

A chapter is front matter when
- the book marks it so: epub:type `titlepage`, `halftitlepage` or `dedication` (or the role
  `doc-dedication`) on what holds all its text, or its TOC label says so ("Titlepage",
  "Dedication"); or
- it is short and only says the book's title, and perhaps who wrote it: Project Gutenberg's
  title pages, even when the TOC splits the title over two entries ("Frankenstein;" and
  "or, the Modern Prometheus" / "by Mary Wollstonecraft (Godwin) Shelley").

Kept as chapters: epigraphs (narrators read them: they belong to the text) and part pages that
hold only a heading ("Book I: The Coming of the Martians"), which announce the part the next
chapters belong to.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

__all__ = ["FRONT_MATTER_TYPES", "is_front_matter"]

FRONT_MATTER_TYPES = frozenset({"titlepage", "halftitlepage", "dedication"})
FRONT_MATTER_ROLES = frozenset({"doc-dedication"})
# TOC labels that name a title page or a dedication.
_LABEL = re.compile(r"^\W*(?:(?:half[- ]?)?title[- ]?page|half[- ]?title|dedication)\W*$", re.I)
# Longer than this, a chapter says more than a title (Frankenstein's second part is 64).
MAX_TITLE_CHARS = 200
# "by Mary Shelley", "par Victor Hugo", "von Goethe": a byline under the title.
_BYLINE = re.compile(r"^\W*(?:by|par|von|por|di|da|de|door|av|af|przez)\s+\S", re.I)
_MAX_BYLINE_WORDS = 10


def _words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.findall(r"\w+", text)


def is_front_matter(
    label: str,
    paragraphs: Sequence[str],
    marked: bool,
    book_titles: Iterable[str],
    authors: Iterable[str] = (),
) -> bool:
    """Is the chapter (TOC `label`, its `paragraphs`; `marked`: all its text sits in an
    element with a front-matter epub:type) a title page, half-title or dedication?"""
    if marked or _LABEL.match(label):
        return True
    if not paragraphs or sum(map(len, paragraphs)) > MAX_TITLE_CHARS:
        return False
    title_words = {word for title in book_titles for word in _words(title)}
    author_words = {word for author in authors for word in _words(author)}
    said_title = False
    for paragraph in paragraphs:
        words = _words(paragraph)
        if words and set(words) <= title_words:
            said_title = True
        elif not (
            words
            and (
                set(words) <= author_words
                or (_BYLINE.match(paragraph) and len(words) <= _MAX_BYLINE_WORDS)
            )
        ):
            return False
    return said_title
