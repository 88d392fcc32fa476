"""Chapter WAVs → one tagged audio file with its cover, in the format a person asked for: a
chapter's file, or the whole book in one MP3 with chapters.

Formats, each chosen for audiobooks of speech in one voice:

    mp3       MP3, VBR quality 5 (LAME's -V5, about 65 kb/s for mono speech): small, and
              plays everywhere
    mp3-cbr   MP3 at 192 kb/s constant bit rate and 44.1 kHz: what audiobook distributors
              ask for
    opus      Opus at 48 kb/s in Ogg: the best quality for its size, for players that have it
    m4a       AAC in MP4 at the .m4b's bit rate, one file per chapter

Tags players use: title = the chapter's, album = the book's title, artist and album artist =
the author, track = n/N, genre, language; the cover as an attached picture (a
METADATA_BLOCK_PICTURE comment in Opus, whose container has no picture streams). Tags travel in
an ffmetadata file, so a long value (the cover, in Opus) never meets the command line's limits.
Loudness: brought to the audiobook standard by default (`audio.loudness`), peaks held by a
limiter; a lossy encoder still overshoots what it is given (MP3 by up to 3 dB on a click), so
the file made is measured as a player decodes it (true peak) and, where that stands above
-3 dB less a margin, encoded again quieter by the difference. Each file is written under a
temporary name and read back before it is put in place.
"""

from __future__ import annotations

import base64
import logging
import os
import struct
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Final

import soundfile as sf

from audiopub.atomic import atomic_write, scratch_dir
from audiopub.audio.ffmetadata import (
    BookTags,
    ChapterMark,
    build_ffmetadata,
    escape_ffmetadata,
    stream_language,
)
from audiopub.audio.ffmpeg import ffmpeg_exe, probe, stderr_tail
from audiopub.audio.levels import MAX_PEAK_DB, limiter, measure_levels
from audiopub.audio.loudness import AUDIOBOOK, LoudnessTarget, measure, normalise_filter
from audiopub.audio.mux import AAC_CODER, prepare_cover, write_concat_list
from audiopub.book.models import Cover, sniff_image_type
from audiopub.errors import MuxFailed
from audiopub.settings import AAC_BITRATE

log = logging.getLogger(__name__)

# The highest true peak an encoded file may keep, under ACX's -3 dB: a margin for the
# difference between decoders, and for ffmpeg's true-peak figure, rounded to 0.1 dB.
ENCODED_PEAK_CEILING_DB: Final = MAX_PEAK_DB - 0.2
PEAK_AIM_BELOW_DB: Final = 0.3  # an encode again aims this far under the ceiling
PEAK_ENCODES: Final = 3  # encodes at most: the second one is quieter by the overshoot
# A file read back is never shorter than its WAVs by more than rounding: that would be lost
# audio. It may be longer by encoder padding (MP3 and AAC frames, priming), which players hide.
SHORTER_TOLERANCE_S: Final = 0.1
LONGER_TOLERANCE_S: Final = 0.5


@dataclass(frozen=True)
class AudioFormat:
    suffix: str
    codec: tuple[str, ...]
    container: tuple[str, ...]
    picture_stream: bool  # the cover as an attached picture stream (else a Vorbis comment)
    itunes_tags: bool = False
    sample_rate: int | None = None  # None: the voice's own


AUDIO_FORMATS: Final = {
    "mp3": AudioFormat(
        ".mp3",
        ("-c:a", "libmp3lame", "-q:a", "5"),
        ("-f", "mp3", "-id3v2_version", "3"),
        picture_stream=True,
    ),
    "mp3-cbr": AudioFormat(
        ".mp3",
        ("-c:a", "libmp3lame", "-b:a", "192k"),
        ("-f", "mp3", "-id3v2_version", "3"),
        picture_stream=True,
        sample_rate=44_100,
    ),
    # Opus runs at 48 kHz inside whatever it is given: resample once, on our terms.
    "opus": AudioFormat(
        ".opus",
        ("-c:a", "libopus", "-b:a", "48k"),
        ("-f", "ogg"),
        picture_stream=False,
        sample_rate=48_000,
    ),
    "m4a": AudioFormat(
        ".m4a",
        ("-c:a", "aac", "-aac_coder", AAC_CODER, "-b:a", AAC_BITRATE),
        ("-movflags", "+faststart", "-f", "ipod"),
        picture_stream=True,
        itunes_tags=True,
    ),
}


