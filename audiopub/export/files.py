"""Exports written to disk: each file atomically, so a file that exists is complete.

Beside the audiobook, with its name, so players find them: `<stem>.srt`; per chapter, in
`<stem> chapters/`, named to sort in reading order: `01 - Loomings.mp3`, `01 - Loomings.srt`.
"""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from audiopub.atomic import atomic_write, scratch_dir
from audiopub.audio.ffmetadata import book_tags
from audiopub.audio.loudness import AUDIOBOOK, LoudnessTarget
from audiopub.audio.mux import chapter_marks
from audiopub.export.chapter_audio import chapter_wavs
from audiopub.export.encode import AUDIO_FORMATS, encode_audio
from audiopub.export.names import numbered, safe_name
from audiopub.export.subtitles import Cue, book_cues, chapter_cues, to_srt, to_webvtt
from audiopub.export.timeline import book_timeline
from audiopub.jobs.book_plan import stored_book
from audiopub.jobs.store import JobStore

SUBTITLE_FORMATS: Final[dict[str, Callable[[Sequence[Cue]], str]]] = {
    "srt": to_srt,
    "vtt": to_webvtt,
}


def export_subtitles(
    store: JobStore,
    job_id: str,
    formats: Sequence[str],
    folder: Path,
    stem: str,
    per_chapter: bool = False,
) -> list[Path]:
    """Write `<stem>.<format>` for the whole book into `folder` (the audiobook's own stem by
    default, so players pick the subtitles up beside it) and, with `per_chapter`, one file
    per chapter on the chapter's own clock into `folder/<stem> chapters/`. Returns the paths."""
    chapters = book_timeline(store, job_id)
    written = []
    for fmt in formats:
        render = SUBTITLE_FORMATS[fmt]
        written.append(_write(Path(folder) / f"{stem}.{fmt}", render(book_cues(chapters))))
        if per_chapter:
            for chapter in chapters:
                name = numbered(chapter.number, len(chapters), chapter.title)
                written.append(
                    _write(
                        Path(folder) / f"{stem} chapters" / f"{name}.{fmt}",
                        render(chapter_cues(chapter)),
                    )
                )
    return written


def export_audio(
    store: JobStore,
    job_id: str,
    format_name: str,
    folder: Path,
    stem: str,
    progress: Callable[[int, int], None] = lambda done, total: None,
    loudness: LoudnessTarget | None = AUDIOBOOK,
) -> list[Path]:
    """One audio file per chapter in `folder/<stem> chapters/`, tagged, with the cover; from
    the chapter audio, kept or made again from the chunks (nothing is spoken again).
    `progress(done, total)` after each file. Returns the paths."""
    job = store.queue.get_job(job_id)
    book = stored_book(store, job)
    chapters = store.ledger.chapters(job_id)
    suffix = AUDIO_FORMATS[format_name].suffix
    written = []
    with tempfile.TemporaryDirectory(prefix="audiopub-chapters-", dir=scratch_dir()) as tmp:
        wavs = chapter_wavs(store, job_id, Path(tmp))
        for number, (chapter, wav) in enumerate(zip(chapters, wavs), start=1):
            tags = book_tags(
                book, job.settings.narrator, title=chapter.title, track=f"{number}/{len(chapters)}"
            )
            path = (
                Path(folder)
                / f"{stem} chapters"
                / f"{numbered(number, len(chapters), chapter.title)}{suffix}"
            )
            encode_audio([wav], path, format_name, tags, book.cover, loudness=loudness)
            written.append(path)
            progress(number, len(chapters))
    return written


def export_chapters_zip(store: JobStore, job_id: str, format_name: str, path: Path) -> Path:
    """The per-chapter files of `export_audio` in one zip at `path` (atomically), in a folder
    named after the book: one download for a browser."""
    job = store.queue.get_job(job_id)
    folder = safe_name(job.title, "Audiobook")
    with tempfile.TemporaryDirectory(prefix="audiopub-zip-", dir=scratch_dir()) as tmp:
        files = export_audio(store, job_id, format_name, Path(tmp), folder)
        with atomic_write(path) as temp, zipfile.ZipFile(temp, "w", zipfile.ZIP_STORED) as out:
            for file in files:  # already compressed audio: stored, not deflated again
                out.write(file, f"{folder}/{file.name}")
    return path


def export_book_mp3(
    store: JobStore,
    job_id: str,
    folder: Path,
    stem: str,
    loudness: LoudnessTarget | None = AUDIOBOOK,
) -> Path:
    """The whole book as `folder/<stem>.mp3` (VBR), with ID3v2 chapters, tags and cover, for
    players that take no .m4b."""
    job = store.queue.get_job(job_id)
    book = stored_book(store, job)
    titles = [chapter.title for chapter in store.ledger.chapters(job_id)]
    path = Path(folder) / f"{stem}.mp3"
    with tempfile.TemporaryDirectory(prefix="audiopub-book-", dir=scratch_dir()) as tmp:
        wavs = chapter_wavs(store, job_id, Path(tmp))
        tags = book_tags(book, job.settings.narrator)
        encode_audio(wavs, path, "mp3", tags, book.cover, chapter_marks(titles, wavs), loudness)
    return path


def _write(path: Path, text: str) -> Path:
    with atomic_write(path) as temp:
        temp.write_text(text, encoding="utf-8", newline="\n")
    return path
