"""EPUB 3 read-aloud books (Media Overlays) from a finished job, without speaking anything again.

The book is the job's copy of the EPUB with, added: every narrated sentence of its pages in a
`<span>` with an id; one SMIL file per page, a `<par>` per sentence pointing at its span and at
its clip of the chapter's audio; the chapters' audio (AAC in .m4a, or MP3), made from the
job's kept audio; the metadata and CSS that reading systems with Media Overlays (Thorium
Reader, Apple Books) play it with, highlighting the sentence being read.

Timing, as in the subtitles (`export.subtitles`), whose cues the sentences are made of (a
long sentence has several cues, and is highlighted whole unless its words are timed):
  exact      where each chunk's speech starts and ends in its chapter's audio;
  exact      where each word starts, in a chunk whose words' times are known: its sentences
             start at their first word, and are highlighted word by word (`overlay_words`);
  estimated  where a sentence starts and ends inside any other chunk of several sentences:
             the chunk's time shared among them in proportion to their characters.
A clip runs on to where the next sentence (or word) starts, so the pauses between sentences and
paragraphs are heard as recorded (reading systems skip what lies between two clips).

A chapter may cover several pages, or a page several chapters: each clip names its chapter's
audio file and is timed from that file's start. The sentences are found in the pages by
`overlay_align`; a sentence that can't be found plays with the one before it.

An EPUB 2 book comes out as EPUB 3 (`overlay_package`), with a nav document made from its NCX.
"""

from __future__ import annotations

import bisect
import logging
import posixpath
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lxml import etree

from audiopub.atomic import atomic_write, scratch_dir
from audiopub.audio.ffmetadata import BookTags
from audiopub.book import toc
from audiopub.book.archive import MIMETYPE, EpubArchive
from audiopub.book.package import NCX_TYPE, Item, Package, read_package
from audiopub.book.safe_xml import parse_markup, parse_xml
from audiopub.errors import AudiopubError
from audiopub.export.chapter_audio import chapter_wavs
from audiopub.export.encode import encode_audio
from audiopub.export.overlay_align import align
from audiopub.export.overlay_docs import (
    HIGHLIGHT_CSS,
    XHTML_HEADER,
    Par,
    href,
    nav_document,
    smil_document,
)
from audiopub.export.overlay_html5 import make_html5
from audiopub.export.overlay_package import (
    SMIL_TYPE,
    Addition,
    ids_in,
    is_epub2,
    page_properties,
    rewrite_package,
    unique_id,
)
from audiopub.export.overlay_text import Fragment, Page, skeleton
from audiopub.export.overlay_words import clip_pars, word_fragments, word_pars
from audiopub.export.subtitles import Cue, sentence_cues
from audiopub.export.timeline import ChapterTimeline, book_timeline
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import stored_book
from audiopub.settings import EPUB_MAX_DOCUMENT_BYTES

log = logging.getLogger(__name__)

AUDIO: Final = {"m4a": ("audio/mp4", ".m4a"), "mp3": ("audio/mpeg", ".mp3")}
FOLDER: Final = "read-aloud"  # where the added files go, beside the OPF


@dataclass(frozen=True)
class ReadAloud:
    path: Path
    placed: int  # sentences found in the pages, highlighted as they are read
    sentences: int
    word_by_word: int = 0  # of those placed, the sentences highlighted word by word


@dataclass
class _Page:
    item: Item
    root: etree._Element
    text: Page
    base: int  # where its skeleton starts in the book's
    fragments: list[Fragment]
    pars: list[Par]