def encode_audio(
    wavs: Sequence[Path],
    out: Path,
    format_name: str,
    tags: BookTags,
    cover: Cover | None,
    chapters: Sequence[ChapterMark] = (),
    loudness: LoudnessTarget | None = AUDIOBOOK,
) -> None:
    """Encode `wavs`, back to back, into `out` in the named format with `tags`, `cover` and
    chapter marks (an MP3's are ID3v2 CHAP frames), brought to `loudness` (None: as they
    are); MuxFailed if ffmpeg fails or the file comes out short. `out` appears only once
    complete."""
    audio_format = AUDIO_FORMATS[format_name]
    tags = replace(tags, itunes_audiobook=audio_format.itunes_tags)
    ffmpeg = ffmpeg_exe()
    with tempfile.TemporaryDirectory(prefix="audiopub-export-", dir=scratch_dir()) as tmp:
        folder = Path(tmp)
        picture = prepare_cover(ffmpeg, cover, folder) if cover is not None else None
        metadata = build_ffmetadata(tags, chapters)
        if picture is not None and not audio_format.picture_stream:
            metadata += f"METADATA_BLOCK_PICTURE={escape_ffmetadata(_flac_picture(picture))}\n"
            picture = None
        (folder / "metadata.txt").write_text(metadata, encoding="utf-8", newline="\n")
        with atomic_write(out) as temp:
            write_concat_list(wavs, folder / "audio.ffconcat")
            source = ["-f", "concat", "-safe", "0", "-i", str(folder / "audio.ffconcat")]
            rate = audio_format.sample_rate or sf.info(str(wavs[0])).samplerate
            command = partial(
                _command,
                ffmpeg,
                source,
                folder / "metadata.txt",
                picture,
                temp,
                audio_format,
                stream_language(tags.language),
            )
            if loudness is None:
                _encode(command(f"aresample={rate}"), out, temp)
            else:
                levelled = normalise_filter(measure(source, loudness), rate, loudness)
                _encode_under_peak_ceiling(command, f"{levelled},{limiter()}", out, temp)
            expected = sum(sf.info(str(wav)).duration for wav in wavs)
            written = probe(temp).duration_s
            if not -SHORTER_TOLERANCE_S <= written - expected <= LONGER_TOLERANCE_S:
                raise MuxFailed(
                    f"Could not write {out.name}: it holds {written:.2f} s of "
                    f"audio instead of {expected:.2f} s"
                )


def _encode_under_peak_ceiling(
    command: Callable[[str], list[str]], audio_filter: str, out: Path, temp: Path
) -> None:
    """Encode with `audio_filter`, then measure the file as a player decodes it: while its
    true peak stands above ENCODED_PEAK_CEILING_DB, encode again, quieter by the overshoot."""
    trim_db = 0.0
    for _ in range(PEAK_ENCODES):
        _encode(
            command(f"{audio_filter},volume={-trim_db:.2f}dB" if trim_db else audio_filter),
            out,
            temp,
        )
        peak = measure_levels(temp).true_peak_db
        if peak is None or peak <= ENCODED_PEAK_CEILING_DB:
            return
        trim_db += peak - (ENCODED_PEAK_CEILING_DB - PEAK_AIM_BELOW_DB)
    log.warning(
        "%s peaks at %.1f dB (true peak) after %d encodes, each quieter; audiobook "
        "distributors ask for at most %g dB",
        out.name,
        peak,
        PEAK_ENCODES,
        MAX_PEAK_DB,
    )


def _encode(cmd: list[str], out: Path, temp: Path) -> None:
    result = subprocess.run(
        cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace"
    )
    if result.returncode != 0 or not temp.is_file():
        raise MuxFailed(
            f"Could not write {out.name}: ffmpeg exited with code "
            f"{result.returncode}.\nffmpeg said:\n{stderr_tail(result.stderr)}"
        )


def _command(
    ffmpeg: str,
    source: list[str],
    metadata: Path,
    picture: Path | None,
    out: Path,
    audio_format: AudioFormat,
    language: str | None,
    audio_filter: str,
) -> list[str]:
    cmd = [
        ffmpeg,
        "-hide_banner",
        "-nostdin",
        "-loglevel",
        "error",
        "-y",
        "-xerror",
        *source,
        "-f",
        "ffmetadata",
        "-i",
        os.path.abspath(metadata),
    ]
    if picture is not None:
        cmd += ["-i", os.path.abspath(picture)]
    cmd += ["-map", "0:a", "-map_metadata", "1", "-map_chapters", "1"]
    if language is not None:  # the audio stream's own language, as players label tracks
        cmd += ["-metadata:s:a:0", f"language={language}"]
    if picture is not None:
        # "Cover (front)" is how ffmpeg's MP3 muxer is told the APIC picture type.
        cmd += [
            "-map",
            "2:v",
            "-c:v",
            "copy",
            "-disposition:v:0",
            "attached_pic",
            "-metadata:s:v",
            "title=Cover",
            "-metadata:s:v",
            "comment=Cover (front)",
        ]
    return cmd + [
        "-af",
        audio_filter,
        *audio_format.codec,
        *audio_format.container,
        os.path.abspath(out),
    ]


def _flac_picture(path: Path) -> str:
    """A FLAC picture block, base64, as Ogg files carry their cover (type 3: front cover).
    Width, height and depth are left 0 ("unknown"), which the format allows."""
    data = path.read_bytes()
    mime = (sniff_image_type(data) or "image/png").encode("ascii")
    block = (
        struct.pack(">II", 3, len(mime))
        + mime
        + struct.pack(">I", 0)
        + struct.pack(">IIIII", 0, 0, 0, 0, len(data))
        + data
    )
    return base64.b64encode(block).decode("ascii")
