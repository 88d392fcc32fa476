"""Chapter WAVs in, one chapterised, tagged .m4b with cover art out (ffmpeg does the work).

One ffmpeg run encodes and muxes: the chapter WAVs arrive through the concat demuxer, tags and
chapter marks through an ffmetadata file (`ffmetadata`), and the cover as an attached picture.
The book is read back (`ffmpeg.probe`) before it is put in place.

Container: ffmpeg's `ipod` muxer with the major brand forced to `M4B `. It is the muxer
ffmpeg itself uses for .m4a/.m4b, it writes chapters twice (a QuickTime chapter track and a
Nero `chpl` atom, so Apple and non-Apple players both see them) and the cover as a `covr`
atom; the `mp4` muxer does the same but brands the file `isom`.
"""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Final

import soundfile as sf

from audiopub.atomic import atomic_write, remove_stale_temp_files, scratch_dir
from audiopub.audio.cover_art import EMBEDDED_SIDE, fit_cover, fits
from audiopub.audio.ffmetadata import BookTags, ChapterMark, build_ffmetadata, stream_language
from audiopub.audio.ffmpeg import check_space, ffmpeg_exe, probe, stderr_tail
from audiopub.book.models import Cover, sniff_image_type
from audiopub.errors import MuxFailed
from audiopub.settings import AAC_BITRATE

# The tags and chapter marks are what `mux_m4b` takes, so they are offered here too.
__all__ = ["BookTags", "ChapterMark", "chapter_marks", "mux_m4b"]

log = logging.getLogger(__name__)

OUTPUT_FORMAT: Final = "ipod"
M4B_BRAND: Final = "M4B "  # four characters; the space is part of the brand

# ffmpeg's native AAC encoder has two coders. Measured on 10 min of real Piper speech at
# 64 kb/s mono (ffmpeg 9.0.2): "fast" encodes 2.5x (22.05 kHz) to 3.9x (44.1 kHz) faster
# than the default "twoloop" (230x vs 89x and 207x vs 54x real time), is as close or closer
# to the source below 8 kHz where speech lives, and only slightly worse above it. A 10-hour
# book then encodes in about 3 minutes instead of up to 11.
AAC_CODER: Final = "fast"

# How far the written book's length may stray from the chapter WAVs' total: AAC works in
# frames of 1024 samples and ffmpeg reports durations to 10 ms, so this is generous.
DURATION_TOLERANCE_S: Final = 0.5


# ---------------------------------------------------------------------------------------------
# Chapter marks


def chapter_marks(titles: Sequence[str], chapter_wavs: Sequence[Path]) -> list[ChapterMark]:
    """Back-to-back chapter marks from the exact length of each chapter WAV."""
    if len(titles) != len(chapter_wavs):
        raise ValueError(f"{len(titles)} titles for {len(chapter_wavs)} chapter files")
    marks = []
    start = 0.0
    for title, wav in zip(titles, chapter_wavs):
        end = start + _wav_seconds(wav)
        marks.append(ChapterMark(title, start, end))
        start = end
    return marks


# ---------------------------------------------------------------------------------------------
# The ffmpeg command


def concat_list_entry(path: Path) -> str:
    """One `file '...'` line of a concat list; a quote in the path becomes '\\''."""
    text = os.path.abspath(path)
    if "\n" in text or "\r" in text:
        raise ValueError(f"a concat list can't hold a path with a line break: {text!r}")
    return "file '" + text.replace("'", "'\\''") + "'"


def write_concat_list(chapter_wavs: Sequence[Path], list_path: Path) -> None:
    lines = ["ffconcat version 1.0"] + [concat_list_entry(p) for p in chapter_wavs]
    list_path.write_text(
        "\n".join(lines) + "\n", encoding="utf-8", errors="surrogateescape", newline="\n"
    )