def export_read_aloud(store: JobStore, job_id: str, out: Path, audio_format: str = "m4a",
                      progress: Callable[[int, int], None] = lambda done, total: None
                      ) -> ReadAloud:
    """Write the finished job's book as an EPUB 3 with Media Overlays at `out` (atomically),
    its chapter audio in `audio_format` (m4a or mp3). `progress(done, total)` after each
    chapter's audio."""
    media_type, suffix = AUDIO[audio_format]
    job = store.queue.get_job(job_id)
    chapters = book_timeline(store, job_id)
    book = stored_book(store, job)
    if not job.epub_path.is_file():
        raise AudiopubError(f"The copy of “{job.title}” kept with the job is gone "
                            f"({job.epub_path}): convert the book again to export it")
    width = max(2, len(str(len(chapters))))
    audio_paths = [f"{FOLDER}/audio/{ch.number:0{width}d}{suffix}" for ch in chapters]
    with EpubArchive(job.epub_path) as archive:
        package = read_package(archive)
        opf_dir = posixpath.dirname(package.opf_path)
        folder = _free_folder(archive, opf_dir)
        audio_paths = [path.replace(FOLDER, folder, 1) for path in audio_paths]
        pages = _pages(archive, package)
        placed, total, word_by_word = _place(chapters, pages, audio_paths)
        if not placed:
            raise AudiopubError(f"None of the narrated text of “{job.title}” was found in the "
                                "pages of its EPUB, so no sentence can be highlighted")
        if placed < total:
            log.warning("%s: %d of %d sentences were not found in the pages; they play with "
                        "the sentence before them", job.title, total - placed, total)
        with tempfile.TemporaryDirectory(prefix="audiopub-read-aloud-", dir=scratch_dir()) as tmp:
            wavs = chapter_wavs(store, job_id, Path(tmp))
            encoded = []
            for chapter, wav in zip(chapters, wavs):
                path = Path(tmp) / f"{chapter.number:0{width}d}{suffix}"
                tags = BookTags(title=chapter.title, author=book.author, album=book.title,
                                track=f"{chapter.number}/{len(chapters)}",
                                language=book.language)
                encode_audio([wav], path, audio_format, tags, None)
                encoded.append(path)
                progress(chapter.number, len(chapters))
            _write(out, archive, package, folder, pages, book.language,
                   list(zip(audio_paths, encoded)), media_type)
    return ReadAloud(Path(out), placed, total, word_by_word)


def _free_folder(archive: EpubArchive, opf_dir: str) -> str:
    """`read-aloud`, or `read-aloud-2`… if the book already has files there."""
    names = archive.names()
    folder, number = FOLDER, 1
    while any(name.startswith(posixpath.join(opf_dir, folder) + "/") for name in names):
        number += 1
        folder = f"{FOLDER}-{number}"
    return folder


def _pages(archive: EpubArchive, package: Package) -> list[_Page]:
    """The reading order's pages that can be read, parsed (the nav document is not one)."""
    pages, base, seen = [], 0, set()
    for idref, linear in package.spine:
        item = package.items.get(idref)
        if item is None or not linear or item.is_nav or not item.is_html or item.path is None \
                or idref in seen:
            continue
        seen.add(idref)
        root = _parsed(archive, item)
        if root is None:
            continue
        text = Page(root)
        pages.append(_Page(item, root, text, base, [], []))
        base += len(text.skeleton)
    return pages


def _parsed(archive: EpubArchive, item: Item) -> etree._Element | None:
    """An XHTML item's tree, or None where the reader could not have read it either."""
    try:
        if item.path is None or archive.size(item.path) > EPUB_MAX_DOCUMENT_BYTES:
            return None
        return parse_markup(archive.read(item.path))
    except (KeyError, AudiopubError):
        return None


