"""The voices that can be downloaded, as the voice library lists them: each engine's own
catalogue (`EngineInfo.downloads`), which copy of it is listed, and the download sizes the Hub
tells.

What a catalogue says and where its copies are is its engine's. Each ships with Audiopub, so
the list shows offline; the catalogues are refreshed from the Hub only when a person asks for
downloadable voices (`refresh_catalogue`), and each engine keeps what it fetched as its newest
known list until the next refresh. When the Hub answers, the download sizes the catalogues
learn from it come with it (`Catalogue.sizes`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from audiopub.errors import AudiopubError, HubUnreachable
from audiopub.tts.engine_info import matches_language
from audiopub.tts.registry import downloads

log = logging.getLogger(__name__)

__all__ = ["matches_language"]  # where the voice library has always found it

# Seconds to wait for the Hub before listing from the local copies instead: a person is waiting.
REFRESH_TIMEOUT_S: Final = 5.0
# Where the lists come from when no catalogue keeps a copy of its own.
SHIPPED: Final = "the lists shipped with Audiopub"


@dataclass(frozen=True)
class Catalogue:
    """Where the catalogues listed now came from, and the download sizes the Hub told."""

    source: str  # "the Hub's voice index", "the voice index shipped with Audiopub", …
    note: str | None = None  # one line for the person when the Hub could not be asked
    offline: bool = False  # the Hub (or mirror) did not answer at all: don't ask it again
    sizes: Mapping[str, int] = field(default_factory=dict)  # by download id, after a refresh


def _sources() -> str:
    return " and ".join(filter(None, (found.source() for found in downloads()))) or SHIPPED


def local_catalogue() -> Catalogue:
    """The newest catalogues on this computer. No network."""
    return Catalogue(_sources())


def refresh_catalogue(timeout_s: float = REFRESH_TIMEOUT_S) -> Catalogue:
    """The Hub's current catalogues (each kept by its engine for next time), or the local ones
    with a note saying why not. Only for a person who asked for downloadable voices: this is a
    network call."""
    from audiopub.tts import hub  # huggingface_hub is imported only when it is needed

    notes = []
    offline = False
    for found in downloads():
        try:
            found.refresh(timeout_s)
        except (AudiopubError, ValueError) as exc:
            if isinstance(exc, HubUnreachable):  # one note, in words: the list is complete
                notes.append(
                    f"Offline: the Hugging Face Hub at {hub.endpoint()} can't be reached "
                    f"({hub.reason(exc)}), so this is {found.source()}. Downloads need a "
                    "connection."
                )
                offline = True
                break  # a Hub that did not answer is not waited for a second time
            notes.append(
                f"Voice list not refreshed ({str(exc).splitlines()[0]}); showing {found.source()}."
            )
    sizes = (
        {}
        if offline
        else {key: size for found in downloads() for key, size in found.sizes(timeout_s).items()}
    )
    return Catalogue(_sources(), " ".join(notes) or None, offline, sizes)
