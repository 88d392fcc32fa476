"""The forms a finished book is made in besides its .m4b: other audio forms, subtitles and the
read-aloud EPUB, from the job's kept audio (no second synthesis).

They are chosen on the command line (`audiopub convert --format mp3 --split chapters
--subtitles srt,vtt --read-along`) or on the page, kept with the job as data, and made beside
the book once it is finished.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audiopub.audio.loudness import AUDIOBOOK
from audiopub.errors import AudiopubError
from audiopub.export.command import print_progress
from audiopub.export.encode import AUDIO_FORMATS
from audiopub.export.files import SUBTITLE_FORMATS, export_audio, export_book_mp3, export_subtitles
from audiopub.export.read_aloud import export_read_aloud
from audiopub.jobs.store import JobStore

SPLITS = ("none", "chapters")
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ConvertOutputs:
    """The forms asked for (on the command line or the page), checked before any audio is made."""

    audio_format: str  # "m4b" (the book alone) or one of export.encode.AUDIO_FORMATS
    split: str  # "none" or "chapters"
    subtitles: tuple[str, ...]
    read_along: bool

    @staticmethod
    def checked(
        audio_format: str = "m4b",
        split: str = "none",
        subtitles: Sequence[str] = (),
        read_along: bool = False,
    ) -> ConvertOutputs:
        """The forms, or AudiopubError saying why they can't be made together (the command
        line and the web page refuse a combination with the same words)."""
        subtitles = tuple(dict.fromkeys(subtitles))
        unknown = [name for name in subtitles if name not in SUBTITLE_FORMATS]
        if unknown:
            raise AudiopubError(
                f"--subtitles takes {', '.join(SUBTITLE_FORMATS)}, not {', '.join(unknown)}"
            )
        if audio_format not in ("m4b", *AUDIO_FORMATS) or split not in SPLITS:
            raise AudiopubError(f"No such form: {audio_format}, split {split}")
        if split == "chapters" and audio_format == "m4b":
            raise AudiopubError(
                "An .m4b is one file with chapters: for a file per chapter, "
                "choose --format m4a, mp3, mp3-cbr or opus"
            )
        if split == "none" and audio_format not in ("m4b", "mp3"):
            raise AudiopubError(
                f"One {audio_format} file for the whole book is not "
                "supported yet: use --split chapters, or --format mp3 or m4b"
            )
        return ConvertOutputs(audio_format, split, subtitles, read_along)

    @property
    def anything(self) -> bool:
        """Whether anything is asked for besides the .m4b."""
        return self != ConvertOutputs.checked()

    def to_dict(self) -> dict[str, Any]:
        return {
            "audio_format": self.audio_format,
            "split": self.split,
            "subtitles": list(self.subtitles),
            "read_along": self.read_along,
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> ConvertOutputs:
        """As stored with a job; checked again (AudiopubError if no longer possible)."""
        return ConvertOutputs.checked(
            str(data.get("audio_format", "m4b")),
            str(data.get("split", "none")),
            tuple(data.get("subtitles", ())),
            bool(data.get("read_along", False)),
        )


def make_outputs(
    store: JobStore, job_id: str, outputs: ConvertOutputs, progress: Progress = print_progress
) -> list[Path]:
    """The forms `outputs` asks for, beside the finished book, with its name; every file
    written (those per chapter in `<stem> chapters/`). `progress(done, total)` as files are
    made."""
    job = store.queue.get_job(job_id)
    folder, stem = job.output_path.parent, job.output_path.stem
    made: list[Path] = []
    if outputs.split == "chapters":
        made += export_audio(store, job_id, outputs.audio_format, folder, stem, progress, AUDIOBOOK)
    elif outputs.audio_format == "mp3":
        made.append(export_book_mp3(store, job_id, folder, stem, AUDIOBOOK))
    if outputs.subtitles:
        made += export_subtitles(
            store,
            job_id,
            list(outputs.subtitles),
            folder,
            stem,
            per_chapter=outputs.split == "chapters",
        )
    if outputs.read_along:
        made.append(
            export_read_aloud(
                store, job_id, folder / f"{stem} (read-aloud).epub", "m4a", progress
            ).path
        )
    return made
