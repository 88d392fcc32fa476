"""File names for exported files: safe on every common OS, and sorting in reading order."""

from __future__ import annotations

import re
import unicodedata
from typing import Final

# Characters Windows, macOS or Linux refuse in a name, and control characters.
_UNSAFE: Final = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
# Names Windows reserves whatever the extension.
_RESERVED: Final = frozenset(
    {
        "CON",
        "PRN",
        "AUX",
        "NUL",
        *(f"COM{i}" for i in range(1, 10)),
        *(f"LPT{i}" for i in range(1, 10)),
    }
)
MAX_NAME_CHARS: Final = 100  # well under every filesystem's 255 bytes, with room for a suffix


def safe_name(text: str, fallback: str = "Untitled") -> str:
    """`text` as a file name (without suffix): unsafe characters replaced, spaces collapsed,
    no leading or trailing dots or spaces, not a reserved name, at most MAX_NAME_CHARS."""
    name = unicodedata.normalize("NFC", _UNSAFE.sub(" ", text))
    name = " ".join(name.split()).strip(" .")[:MAX_NAME_CHARS].rstrip(" .")
    if not name:
        return fallback
    return f"_{name}" if name.split(".")[0].upper() in _RESERVED else name


def numbered(number: int, count: int, title: str) -> str:
    """ "01 - Loomings": zero-padded to the width of `count`, so names sort in order."""
    width = max(2, len(str(count)))
    return f"{number:0{width}d} - {safe_name(title, f'Chapter {number}')}"
