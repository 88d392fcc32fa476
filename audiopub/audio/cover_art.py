"""A book's cover made to measure with ffmpeg: a thumbnail for the page, a bounded picture for
the .m4b.

The cover as the book holds it can be 20 MB and thousands of pixels wide; the page shows it a
few hundred pixels wide, and players show an audiobook's cover at most ~2400 pixels wide (what
Audible asks for). `fit_cover` scales a picture down to fit a square of `side` pixels (never up)
in a separate ffmpeg process, so the decoded picture never sits in this one. A picture whose
header claims more than `EPUB_MAX_COVER_PIXELS` is not handed to ffmpeg at all.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path
from typing import Final

from audiopub import settings
from audiopub.book.models import Cover, sniff_image_type
from audiopub.book.pictures import image_size

__all__ = ["EMBEDDED_SIDE", "THUMBNAIL_SIDE", "fit_cover", "fits", "too_large"]

log = logging.getLogger(__name__)

EMBEDDED_SIDE: Final = 2400  # pixels: Audible's recommended cover size; Apple asks 1400 at least
THUMBNAIL_SIDE: Final = 480  # pixels: the page shows covers ~10rem wide, twice that for HiDPI


def too_large(cover: Cover) -> str | None:
    """Why the picture is too large to decode (its size from its header), or None."""
    width, height = image_size(cover.data) or (0, 0)
    if width * height > settings.EPUB_MAX_COVER_PIXELS:
        return f"the cover is {width:,}×{height:,} pixels, too large to use"
    return None


def fits(cover: Cover, side: int) -> bool:
    """The picture is a JPEG or PNG no wider or taller than `side` (it can be used as it is)."""
    size = image_size(cover.data)
    return (
        sniff_image_type(cover.data) in ("image/jpeg", "image/png")
        and size is not None
        and max(size) <= side
    )


def fit_cover(
    ffmpeg: str, cover: Cover, side: int, out_stem: Path, consequence: str
) -> Path | None:
    """The cover scaled down to fit `side`×`side` pixels, written as `out_stem` with .jpg
    (from a JPEG) or .png (anything else: keeps transparency); None if it is too large or
    ffmpeg can't read it, with a warning that ends in `consequence` ("the page shows none")."""
    why = too_large(cover)
    if why is not None:
        log.warning("%s; %s.", why[0].upper() + why[1:], consequence)
        return None
    is_jpeg = sniff_image_type(cover.data) == "image/jpeg"
    source = out_stem.with_name(out_stem.name + "-source")
    out = out_stem.with_suffix(".jpg" if is_jpeg else ".png")
    source.write_bytes(cover.data)
    scale = f"scale=w='min(iw,{side})':h='min(ih,{side})':force_original_aspect_ratio=decrease"
    cmd = [
        ffmpeg,
        "-hide_banner",
        "-nostdin",
        "-loglevel",
        "error",
        "-y",
        "-i",
        str(source),
        "-frames:v",
        "1",
        "-vf",
        scale,
    ]
    cmd += ["-q:v", "2"] if is_jpeg else ["-c:v", "png"]
    cmd += ["-f", "image2", str(out)]
    try:
        result = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)
    finally:
        source.unlink(missing_ok=True)
    if result.returncode != 0 or not out.is_file():
        out.unlink(missing_ok=True)
        log.warning(
            "The cover (%s) can't be read, it may be damaged; %s.", cover.media_type, consequence
        )
        return None
    return out
