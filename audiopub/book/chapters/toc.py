"""Tables of contents, and cutting a book's paragraphs into chapters where they point.

The TOC comes from the EPUB3 nav document or the EPUB2 NCX. Both nest; every entry (at any
depth) is kept in document order with its parent, because not every entry starts a
chapter (see `starts_chapter`). Hrefs are resolved to manifest paths (relative to the OPF
folder, percent-decoded) so they can be compared with the spine.

The reader turns the spine into a stream of `Block`s (paragraphs) with a `Mark` wherever a
chapter-starting entry points; `cut_chapters` makes chapters of it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

from lxml import etree

from audiopub.book.chapters.front_matter import is_front_matter
from audiopub.book.markup import clean_label, local_name
from audiopub.book.models import Chapter

XHTML_NS = "http://www.w3.org/1999/xhtml"
NCX_NS = "http://www.daisy.org/z3986/2005/ncx/"
EPUB_NS = "http://www.idpf.org/2007/ops"

URL_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
# "I", "II.", "12", "(3)": labels that number a section of their parent rather than name it.
_SECTION_NUMBER = re.compile(r"^[(\[]?(?:[0-9]{1,3}|[IVXLCDM]{1,7}|[ivxlcdm]{1,7})[.)\]]?$")


@dataclass(frozen=True)
class TocEntry:
    title: str
    path: str | None  # manifest path of the target document; None for a label without link
    fragment: str | None  # id inside that document; None for the document start
    parent: int | None  # index of the parent entry in the flat list


def epub_types(el: etree._Element) -> set[str]:
    """The epub:type tokens of an element (namespaced, or a literal prefix in recovered HTML)."""
    value = el.get(f"{{{EPUB_NS}}}type") or el.get("epub:type") or ""
    return set(value.split())


def resolve_href(href: str, base_dir: str) -> tuple[str, str | None] | None:
    """'text/ch1.xhtml#c%40p' seen from `base_dir` → ('OEBPS/text/ch1.xhtml', 'c@p').

    Returns None for links that leave the book (http:, mailto:) or are empty.
    """
    href = href.strip()
    if not href or URL_SCHEME.match(href):
        return None
    path, _, fragment = href.partition("#")
    if not path:
        return None  # a bare "#id" inside a nav doc points at the nav doc itself
    path = posixpath.normpath(posixpath.join(base_dir, unquote(path)))
    return path, (unquote(fragment) or None)


def nav_entries(root: etree._Element, base_dir: str) -> list[TocEntry]:
    """Entries of the first `<nav epub:type="toc">` (or role="doc-toc") in a nav document."""
    navs = [el for el in root.iter(f"{{{XHTML_NS}}}nav", "nav") if _is_toc_nav(el)]
    if not navs:
        return []
    entries: list[TocEntry] = []
    top = _first_child(navs[0], "ol", "ul")
    if top is not None:
        _walk_nav_list(top, base_dir, None, entries)
    return entries


def _is_toc_nav(el: etree._Element) -> bool:
    return "toc" in epub_types(el) or el.get("role") == "doc-toc"


def _first_child(el: etree._Element, *names: str) -> etree._Element | None:
    return next((child for child in el if local_name(child) in names), None)


def _walk_nav_list(
    ol: etree._Element, base_dir: str, parent: int | None, out: list[TocEntry]
) -> None:
    for li in ol:
        if local_name(li) != "li":
            continue
        label = _first_child(li, "a", "span")
        target = None
        if label is not None and local_name(label) == "a":
            target = resolve_href(label.get("href", ""), base_dir)
        title = clean_label("".join(label.itertext())) if label is not None else ""
        path, fragment = target or (None, None)
        out.append(TocEntry(title, path, fragment, parent))
        sub = _first_child(li, "ol", "ul")
        if sub is not None:
            _walk_nav_list(sub, base_dir, len(out) - 1, out)


def ncx_entries(root: etree._Element, base_dir: str) -> list[TocEntry]:
    """Entries of an NCX navMap, nested navPoints flattened in document order."""
    nav_map = root.find(f"{{{NCX_NS}}}navMap")
    if nav_map is None:
        nav_map = root.find("navMap")  # an NCX without its namespace
    entries: list[TocEntry] = []
    if nav_map is not None:
        _walk_nav_points(nav_map, base_dir, None, entries)
    return entries


def _walk_nav_points(
    el: etree._Element, base_dir: str, parent: int | None, out: list[TocEntry]
) -> None:
    for point in el:
        if local_name(point) != "navPoint":
            continue
        label = _first_child(point, "navLabel")
        content = _first_child(point, "content")
        title = clean_label("".join(label.itertext())) if label is not None else ""
        target = resolve_href(content.get("src", ""), base_dir) if content is not None else None
        path, fragment = target or (None, None)
        out.append(TocEntry(title, path, fragment, parent))
        _walk_nav_points(point, base_dir, len(out) - 1, out)


def is_section_number(title: str) -> bool:
    return bool(_SECTION_NUMBER.match(title.strip()))


def starts_chapter(entries: list[TocEntry], index: int) -> bool:
    """Does this entry begin a chapter of its own?

    A sub-entry labelled only with a number ("I.", "II", "3") that points into its parent's
    document is a numbered section of that text (Sherlock Holmes' "I./II./III." inside a story,
    the parts of a Poe poem): it stays inside the parent's chapter.
    """
    entry = entries[index]
    if entry.path is None:
        return False
    if entry.parent is not None and is_section_number(entry.title):
        return entries[entry.parent].path != entry.path
    return True


def display_title(entries: list[TocEntry], index: int) -> str:
    """The entry's label; a bare section number gets its parent's name ("Part One: II")."""
    entry = entries[index]
    if entry.parent is not None and is_section_number(entry.title):
        parent = entries[entry.parent].title
        if parent:
            return f"{parent}: {entry.title}"
    return entry.title


# --- cutting the paragraph stream into chapters ---------------------------------------------


@dataclass
class Block:
    """One paragraph as found in the XHTML, on its way to becoming chapter text."""

    text: str  # whitespace-collapsed, typography intact (used for titles)
    heading: bool = False
    skipped: bool = False  # left out on purpose (boilerplate, printed TOC, back matter)
    spoken: str = ""  # `text` after normalise_text; "" when nothing is left to say
    front: bool = False  # inside a title page, half-title or dedication (by its epub:type)


@dataclass(frozen=True)
class Mark:
    entry: int  # index into the TOC entries: a chapter starts here


def chapter_targets(
    entries: list[TocEntry], doc_paths: list[str], known: set[str], notes: list[str]
) -> tuple[list[TocEntry], dict[str, dict[str, list[int]]]]:
    """Where chapters start: {document path: {target id ("" = top of file): [entry, …]}}.

    Without a usable TOC every document becomes a chapter (titled later by its first heading),
    and the entries returned are made up for that.
    """
    starts = [i for i in range(len(entries)) if starts_chapter(entries, i)]
    for i in starts:
        if entries[i].path not in known:
            notes.append(
                f"The table of contents entry “{entries[i].title}” points to "
                f"{entries[i].path}, which is not in the book; it was ignored."
            )
    if not any(entries[i].path in doc_paths for i in starts):
        entries = [TocEntry("", path, None, None) for path in doc_paths]
        starts = list(range(len(entries)))
    targets: dict[str, dict[str, list[int]]] = {}
    for i in starts:
        by_id = targets.setdefault(entries[i].path or "", {})
        by_id.setdefault(entries[i].fragment or "", []).append(i)
    return entries, targets


@dataclass
class _Draft:
    entry: int | None  # None: text before the first TOC entry
    blocks: list[Block] = field(default_factory=list)


def cut_chapters(
    stream: list[Block | Mark],
    entries: list[TocEntry],
    book_title: str,
    notes: list[str],
    titles: Sequence[str] = (),
    authors: Sequence[str] = (),
) -> list[Chapter]:
    """Chapters from the stream; those with nothing to say are dropped (with a note, unless
    they only held matter skipped on purpose, like the PG licence or a colophon). Title pages
    and dedications are marked `front_matter` (`titles`: all the titles the package gives)."""
    drafts = [_Draft(None)]
    for item in stream:
        if isinstance(item, Block):
            drafts[-1].blocks.append(item)
        elif not _continues(drafts[-1], item.entry, entries):
            drafts.append(_Draft(item.entry))
    chapters: list[Chapter] = []
    for draft in drafts:
        kept = [b for b in draft.blocks if not b.skipped]
        title = _chapter_title(draft, kept, entries, book_title, len(chapters))
        spoken = [b for b in kept if b.spoken]
        paragraphs = tuple(b.spoken for b in spoken)
        if paragraphs:
            label = entries[draft.entry].title if draft.entry is not None else ""
            front = is_front_matter(
                label, paragraphs, all(b.front for b in spoken), [book_title, *titles], authors
            )
            chapters.append(Chapter(len(chapters), title, paragraphs, front))
        elif draft.entry is not None and len(kept) == len(draft.blocks):
            notes.append(f"Left out “{title}”: it has no text to narrate.")
    return chapters


def _continues(draft: _Draft, entry: int, entries: list[TocEntry]) -> bool:
    """Does the chapter being built absorb this entry instead of ending at it?

    Yes when the entry sits at the same spot in the same file (several entries, one start), or
    when it is a sub-entry in its parent's file and the parent so far is only its heading (Just
    So Stories' sentence-long sub-entry right under "HOW THE CAMEL GOT HIS HUMP").
    """
    if draft.entry is None or entries[draft.entry].path != entries[entry].path:
        return False
    if not draft.blocks:
        return True
    return entries[entry].parent == draft.entry and all(b.heading for b in draft.blocks)


def _chapter_title(
    draft: _Draft, kept: list[Block], entries: list[TocEntry], book_title: str, position: int
) -> str:
    heading = next((b.text for b in kept if b.heading and b.spoken), "")
    if draft.entry is None:  # a title page or preface before the first TOC entry
        return heading or book_title
    return display_title(entries, draft.entry) or heading or f"Chapter {position + 1}"
