"""Exports written to disk: each file atomically, so a file that exists is complete."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from audiopub.atomic import atomic_write
from audiopub.export.names import numbered
from audiopub.export.subtitles import Cue, book_cues, chapter_cues, to_srt, to_webvtt
from audiopub.export.timeline import book_timeline
from audiopub.jobs.store import JobStore

SUBTITLE_FORMATS: Final[dict[str, Callable[[Sequence[Cue]], str]]] = {
    "srt": to_srt, "vtt": to_webvtt}


def export_subtitles(store: JobStore, job_id: str, formats: Sequence[str], folder: Path,
                     stem: str, per_chapter: bool = False) -> list[Path]:
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
                written.append(_write(Path(folder) / f"{stem} chapters" / f"{name}.{fmt}",
                                      render(chapter_cues(chapter))))
    return written


def _write(path: Path, text: str) -> Path:
    with atomic_write(path) as temp:
        temp.write_text(text, encoding="utf-8", newline="\n")
    return path
