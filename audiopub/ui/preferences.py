"""The UI's remembered choices (engine, voice, speed, steps, GPU, dark mode), kept in the data dir.

Why a small JSON file and not `app.storage.user` / `app.storage.general`: `user` storage is per
browser cookie (and needs a secret), while jobs are shared by every tab and browser, so the
settings that made them should be too; `general` storage would do, but NiceGUI keeps it in
`.nicegui/` under whatever directory `audiopub` was started from. A file next to the job store
follows AUDIOPUB_DATA_DIR like everything else Audiopub keeps.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from audiopub import settings as defaults
from audiopub.atomic import atomic_write, remove_stale_temp_files
from audiopub.jobs.models import Narration

log = logging.getLogger(__name__)


# What a job takes from the page and a book never says: the seed stays unset and the
# language is the book's, so neither is remembered.
NOT_REMEMBERED = frozenset({"seed", "language"})


@dataclass(frozen=True)
class UiSettings(Narration):
    """The Convert page's choices (a job's `Narration`; voice None: the engine's first), and
    the theme."""

    dark: bool | None = None  # None follows the system

    def to_dict(self) -> dict[str, Any]:
        """What the file keeps."""
        return {name: value for name, value in asdict(self).items() if name not in NOT_REMEMBERED}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UiSettings:
        """Unknown keys are dropped and bad values fall back to defaults, so a hand-edited or
        old file never stops the page from opening."""
        known = {f.name for f in fields(cls)} - NOT_REMEMBERED
        base = cls()
        clean: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                continue
            default = getattr(base, key)
            if key in ("voice", "dark"):
                if value is None or isinstance(value, str if key == "voice" else bool):
                    clean[key] = value
            elif isinstance(default, bool):
                if isinstance(value, bool):
                    clean[key] = value
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                try:
                    number = type(default)(value)
                except (ValueError, OverflowError):  # NaN or infinity in a hand-edited file
                    continue
                if not (isinstance(number, float) and math.isnan(number)):  # out of any range
                    clean[key] = number
            elif isinstance(value, type(default)):
                clean[key] = value
        # Into range before the settings are made: they refuse a speed or steps outside it.
        if "speed" in clean:
            clean["speed"] = min(max(clean["speed"], defaults.MIN_SPEED), defaults.MAX_SPEED)
        if "steps" in clean:
            clean["steps"] = min(max(clean["steps"], defaults.MIN_STEPS), defaults.MAX_STEPS)
        return replace(base, **clean)


class Preferences:
    """Read once, written on every change (atomically: temp file + rename)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        remove_stale_temp_files(self.path.parent, self.path.name)  # from a crash mid-write
        self._lock = threading.Lock()
        self._current = self._read()
        self._unsaved = False  # the last change could not be written (its warning is logged)

    def get(self) -> UiSettings:
        with self._lock:
            return self._current

    def update(self, **changes: Any) -> UiSettings:
        """The settings with `changes`. A disk that can't take the file (full, read-only) does
        not stop the change: it holds until the server stops, and the log says so once."""
        with self._lock:
            self._current = UiSettings.from_dict({**self._current.to_dict(), **changes})
            try:
                self._write(self._current)
            except OSError as exc:
                if not self._unsaved:
                    log.warning(
                        "the UI settings are kept until the server stops, not in %s: %s",
                        self.path,
                        exc.strerror or exc,
                    )
                self._unsaved = True
            else:
                self._unsaved = False
            return self._current

    def _read(self) -> UiSettings:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return UiSettings()
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable UI settings %s: %s", self.path, exc)
            return UiSettings()
        return UiSettings.from_dict(data if isinstance(data, dict) else {})

    def _write(self, value: UiSettings) -> None:
        with atomic_write(self.path) as temp:
            temp.write_text(json.dumps(value.to_dict(), indent=2), "utf-8")