def _place(chapters: list[ChapterTimeline], pages: list[_Page],
           audio_paths: list[str]) -> tuple[int, int, int]:
    """Find every sentence in the pages; give each page its fragments and their clips.
    Returns (sentences placed, sentences with words: "..." has no place and needs none,
    sentences placed word by word)."""
    # A sentence is highlighted whole, from its first cue's start: a long one has several
    # subtitle cues (the lines a player shows), but it is one thing to follow while reading.
    # Or word by word, where its words' times are exact (every cue of it has them).
    sentences = [(number, cues[0].start_s, " ".join(" ".join(cue.text.split()) for cue in cues),
                  _word_starts(cues))
                 for number, chapter in enumerate(chapters)
                 for cues in sentence_cues(chapter)]
    book_skeleton = "".join(page.text.skeleton for page in pages)
    spans = align([text for _, _, text, _ in sentences], book_skeleton,
                  [number for number, _, _, _ in sentences])
    starts = [page.base for page in pages]
    prefix = _id_prefix(pages)
    found: list[tuple[int, float, list[Fragment], _Page,
                      tuple[list[list[Fragment]], tuple[float, ...]] | None]] = []
    for index, ((chapter, start_s, text, words_s), span) in enumerate(zip(sentences, spans)):
        if span is None:
            continue
        page = pages[bisect.bisect_right(starts, span[0]) - 1]
        words = word_fragments(page.text, page.base, span, text, words_s, book_skeleton,
                               f"{prefix}{index + 1}")
        if words is not None and words_s is not None:
            found.append((chapter, start_s, [f for word in words for f in word], page,
                          (words, words_s)))
            continue
        end = min(span[1], page.base + len(page.text.skeleton))
        fragments = page.text.fragments(span[0] - page.base, end - page.base,
                                        f"{prefix}{index + 1}")
        if fragments:
            found.append((chapter, start_s, fragments, page, None))
    first_start = {}
    for chapter, start_s, _, _ in reversed(sentences):
        first_start[chapter] = start_s
    for i, (chapter, start_s, fragments, page, by_word) in enumerate(found):
        following = found[i + 1] if i + 1 < len(found) else None
        first_of_chapter = i == 0 or found[i - 1][0] != chapter
        # The first clip of a chapter starts with its first sentence, found or not; every clip
        # runs on to the next found sentence (the pause after it, and any sentence not found).
        begin = first_start[chapter] if first_of_chapter else start_s
        end_s = (following[1] if following and following[0] == chapter
                 else chapters[chapter].duration_s)
        page.fragments.extend(fragments)
        if by_word is not None:
            page.pars.extend(word_pars(by_word[0], by_word[1], audio_paths[chapter],
                                       round(begin * 1000), round(end_s * 1000)))
        else:
            page.pars.extend(clip_pars(fragments, audio_paths[chapter], round(begin * 1000),
                                   round(end_s * 1000)))
    return (len(found), sum(1 for _, _, text, _ in sentences if skeleton(text)),
            sum(1 for entry in found if entry[4] is not None))


def _word_starts(cues: list[Cue]) -> tuple[float, ...] | None:
    """The sentence's word times, where every cue of it has them."""
    if any(cue.word_starts_s is None for cue in cues):
        return None
    return tuple(start for cue in cues for start in cue.word_starts_s or ())


def _id_prefix(pages: list[_Page]) -> str:
    """An id prefix no page uses yet, so the sentences' ids are new in every page."""
    taken = set().union(*(ids_in(page.root) for page in pages)) if pages else set()
    prefix = "ap-s"
    while any(name.startswith(prefix) for name in taken):
        prefix = f"a{prefix}"
    return prefix


