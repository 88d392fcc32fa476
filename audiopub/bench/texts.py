"""What the benchmark reads: three text sizes, and synthetic books of any length.

The sizes follow Supertonic's published benchmark (short ~60, mid ~150, long ~270 characters),
so the tables line up with the numbers people already quote.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from audiopub.book.reading import read_book

TEXTS_LANGUAGE: Final = "en"  # of the texts below
TEXTS: Final = {
    "short": "The lighthouse keeper climbed the stairs before the storm came.",
    "mid": (
        "Nobody in the village remembered a winter as long as that one, and the old men "
        "at the harbour said that the grey sea itself had forgotten how to thaw."
    ),
    "long": (
        "She folded the letter twice and hid it under the loose floorboard, where the "
        "children would never think of looking. Then she lit the lamp, set the kettle "
        "on the stove, and waited for the sound of the cart on the frozen road, as she "
        "had done every evening since early October."
    ),
}
SIZES: Final = tuple(TEXTS)

CHAPTER_CHARS: Final = 20_000  # a typical novel chapter; synthetic books are cut into these
MAX_SENTENCE_CHARS: Final = 68  # below Supertonic's 70-character chunk limit

# Words for synthetic prose: common, easy to pronounce, every character in every engine's
# alphabet. Random sentences (not repeated paragraphs) so that no two chunks share a cache
# key: identical chunks are synthesised once per job, which would flatter any large-book run.
_WORDS: Final = tuple(
    sorted(set(" ".join(TEXTS.values()).lower().replace(",", "").replace(".", "").split()))
)


def synthetic_paragraphs(chars: int, seed: int = 0) -> list[str]:
    """Paragraphs of random sentences totalling at least `chars` characters, reproducibly. The
    last paragraph ends with the sentence that reaches `chars`: a small measurement reads about
    what it asked for (`--chars 20` read a whole paragraph of ~200 before)."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    total = 0
    while total < chars:
        sentences: list[str] = []
        for _ in range(rng.randint(2, 6)):
            sentences.append(_sentence(rng))
            total += len(sentences[-1]) + (len(sentences) > 1)  # the space before it
            if total >= chars:
                break
        paragraphs.append(" ".join(sentences))
    return paragraphs


def _sentence(rng: random.Random) -> str:
    # Short enough for every engine's chunk limit, so no sentence is cut into small pieces
    # (a tail like "stove." would repeat across the book).
    while True:
        sentence = " ".join(rng.choices(_WORDS, k=rng.randint(5, 11))).capitalize() + "."
        if len(sentence) <= MAX_SENTENCE_CHARS:
            return sentence


def source_paragraphs(epub: Path, chars: int) -> list[str]:
    """Paragraphs of a real book in reading order, until `chars` characters (the book is
    read again from the start if it is shorter: its chunks then repeat, see above)."""
    pool = [p for chapter in read_book(epub).chapters for p in chapter.paragraphs]
    if not pool:
        raise ValueError(f"{epub} holds no text")
    paragraphs: list[str] = []
    total = 0
    while total < chars:
        paragraph = pool[len(paragraphs) % len(pool)]
        paragraphs.append(paragraph)
        total += len(paragraph)
    return paragraphs


def chapters_of(paragraphs: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Cut paragraphs into chapters of about CHAPTER_CHARS characters."""
    chapters: list[tuple[str, list[str]]] = []
    current: list[str] = []
    size = 0
    for paragraph in paragraphs:
        current.append(paragraph)
        size += len(paragraph)
        if size >= CHAPTER_CHARS:
            chapters.append((f"Chapter {len(chapters) + 1}", current))
            current, size = [], 0
    if current:
        chapters.append((f"Chapter {len(chapters) + 1}", current))
    return chapters


def write_simple_epub(
    path: Path,
    chapters: Sequence[tuple[str, Sequence[str]]],
    *,
    identifier: str,
    title: str,
    author: str,
    language: str = "en",
    cover: bytes | None = None,
) -> Path:
    """An EPUB 3 (nav + NCX) with one XHTML file per chapter: an <h1>, then one <p> per
    paragraph. Paragraphs are markup, inserted as they are (escape plain text first)."""
    from ebooklib import epub  # only to write a book: ~10 ms that `audiopub --help` skips

    book = epub.EpubBook()
    book.set_identifier(identifier)
    book.set_title(title)
    book.set_language(language)
    book.add_author(author)
    if cover is not None:
        book.set_cover("cover.png", cover)
    items = []
    for number, (heading, paragraphs) in enumerate(chapters, start=1):
        item = epub.EpubHtml(title=heading, file_name=f"chapter{number}.xhtml", lang=language)
        body = "".join(f"<p>{p}</p>" for p in paragraphs)
        item.content = f"<html><body><h1>{heading}</h1>{body}</body></html>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    epub.write_epub(str(path), book)
    return path


def write_book(path: Path, chars: int, source: Path | None = None, seed: int = 0) -> Path:
    """An EPUB of about `chars` characters (from `source`, else synthetic prose), plus
    `path.txt`: the text Audiopub narrates, paragraphs separated by blank lines, which is the
    input format of scripts/piper_tts_loop.py, so both read exactly the same words."""
    paragraphs = (
        source_paragraphs(source, chars)
        if source is not None
        else synthetic_paragraphs(chars, seed)
    )
    chapters = [(title, [_escape(p) for p in body]) for title, body in chapters_of(paragraphs)]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_simple_epub(
        path,
        chapters,
        identifier=f"audiopub-bench-{chars}-{seed}",
        title=f"Benchmark book, {chars:,} characters",
        author="Audiopub bench",
    )
    narrated = [p for chapter in read_book(path).chapters for p in chapter.paragraphs]
    path.with_suffix(".txt").write_text("\n\n".join(narrated) + "\n", encoding="utf-8")
    return path


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
