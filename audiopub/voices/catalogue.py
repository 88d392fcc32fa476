"""The voices that can be downloaded, as the voice library lists them: Piper's index, kept on
this computer and refreshed from the Hub on request, with the download sizes the other engines'
catalogues learn (`EngineInfo.downloads`: Supertonic's releases, Kokoro's voices).

What the index says and how its voices are fetched is the Piper engine's
(`tts.piper.downloads`); here is which copy of it is listed. A snapshot ships with Audiopub, so
the list shows offline; it is refreshed from the Hub only when a person asks for downloadable
voices, and the refreshed copy is kept in the data directory as the newest known index until
the next refresh. When the index is refreshed, the download sizes the other engines'
catalogues learn from the Hub come with it (`Catalogue.sizes`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from audiopub import settings
from audiopub.atomic import atomic_write
from audiopub.errors import AudiopubError, HubUnreachable
from audiopub.tts.engine_info import matches_language

# Piper's index is the one catalogue listed voice by voice, with every language's names: the
# voice library keeps its copy, so it names the engine whose index it is.
from audiopub.tts.piper.downloads import (
    PIPER_INDEX,
    PIPER_REPO,
    SNAPSHOT,
    PiperEntry,
    find_entry,
    parse_piper_index,
    snapshot_index,
)
from audiopub.tts.registry import downloads

log = logging.getLogger(__name__)

__all__ = ["matches_language"]  # where the voice library has always found it

# Seconds to wait for the Hub before listing from the local index instead: a person is waiting.
REFRESH_TIMEOUT_S: Final = 5.0


@dataclass(frozen=True)
class Catalogue:
    """The Piper voices of one index, where that index came from, and the download sizes the
    other engines' catalogues learnt from the Hub."""

    piper: Mapping[str, PiperEntry]
    source: str  # "the Hub", "the index refreshed on …", "the snapshot shipped with Audiopub"
    note: str | None = None  # one line for the person when the Hub could not be asked
    offline: bool = False  # the Hub (or mirror) did not answer at all: don't ask it again
    sizes: Mapping[str, int] = field(default_factory=dict)  # by download id, after a refresh

    def find(self, voice_id: str) -> PiperEntry:
        """The entry for `piper:KEY` or a bare Piper key (or an old alias); VoiceNotFound with
        near misses otherwise."""
        return find_entry(self.piper, voice_id, self.source)


def refreshed_index_path() -> Path:
    """Where the index last fetched from the Hub is kept (data directory)."""
    return settings.data_dir() / "voices" / SNAPSHOT


def local_catalogue() -> Catalogue:
    """The newest index on this computer: the last one refreshed from the Hub, else the
    shipped snapshot. No network."""
    path = refreshed_index_path()
    if path.is_file():
        try:
            entries = parse_piper_index(json.loads(path.read_text("utf-8")))
            return Catalogue(entries, "the voice index last fetched from the Hub")
        except (OSError, ValueError) as exc:  # a damaged copy: the snapshot still works
            log.warning("ignoring %s: %s", path, exc)
    return Catalogue(snapshot_index(), "the voice index shipped with Audiopub")


def refresh_catalogue(timeout_s: float = REFRESH_TIMEOUT_S) -> Catalogue:
    """The Hub's current index (kept for next time), or the local one with a note saying why
    not. Only for a person who asked for downloadable voices: this is a network call."""
    from audiopub.tts import hub  # huggingface_hub is imported only when it is needed

    try:
        _, data = hub.fetch_json(PIPER_REPO, PIPER_INDEX, timeout_s=timeout_s)
        entries = parse_piper_index(data)
    except (AudiopubError, ValueError) as exc:
        local = local_catalogue()
        if isinstance(exc, HubUnreachable):  # one note, in words: the list is still complete
            note = (
                f"Offline: the Hugging Face Hub at {hub.endpoint()} can't be reached "
                f"({hub.reason(exc)}), so this is {local.source}. Downloads need a "
                "connection."
            )
        else:
            note = f"Voice list not refreshed ({str(exc).splitlines()[0]}); showing {local.source}."
        return Catalogue(
            local.piper, local.source, note=note, offline=isinstance(exc, HubUnreachable)
        )
    _keep(data)
    sizes = {key: size for found in downloads() for key, size in found.sizes(timeout_s).items()}
    return Catalogue(entries, "the Hub's voice index", sizes=sizes)


def _keep(data: Any) -> None:
    try:
        with atomic_write(refreshed_index_path()) as temp:
            temp.write_text(json.dumps(data), "utf-8")
    except OSError as exc:  # listing still works; only the offline copy is older
        log.warning("could not keep the refreshed voice index: %s", exc)