def _write(out: Path, archive: EpubArchive, package: Package, folder: str,
           pages: list[_Page], language: str | None, audio: list[tuple[str, Path]],
           media_type: str) -> None:
    """The source's files with the changed pages, OPF and the added files, as a new EPUB."""
    opf_dir = posixpath.dirname(package.opf_path)
    opf_root = _opf_tree(archive, package)
    upgrade = is_epub2(opf_root)
    taken = ids_in(opf_root)
    css = f"{folder}/read-aloud.css"
    replaced: dict[str, bytes] = {}  # by path in the book
    added: dict[str, bytes | Path] = {css: HIGHLIGHT_CSS}
    additions = [Addition(unique_id(taken, "read-aloud-css"), css, "text/css")]
    overlays, durations, properties = {}, {}, {}
    span = "span"
    for number, page in enumerate((p for p in pages if p.pars), start=1):
        namespace = page.root.tag.partition("}")[0][1:] if page.root.tag.startswith("{") else ""
        span = f"{{{namespace}}}span" if namespace else "span"
        page.text.wrap(page.text.widen(page.fragments), span)
        _link_css(page.root, href(css, posixpath.dirname(page.item.name)), namespace)
        replaced[page.item.path] = XHTML_HEADER + etree.tostring(page.root, encoding="utf-8")
        smil = f"{folder}/{number:03d}.smil"
        smil_id = unique_id(taken, f"overlay-{number:03d}")
        # A clip must not end where it begins (EPUBCheck MED-009): a fragment whose share of
        # its sentence's clip rounds to no millisecond is left without a highlight of its own.
        added[smil] = smil_document(page.item.name, smil, [
            Par(p.fragment, p.audio, p.begin_ms, p.end_ms) for p in page.pars
            if p.end_ms > p.begin_ms])
        additions.append(Addition(smil_id, smil, SMIL_TYPE))
        overlays[page.item.id] = smil_id
        durations[smil_id] = sum(p.end_ms - p.begin_ms for p in page.pars)
    for number, (path, file) in enumerate(audio, start=1):
        added[path] = file
        additions.append(Addition(unique_id(taken, f"read-aloud-audio-{number}"), path,
                                  media_type))
    if upgrade:
        properties = _upgrade_pages(archive, package, pages, replaced)
    if not any(item.is_nav for item in package.items.values()):
        nav = f"{folder}/nav.xhtml"
        title = next((value for value, _ in package.dc.get("title", []) if value), "Contents")
        added[nav] = nav_document(_toc_entries(archive, package, pages), nav, title, language)
        additions.append(Addition(unique_id(taken, "nav"), nav, "application/xhtml+xml",
                                  frozenset({"nav"})))
    replaced[package.opf_path] = rewrite_package(opf_root, additions, overlays, durations,
                                                 properties)
    # A book that has overlays already gets these instead: its own SMIL files are left out.
    dropped = {item.path for item in package.items.values() if item.media_type == SMIL_TYPE}
    with atomic_write(out) as temp, zipfile.ZipFile(temp, "w") as zf:
        # The mimetype first and stored, so the file is recognised by its first bytes.
        zf.writestr(zipfile.ZipInfo("mimetype"), MIMETYPE, compress_type=zipfile.ZIP_STORED)
        for name in archive.names():
            if name != "mimetype" and name not in dropped:
                data = replaced[name] if name in replaced else archive.read(name)
                zf.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
        for path, content in added.items():
            name = posixpath.join(opf_dir, path)
            if isinstance(content, Path):  # audio: compressed already
                zf.write(content, name, compress_type=zipfile.ZIP_STORED)
            else:
                zf.writestr(name, content, compress_type=zipfile.ZIP_DEFLATED)


def _opf_tree(archive: EpubArchive, package: Package) -> etree._Element:
    data = archive.read(package.opf_path)
    try:
        return parse_xml(data)
    except etree.XMLSyntaxError:
        root = parse_markup(data)  # read_package recovered it already, so this succeeds
        assert root is not None
        return root


def _link_css(root: etree._Element, url: str, namespace: str) -> None:
    head = next((el for el in root if toc.local_name(el) == "head"), None)
    if head is not None:
        tag = f"{{{namespace}}}link" if namespace else "link"
        etree.SubElement(head, tag, {"rel": "stylesheet", "type": "text/css", "href": url})


def _upgrade_pages(archive: EpubArchive, package: Package, pages: list[_Page],
                   replaced: dict[str, bytes]) -> dict[str, set[str]]:
    """EPUB 2 pages as EPUB 3 wants them: an HTML5 doctype, and the properties of what they
    hold. Returns the properties by item id."""
    parsed = {page.item.id: page.root for page in pages}
    properties = {}
    for item in package.items.values():
        if not item.is_html or item.path is None:
            continue
        root = parsed.get(item.id)
        if root is None:
            root = _parsed(archive, item)
            if root is None:
                continue
        make_html5(root)
        replaced[item.path] = XHTML_HEADER + etree.tostring(root, encoding="utf-8")
        properties[item.id] = page_properties(root)
    return properties


def _toc_entries(archive: EpubArchive, package: Package,
                 pages: list[_Page]) -> list[toc.TocEntry]:
    """The NCX's entries, or one per page when it has none."""
    for item in package.items.values():
        if item.media_type != NCX_TYPE or item.path is None:
            continue
        root = _parsed(archive, item)
        entries = toc.ncx_entries(root, posixpath.dirname(item.name)) if root is not None else []
        if entries:
            return entries
    return [toc.TocEntry(_page_title(page.root) or f"Part {number}", page.item.name, None, None)
            for number, page in enumerate(pages, start=1)]


def _page_title(root: etree._Element) -> str:
    title = next((el for el in root.iter() if toc.local_name(el) in ("title", "h1", "h2")),
                 None)
    return toc.clean_label("".join(title.itertext())) if title is not None else ""
