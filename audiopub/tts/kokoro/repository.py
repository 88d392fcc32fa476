"""Kokoro's Hub repository as Audiopub knows it without asking the Hub: its name, the record a
download leaves in the folder, and its voices (name, language, gender) as shipped with
Audiopub (`kokoro-voices.json`, the repository's voices/ folder), so they are listed offline.
Apart from the installer, so listing them never imports the Hub client."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Final

from audiopub.tts.kokoro.files import GENDERS, language_of

KOKORO_ID: Final = "kokoro"  # what `audiopub voices download` takes: every voice, one model
KOKORO_REPO: Final = "onnx-community/Kokoro-82M-v1.0-ONNX"
RECORD: Final = "audiopub-download.json"  # inside the folder: what Audiopub downloaded
SNAPSHOT: Final = "kokoro-voices.json"  # package data: Kokoro's voices when shipped


@cache
def kokoro_index() -> dict[str, tuple[str, str]]:
    """Kokoro's voices as shipped (the voices/ folder of the repository): name → (language
    tag, "female"/"male"), so they are known without the Hub."""
    text = resources.files(__package__).joinpath(SNAPSHOT).read_text("utf-8")
    return {
        name: (facts["language"], facts["gender"])
        for name, facts in json.loads(text)["voices"].items()
    }


def describe_voice(name: str) -> tuple[str, str]:
    """(language tag, "female"/"male"/"") of a voice: as the shipped index says, else as its
    name says (a voice of your own)."""
    return kokoro_index().get(name) or (language_of(name)[0], GENDERS.get(name[1:2].lower(), ""))