def build_mux_command(
    ffmpeg: str,
    concat_list: Path,
    metadata: Path,
    cover: Path | None,
    out_path: Path,
    bitrate: str,
    aac_coder: str = AAC_CODER,
    language: str | None = None,
) -> list[str]:
    """The ffmpeg command that encodes and muxes the book (progress goes to stdout);
    `language`: the audio stream's ISO 639-2 code (players pick and label tracks by it)."""
    cmd = [ffmpeg, "-hide_banner", "-nostdin", "-loglevel", "error", "-y"]
    # -xerror: without it a damaged chapter WAV only logs an error and the book comes out
    # short, with exit code 0.
    cmd += ["-xerror", "-progress", "pipe:1", "-nostats"]
    cmd += ["-f", "concat", "-safe", "0", "-i", os.path.abspath(concat_list)]
    cmd += ["-f", "ffmetadata", "-i", os.path.abspath(metadata)]
    if cover is not None:
        cmd += ["-i", os.path.abspath(cover)]
    cmd += ["-map", "0:a"]
    if cover is not None:
        cmd += ["-map", "2:v"]
    cmd += ["-map_metadata", "1", "-map_chapters", "1"]
    if language is not None:
        cmd += ["-metadata:s:a:0", f"language={language}"]
    cmd += ["-c:a", "aac", "-aac_coder", aac_coder, "-b:a", bitrate]
    if cover is not None:
        cmd += ["-c:v", "copy", "-disposition:v:0", "attached_pic"]
    cmd += ["-movflags", "+faststart", "-brand", M4B_BRAND, "-f", OUTPUT_FORMAT]
    cmd += [os.path.abspath(out_path)]
    return cmd


# ---------------------------------------------------------------------------------------------
# Cover art


def _ffmpeg_succeeds(cmd: list[str]) -> bool:
    result = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)
    return result.returncode == 0


_NO_COVER = "the audiobook will have no cover"


def prepare_cover(ffmpeg: str, cover: Cover, folder: Path) -> Path | None:
    """Write the cover into `folder` as JPEG or PNG, ready to attach; None if unusable.

    A JPEG or PNG that fits `EMBEDDED_SIDE` is copied as it is; a larger one is scaled down to
    fit, and anything else (GIF, WebP...) is converted to PNG, so no book carries a 100 MB
    picture. An image too large to decode or that ffmpeg can't read is left out with a
    warning rather than failing the book.
    """
    if not cover.data:
        return None
    if not fits(cover, EMBEDDED_SIDE):
        return fit_cover(ffmpeg, cover, EMBEDDED_SIDE, folder / "cover", _NO_COVER)
    kind = "jpg" if sniff_image_type(cover.data) == "image/jpeg" else "png"
    path = folder / f"cover.{kind}"
    path.write_bytes(cover.data)
    check = [
        ffmpeg,
        "-hide_banner",
        "-nostdin",
        "-loglevel",
        "error",
        "-y",
        "-i",
        str(path),
        "-frames:v",
        "1",
        "-f",
        "null",
        "-",
    ]
    if _ffmpeg_succeeds(check):
        return path
    log.warning("The cover image (%s) is damaged; %s.", kind, _NO_COVER)
    return None


# ---------------------------------------------------------------------------------------------
# Running ffmpeg


def _mux_failed(name: str, reason: str, stderr: str) -> MuxFailed:
    return MuxFailed(
        f"Could not write the audiobook {name}: {reason}.\nffmpeg said:\n{stderr_tail(stderr)}"
    )


def _report_progress(
    stdout: Iterable[str], total_s: float, progress: Callable[[float], None] | None
) -> None:
    """Read ffmpeg's `-progress` lines and report the fraction encoded (0..1)."""
    for line in stdout:
        key, _, value = line.strip().partition("=")
        if progress is None:
            continue
        if key == "out_time_us" and value.isdigit() and total_s > 0:
            progress(min(1.0, int(value) / 1_000_000 / total_s))
        elif key == "progress" and value == "end":
            progress(1.0)


