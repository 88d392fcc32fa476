"""The bundled ffmpeg: where it is, how to run it, how its errors read, and what it reads back
from a file.

ffmpeg comes from imageio-ffmpeg (a static build), so nothing needs to be installed. `probe`
asks it for a media file's duration, chapters, tags, cover and audio format.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import imageio_ffmpeg

from audiopub.audio.ffmetadata import ChapterMark, parse_ffmetadata
from audiopub.errors import DiskFull, MuxFailed

# How much of ffmpeg's stderr goes into an error message.
STDERR_TAIL_LINES: Final = 15
# What ffmpeg prints (from strerror) when a write fails for want of space.
NO_SPACE: Final = os.strerror(errno.ENOSPC)


def ffmpeg_exe() -> str:
    """Path of the ffmpeg binary bundled with imageio-ffmpeg."""
    try:
        return imageio_ffmpeg.get_ffmpeg_exe()
    except RuntimeError as error:
        raise MuxFailed(f"ffmpeg is not available: {error}") from error


def run_ffmpeg(args: Sequence[str], what: str) -> str:
    """Run the bundled ffmpeg with `args` (no banner, no prompt, no progress lines) and return
    what it printed; MuxFailed("Could not <what> …", with its last lines) if it fails."""
    cmd = [ffmpeg_exe(), "-hide_banner", "-nostdin", "-nostats", *args]
    result = subprocess.run(
        cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace"
    )
    if result.returncode != 0:
        check_space(result.stderr, what)
        raise MuxFailed(
            f"Could not {what} (ffmpeg exited with code {result.returncode})."
            f"\nffmpeg said:\n{stderr_tail(result.stderr)}"
        )
    return result.stderr


def check_space(stderr: str, what: str, path: Path | None = None) -> None:
    """DiskFull if a failed ffmpeg run says the disk is full: that is no fault of the job's,
    which pauses instead of failing."""
    if NO_SPACE in stderr:
        raise DiskFull(f"The disk filled up while ffmpeg tried to {what}.", path)


def stderr_tail(stderr: str) -> str:
    """The last lines ffmpeg printed, for an error message."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    return "\n".join(lines[-STDERR_TAIL_LINES:]) or "(ffmpeg printed nothing)"


@dataclass(frozen=True)
class ProbeResult:
    """What ffmpeg reads back from a finished file."""

    duration_s: float
    chapters: list[ChapterMark] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    has_cover: bool = False
    audio_codec: str = ""
    sample_rate: int = 0
    audio_language: str = ""  # the audio stream's ISO 639-2 code; "und" when not stated


_DURATION_RE = re.compile(r"Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)")
# "Stream #0:0[0x1](fra): Audio: aac (LC) …": the language in brackets, where the file has one.
_AUDIO_RE = re.compile(r"Stream #\d+:\d+(?:\[\w+\])?(?:\((\w+)\))?\S*: Audio: (\w+)(.*)")
_SAMPLE_RATE_RE = re.compile(r"(\d+) Hz")
_COVER_RE = re.compile(r"Stream #\d+:\d+\S*: Video: .*\(attached pic\)")


def _input_section(stderr: str) -> str:
    """The part of ffmpeg's stderr that describes the input file, not the output."""
    return re.split(r"^(?:Output #0|Stream mapping:)", stderr, maxsplit=1, flags=re.M)[0]


def _parse_stream_info(stderr: str) -> tuple[float, str, int, bool, str]:
    """(duration_s, audio codec, sample rate, has attached picture, audio language) from
    `ffmpeg -i` output."""
    info = _input_section(stderr)
    duration = 0.0
    if match := _DURATION_RE.search(info):
        hours, minutes, seconds = match.groups()
        duration = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    codec, sample_rate, language = "", 0, ""
    if match := _AUDIO_RE.search(info):
        language, codec = match.group(1) or "", match.group(2)
        if rate := _SAMPLE_RATE_RE.search(match.group(3)):
            sample_rate = int(rate.group(1))
    return duration, codec, sample_rate, bool(_COVER_RE.search(info)), language


def probe(path: Path) -> ProbeResult:
    """Duration, chapters, tags, cover and audio format of a media file, as ffmpeg sees it."""
    cmd = [ffmpeg_exe(), "-hide_banner", "-nostdin", "-loglevel", "info"]
    cmd += ["-i", os.path.abspath(path), "-f", "ffmetadata", "-"]
    try:
        result = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)
    except OSError as error:
        raise MuxFailed(f"Could not run ffmpeg to read {Path(path).name}: {error}") from error
    stdout = result.stdout.decode("utf-8", errors="replace")
    stderr = result.stderr.decode("utf-8", errors="replace")
    if result.returncode != 0:
        raise MuxFailed(
            f"ffmpeg could not read {Path(path).name} (exit code {result.returncode}).\n"
            f"ffmpeg said:\n{stderr_tail(stderr)}"
        )
    tags, chapters = parse_ffmetadata(stdout)
    duration, codec, sample_rate, has_cover, language = _parse_stream_info(stderr)
    return ProbeResult(duration, chapters, tags, has_cover, codec, sample_rate, language)
