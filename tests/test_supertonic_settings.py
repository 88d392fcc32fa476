"""Supertonic's own settings (tts/supertonic/environment.py): read from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from audiopub import settings
from audiopub.tts.supertonic import SUPERTONIC
from audiopub.tts.supertonic.environment import DIR, LANGUAGE, MULTILINGUAL


def test_supertonic_lists_its_settings() -> None:
    assert SUPERTONIC.settings == (DIR, LANGUAGE, MULTILINGUAL)


def test_unset_they_leave_the_choice_to_the_engine() -> None:
    unset = settings.from_environ({})
    assert (DIR.read(unset), LANGUAGE.read(unset), MULTILINGUAL.read(unset)) == (None, None, None)


def test_the_environment_sets_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    given = settings.from_environ(
        {
            "AUDIOPUB_SUPERTONIC_DIR": "~/st",
            "AUDIOPUB_SUPERTONIC_LANGUAGE": "de",
            "AUDIOPUB_SUPERTONIC_MULTILINGUAL": "no",
        }
    )
    assert DIR.read(given) == tmp_path / "st"
    assert LANGUAGE.read(given) == "de" and MULTILINGUAL.read(given) is False


@pytest.mark.parametrize(
    ("text", "multilingual"),
    [("1", True), ("Yes", True), ("true", True), ("0", False), ("no", False), ("maybe", None)],
)
def test_multilingual_is_yes_no_else_detected(text: str, multilingual: bool | None) -> None:
    given = settings.from_environ({"AUDIOPUB_SUPERTONIC_MULTILINGUAL": text})
    assert MULTILINGUAL.read(given) is multilingual
