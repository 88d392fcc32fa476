"""Supertonic's own settings, each an environment variable (listed by `SUPERTONIC.settings`)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from audiopub.settings import EngineSetting, folder


def _yes_no(text: str) -> bool | None:
    """1/true/yes or 0/false/no; anything else: None, as if unset (detection decides)."""
    text = text.strip().lower()
    if text in ("1", "true", "yes"):
        return True
    if text in ("0", "false", "no"):
        return False
    return None


DIR: Final[EngineSetting[Path | None]] = EngineSetting(
    "AUDIOPUB_SUPERTONIC_DIR",
    folder,
    None,
    "one Supertonic model directory, ahead of the chosen release",
)
LANGUAGE: Final[EngineSetting[str | None]] = EngineSetting(
    "AUDIOPUB_SUPERTONIC_LANGUAGE", str, None, "Supertonic's language when the book names none"
)
MULTILINGUAL: Final[EngineSetting[bool | None]] = EngineSetting(
    "AUDIOPUB_SUPERTONIC_MULTILINGUAL",
    _yes_no,
    None,
    "`1`/`0` where Supertonic's multilingual detection guesses wrong",
)
SETTINGS: Final = (DIR, LANGUAGE, MULTILINGUAL)
