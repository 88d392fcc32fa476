"""`audiopub export JOB`: subtitles and per-chapter audio files of a finished book."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from audiopub.audio.loudness import AUDIOBOOK
from audiopub.errors import AudiopubError
from audiopub.export.audiobookshelf import export_audiobookshelf
from audiopub.export.encode import AUDIO_FORMATS
from audiopub.export.files import (
    SUBTITLE_FORMATS,
    export_audio,
    export_book_mp3,
    export_subtitles,
)
from audiopub.export.read_aloud import export_read_aloud
from audiopub.jobs.store import JobStore

DEFAULT_FORMATS = ("srt", "vtt")
BOOK_MP3 = "mp3-book"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job_id", help="the job's id (a unique prefix is enough)")
    parser.add_argument(
        "--format",
        dest="formats",
        action="append",
        choices=sorted([*SUBTITLE_FORMATS, *AUDIO_FORMATS, BOOK_MP3, "epub"]),
        help="repeatable. Subtitles: srt, vtt (the default: both). One audio file per chapter: "
        "mp3 (VBR), mp3-cbr (192 kb/s, 44.1 kHz, as distributors ask), opus, m4a. The "
        "whole book in one MP3 with chapters: mp3-book. epub: the book read aloud "
        "(EPUB 3 Media Overlays), sentences highlighted",
    )
    parser.add_argument(
        "--per-chapter",
        action="store_true",
        help="subtitles for each chapter file too, timed from its start",
    )
    parser.add_argument(
        "--epub-audio",
        choices=["m4a", "mp3"],
        default="m4a",
        help="the audio inside the read-aloud EPUB: m4a (AAC, the default) or mp3",
    )
    parser.add_argument(
        "-o",
        "--output-dir",
        type=Path,
        help="where to write (default: beside the audiobook, with its name)",
    )
    parser.add_argument(
        "--loudness",
        choices=("audiobook", "off"),
        default="audiobook",
        help="audio files at -20 LUFS with peaks under -3 dB, as audiobook "
        "distributors ask (the default), or as the voice made them",
    )
    parser.add_argument(
        "--audiobookshelf",
        type=Path,
        metavar="LIBRARY",
        help="put the book in this Audiobookshelf library folder, as "
        "Author/[Series/]Title/ with its cover and metadata",
    )


def main(args: argparse.Namespace) -> int:
    with JobStore.open_default() as store:
        job = store.queue.find_job(args.job_id)
        folder = args.output_dir or job.output_path.parent
        stem = job.output_path.stem
        loudness = AUDIOBOOK if args.loudness == "audiobook" else None
        asked = args.formats or ([] if args.audiobookshelf else DEFAULT_FORMATS)
        formats = list(dict.fromkeys(asked))  # each once, in order
        if {"mp3", "mp3-cbr"} <= set(formats):
            raise AudiopubError("mp3 and mp3-cbr write the same files: choose one")
        subtitles = [f for f in formats if f in SUBTITLE_FORMATS]
        if subtitles:
            for path in export_subtitles(store, job.id, subtitles, folder, stem, args.per_chapter):
                print(path)
        for format_name in (f for f in formats if f in AUDIO_FORMATS):
            for path in export_audio(
                store, job.id, format_name, folder, stem, print_progress, loudness
            ):
                print(path)
        if BOOK_MP3 in formats:
            print(export_book_mp3(store, job.id, folder, stem, loudness))
        if args.audiobookshelf:
            print(export_audiobookshelf(store, job.id, args.audiobookshelf))
        if "epub" in formats:
            made = export_read_aloud(
                store,
                job.id,
                Path(folder) / f"{stem} (read-aloud).epub",
                args.epub_audio,
                print_progress,
            )
            print(made.path)
            if made.word_by_word:
                print(
                    f"  {made.word_by_word} of {made.placed} sentences are highlighted word "
                    "by word (the rest whole: their words' times are not known)"
                )
            if made.placed < made.sentences:
                print(
                    f"  {made.sentences - made.placed} of {made.sentences} sentences were not "
                    "found in the pages: each plays with the sentence before it",
                    file=sys.stderr,
                )
    return 0


def print_progress(done: int, total: int) -> None:
    """Chapters encoded so far, on one line of standard error."""
    print(f"  {done}/{total} chapters", end="\n" if done == total else "\r", file=sys.stderr)
