"""The finished books in Audiopub's library folder, as the Library page and its routes offer
them: the .m4b, its cover, its timings (for reading along, for subtitles) and the exports made
beside it on demand.

Blocking (files, the job store, ffmpeg for an export): call these through `run.io_bound`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from audiopub.book.models import Cover
from audiopub.errors import AudiopubError
from audiopub.export.audiobookshelf import export_audiobookshelf_zip
from audiopub.export.files import SUBTITLE_FORMATS, export_book_mp3, export_chapters_zip
from audiopub.export.read_aloud import export_read_aloud
from audiopub.export.subtitles import Cue, book_cues
from audiopub.export.timeline import book_timeline
from audiopub.jobs.models import Job, JobState
from audiopub.jobs.store import JobStore

# What the library offers besides the .m4b, and the name each gets beside it.
LIBRARY_EXPORTS: Final = {
    "epub": " (read-aloud).epub",
    "mp3": " chapters.zip",
    "m4a": " chapters (M4A).zip",
    "opus": " chapters (Opus).zip",
    "mp3-book": ".mp3",
    "audiobookshelf": " (Audiobookshelf).zip",
}
COVER_SUFFIXES: Final = {
    "image/jpeg": ".jpg",
    "image/png": ".png",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/svg+xml": ".svg",
}


class Library:
    """The books of `store`'s library folder (`folder`)."""

    def __init__(self, store: JobStore) -> None:
        self.store = store
        self.folder = store.library_dir

    def finished_book(self, job_id: str) -> Job:
        """The job of a finished book whose file exists (for the download routes)."""
        job = self.store.queue.get_job(job_id)
        if job.state is not JobState.DONE or not job.output_path.is_file():
            raise FileNotFoundError(f"Job {job_id} has no finished book")
        return job

    def book_cues(self, job_id: str) -> list[Cue]:
        """The finished book's sentences and when each is heard (for reading along); empty
        for a book finished before Audiopub kept timings."""
        try:
            return book_cues(book_timeline(self.store, job_id))
        except AudiopubError:
            return []

    def subtitles(self, job_id: str, fmt: str) -> str:
        """The finished book's subtitles as SRT or WebVTT text (AudiopubError if it has no
        timings)."""
        return SUBTITLE_FORMATS[fmt](book_cues(book_timeline(self.store, job_id)))

    def export_path(self, job: Job, kind: str) -> Path:
        """Where a library book's export of `kind` (see LIBRARY_EXPORTS) lives: beside its
        .m4b."""
        return job.output_path.with_name(job.output_path.stem + LIBRARY_EXPORTS[kind])

    def export_file(self, job_id: str, kind: str) -> Path:
        """The finished book's read-aloud EPUB ("epub"), one MP3 with chapters ("mp3-book"),
        a file per chapter in a zip ("mp3", "m4a", "opus") or its Audiobookshelf folder in a
        zip ("audiobookshelf"), made the first time it is asked for; AudiopubError if it can't
        be made."""
        job = self.finished_book(job_id)
        path = self.export_path(job, kind)
        if not path.is_file():
            if kind == "epub":
                export_read_aloud(self.store, job.id, path)
            elif kind == "audiobookshelf":
                export_audiobookshelf_zip(self.store, job.id, path)
            elif kind == "mp3-book":
                export_book_mp3(self.store, job.id, path.parent, job.output_path.stem)
            else:
                export_chapters_zip(self.store, job.id, kind, path)
        return path

    def cover_of(self, job: Job) -> Path | None:
        if not self.holds(job.output_path):
            return None
        return next(iter(_covers(job.output_path)), None)

    def holds(self, path: Path) -> bool:
        """Whether `path` is in the library folder (Audiopub's to delete)."""
        return path.resolve().parent == self.folder.resolve()

    def save_cover(self, cover: Cover, output: Path) -> None:
        """Keep the book's cover beside its .m4b, for the page to show."""
        suffix = COVER_SUFFIXES.get(cover.media_type)
        if suffix is None:
            return  # an image type browsers may not show; the .m4b still carries it
        output.with_name(f"{output.stem}-cover{suffix}").write_bytes(cover.data)

    def remove_files(self, job: Job) -> None:
        """The book's .m4b, its covers and its exports."""
        job.output_path.unlink(missing_ok=True)
        for cover in _covers(job.output_path):
            cover.unlink(missing_ok=True)
        for kind in LIBRARY_EXPORTS:
            self.export_path(job, kind).unlink(missing_ok=True)


def _covers(output: Path) -> list[Path]:
    return [
        output.with_name(f"{output.stem}-cover{s}")
        for s in COVER_SUFFIXES.values()
        if output.with_name(f"{output.stem}-cover{s}").is_file()
    ]
