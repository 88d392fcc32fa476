"""EPUB 3 read-aloud books (Media Overlays) from a finished job, without speaking anything again.

The book is the job's copy of the EPUB with, added: every narrated sentence of its pages in a
`<span>` with an id; one SMIL file per page, a `<par>` per sentence pointing at its span and at
its clip of the chapter's audio; the chapters' audio (AAC in .m4a, or MP3), made from the
job's kept audio; the metadata and CSS that reading systems with Media Overlays (Thorium
Reader, Apple Books) play it with, highlighting the sentence being read (or the word, where
its words' times are known).

  pages      the book's pages as text: where a piece of text lies in them, the spans around it;
  alignment  where each narrated sentence lies in the pages, and which clip of audio reads it;
  package    the EPUB written out: pages with spans, SMIL, CSS, nav document, OPF;
  html5      an EPUB 2 book's XHTML 1.1 pages as the HTML5 an EPUB 3 book needs.

An EPUB 2 book comes out as EPUB 3, with a nav document made from its NCX.
"""

from __future__ import annotations

import logging
import posixpath
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from audiopub.atomic import scratch_dir
from audiopub.audio.ffmetadata import book_tags
from audiopub.book.epub.archive import EpubArchive
from audiopub.book.epub.package import read_package
from audiopub.errors import AudiopubError
from audiopub.export.chapter_audio import chapter_wavs
from audiopub.export.encode import encode_audio
from audiopub.export.read_aloud.alignment import place
from audiopub.export.read_aloud.package import write_book
from audiopub.export.read_aloud.pages import read_pages
from audiopub.export.timeline import book_timeline
from audiopub.jobs.book_plan import stored_book
from audiopub.jobs.store import JobStore

log = logging.getLogger(__name__)

AUDIO: Final = {"m4a": ("audio/mp4", ".m4a"), "mp3": ("audio/mpeg", ".mp3")}
FOLDER: Final = "read-aloud"  # where the added files go, beside the OPF


@dataclass(frozen=True)
class ReadAloud:
    path: Path
    placed: int  # sentences found in the pages, highlighted as they are read
    sentences: int
    word_by_word: int = 0  # of those placed, the sentences highlighted word by word


def export_read_aloud(
    store: JobStore,
    job_id: str,
    out: Path,
    audio_format: str = "m4a",
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> ReadAloud:
    """Write the finished job's book as an EPUB 3 with Media Overlays at `out` (atomically),
    its chapter audio in `audio_format` (m4a or mp3). `progress(done, total)` after each
    chapter's audio."""
    media_type, suffix = AUDIO[audio_format]
    job = store.queue.get_job(job_id)
    chapters = book_timeline(store, job_id)
    book = stored_book(store, job)
    if not job.epub_path.is_file():
        raise AudiopubError(
            f"The copy of “{job.title}” kept with the job is gone "
            f"({job.epub_path}): convert the book again to export it"
        )
    width = max(2, len(str(len(chapters))))
    audio_paths = [f"{FOLDER}/audio/{ch.number:0{width}d}{suffix}" for ch in chapters]
    with EpubArchive(job.epub_path) as archive:
        package = read_package(archive)
        opf_dir = posixpath.dirname(package.opf_path)
        folder = _free_folder(archive, opf_dir)
        audio_paths = [path.replace(FOLDER, folder, 1) for path in audio_paths]
        pages = read_pages(archive, package)
        placed, total, word_by_word = place(chapters, pages, audio_paths)
        if not placed:
            raise AudiopubError(
                f"None of the narrated text of “{job.title}” was found in the "
                "pages of its EPUB, so no sentence can be highlighted"
            )
        if placed < total:
            log.warning(
                "%s: %d of %d sentences were not found in the pages; they play with "
                "the sentence before them",
                job.title,
                total - placed,
                total,
            )
        with tempfile.TemporaryDirectory(prefix="audiopub-read-aloud-", dir=scratch_dir()) as tmp:
            wavs = chapter_wavs(store, job_id, Path(tmp))
            encoded = []
            for chapter, wav in zip(chapters, wavs):
                path = Path(tmp) / f"{chapter.number:0{width}d}{suffix}"
                tags = book_tags(
                    book,
                    job.settings.narrator,
                    title=chapter.title,
                    track=f"{chapter.number}/{len(chapters)}",
                )
                encode_audio([wav], path, audio_format, tags, None)
                encoded.append(path)
                progress(chapter.number, len(chapters))
            write_book(
                out,
                archive,
                package,
                folder,
                pages,
                book.language,
                list(zip(audio_paths, encoded)),
                media_type,
            )
    return ReadAloud(Path(out), placed, total, word_by_word)


def _free_folder(archive: EpubArchive, opf_dir: str) -> str:
    """`read-aloud`, or `read-aloud-2`… if the book already has files there."""
    names = archive.names()
    folder, number = FOLDER, 1
    while any(name.startswith(posixpath.join(opf_dir, folder) + "/") for name in names):
        number += 1
        folder = f"{FOLDER}-{number}"
    return folder