def _run_ffmpeg(
    cmd: list[str],
    stderr_path: Path,
    total_s: float,
    progress: Callable[[float], None] | None,
) -> tuple[int, str]:
    """Run ffmpeg to completion; returns (exit code, stderr). Kills it if `progress` raises."""
    with open(stderr_path, "wb") as stderr_file:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr_file,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        finished = False
        try:
            _report_progress(proc.stdout or (), total_s, progress)
            proc.wait()
            finished = True
        finally:
            if not finished:  # e.g. the job was cancelled from the progress callback
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
    stderr = stderr_path.read_text(encoding="utf-8", errors="replace")
    return proc.returncode, stderr


def _wav_seconds(path: Path) -> float:
    """Exact length of a chapter WAV from its header; MuxFailed if it can't be read."""
    try:
        info = sf.info(str(path))
    except (RuntimeError, OSError) as error:  # soundfile's LibsndfileError is a RuntimeError
        raise MuxFailed(f"Chapter audio {Path(path).name} can't be read: {error}") from error
    return info.frames / info.samplerate


def _encode(
    cmd: list[str],
    folder: Path,
    written: Path,
    name: str,
    expected_s: float,
    progress: Callable[[float], None] | None,
) -> None:
    """Run the mux command and check its result; MuxFailed unless `written` is complete.

    `name` is the book's file name, for messages.
    """
    try:
        returncode, stderr = _run_ffmpeg(cmd, folder / "stderr.txt", expected_s, progress)
    except OSError as error:
        raise MuxFailed(f"Could not start ffmpeg to write {name}: {error}") from error
    if returncode != 0:
        check_space(stderr, f"write the audiobook {name}", written.parent)
        raise _mux_failed(name, f"ffmpeg exited with code {returncode}", stderr)
    if not written.is_file():
        raise _mux_failed(name, "ffmpeg wrote no file", stderr)
    # Belt and braces: a book that silently lost audio is worse than an error.
    written_s = probe(written).duration_s
    if abs(written_s - expected_s) > DURATION_TOLERANCE_S:
        reason = f"it holds {written_s:.1f} s of audio instead of {expected_s:.1f} s"
        raise _mux_failed(name, reason, stderr)


def mux_m4b(
    chapter_wavs: Sequence[Path],
    chapters: Sequence[ChapterMark],
    tags: BookTags,
    cover: Cover | None,
    out_path: Path,
    bitrate: str = AAC_BITRATE,
    *,
    progress: Callable[[float], None] | None = None,
) -> None:
    """Encode the chapter WAVs (in order) into a chapterised, tagged .m4b at `out_path`.

    `out_path` appears only once complete: ffmpeg writes a temp file beside it (`atomic_write`),
    which is renamed on success and removed on failure. `progress`, if given, is called with the
    fraction encoded so far (0..1); an exception it raises stops ffmpeg and propagates.
    Raises MuxFailed if a chapter WAV is missing or unreadable, or ffmpeg fails; DiskFull
    if it fails for want of space.
    """
    if not chapter_wavs:
        raise MuxFailed("There is no chapter audio to put in the audiobook.")
    expected_s = sum(_wav_seconds(wav) for wav in chapter_wavs)
    metadata_text = build_ffmetadata(tags, chapters)

    out_path = Path(out_path)
    ffmpeg = ffmpeg_exe()
    # An attempt cut short by a crash may have left its temp file; this one replaces it.
    remove_stale_temp_files(out_path.parent, out_path.name)

    # In this process's scratch folder, which a crash does not leave behind for good.
    with tempfile.TemporaryDirectory(prefix="mux-", dir=scratch_dir()) as tmp:
        folder = Path(tmp)
        concat_list = folder / "chapters.ffconcat"
        metadata = folder / "metadata.txt"
        write_concat_list(chapter_wavs, concat_list)
        metadata.write_text(metadata_text, encoding="utf-8", newline="\n")
        cover_path = prepare_cover(ffmpeg, cover, folder) if cover is not None else None
        with atomic_write(out_path) as temp_path:
            cmd = build_mux_command(
                ffmpeg,
                concat_list,
                metadata,
                cover_path,
                temp_path,
                bitrate,
                language=stream_language(tags.language),
            )
            _encode(cmd, folder, temp_path, out_path.name, expected_s, progress)
