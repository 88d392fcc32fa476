"""A picture's size from its header (`book.pictures`), checked against pictures ffmpeg made."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from audiopub.audio.ffmpeg import ffmpeg_exe
from audiopub.book.pictures import image_size

FORMATS = {
    "jpeg": ("jpg", []),
    "png": ("png", []),
    "gif": ("gif", []),
    "webp": ("webp", ["-c:v", "libwebp"]),
    "webp-lossless": ("webp", ["-c:v", "libwebp", "-lossless", "1"]),
    "webp-alpha": ("webp", ["-c:v", "libwebp", "-pix_fmt", "yuva420p"]),
}


@pytest.mark.parametrize("kind", FORMATS)
def test_the_size_is_read_from_the_header(tmp_path: Path, kind: str) -> None:
    suffix, codec = FORMATS[kind]
    path = tmp_path / f"picture.{suffix}"
    subprocess.run(
        [
            ffmpeg_exe(),
            "-hide_banner",
            "-loglevel",
            "error",
            "-nostdin",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "color=c=red:s=321x123",
            "-frames:v",
            "1",
            *codec,
            str(path),
        ],
        check=True,
    )
    assert image_size(path.read_bytes()) == (321, 123)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xff\xd8",
        b"\xff\xd8\xff\xe0\x00",
        b"GIF89a\x01",
        b"\x89PNG\r\n\x1a\n",
        b"RIFF\x00\x00\x00\x00WEBPVP8 ",
        b"<svg/>",
        b"\xff\xd8\x00\x00\x00\x00",
    ],
)
def test_a_header_cut_short_or_unknown_has_no_size(data: bytes) -> None:
    assert image_size(data) is None
