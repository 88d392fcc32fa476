"""Piper's voices that can be downloaded, from Piper's index; the other engines declare their
own catalogues (`EngineInfo.downloads`: Supertonic's releases, Kokoro's voices).

Piper's voices are listed by the `rhasspy/piper-voices` repository on the Hugging Face Hub in
its `voices.json` (per voice: key, language, quality, speakers, and per file its size and
MD5). A snapshot of that index ships inside the package, so the list shows offline; it is
refreshed from the Hub only when a person asks for downloadable voices, and the refreshed
copy is kept in the data directory as the newest known index until the next refresh.

When the index is refreshed, the download sizes the other engines' catalogues learn from
the Hub come with it (`Catalogue.sizes`).
"""

from __future__ import annotations

import difflib
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final

from audiopub import settings
from audiopub.atomic import atomic_write
from audiopub.errors import AudiopubError, HubUnreachable, VoiceNotFound
from audiopub.tts.engine_info import matches_language
from audiopub.tts.piper import PIPER
from audiopub.tts.registry import downloads

log = logging.getLogger(__name__)

__all__ = ["matches_language"]  # where the voice library has always found it

PIPER_REPO: Final = "rhasspy/piper-voices"
PIPER_INDEX: Final = "voices.json"
SNAPSHOT: Final = "piper-voices.json"  # package data: the index as it was when shipped
QUALITIES: Final = ("x_low", "low", "medium", "high")  # Piper's names, worst to best
# Seconds to wait for the Hub before listing from the local index instead: a person is waiting.
REFRESH_TIMEOUT_S: Final = 5.0
# A voice key becomes a file name: an index (or a mirror's) must not name a path.
_SAFE_KEY: Final = re.compile(r"\w[\w.-]*")  # letters of any script: pt_PT-tugão-medium


@dataclass(frozen=True)
class RemoteFile:
    """A file of a voice as the index lists it: its path in the repository, size and MD5."""

    path: str
    size: int
    md5: str

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class PiperEntry:
    """One Piper voice of the index."""

    key: str  # e.g. de_DE-thorsten-medium: also its file name and its voice id once installed
    name: str
    language_code: str  # de_DE
    language_family: str  # de
    language_english: str  # German
    language_native: str  # Deutsch
    country: str  # Germany
    quality: str
    num_speakers: int
    files: tuple[RemoteFile, ...]
    aliases: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{PIPER.name}:{self.key}"

    @property
    def size(self) -> int:
        return sum(file.size for file in self.files)

    @property
    def language(self) -> str:
        """The BCP 47 tag Audiopub uses for voices: de-DE."""
        return self.language_code.replace("_", "-")

    def describe_language(self) -> str:
        if not self.country:
            return self.language_english
        return f"{self.language_english} ({self.country})"


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
        name = piper_key(voice_id)
        if name is None:
            raise VoiceNotFound(
                f"Unknown engine {voice_id.strip().partition(':')[0]!r} in {voice_id!r}: use "
                "piper:VOICE, or an id `audiopub voices --all` lists"
            )
        if name in self.piper:
            return self.piper[name]
        for entry in self.piper.values():
            if name in entry.aliases:
                return entry
        known = {key: entry.id for key, entry in self.piper.items()}
        close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(known[c] for c in close)}?" if close else ""
        raise VoiceNotFound(
            f"No voice {voice_id!r} in {self.source}.{hint} `audiopub voices --all` lists them."
        )


def piper_key(voice_id: str) -> str | None:
    """The key of `piper:KEY` or of a bare KEY; None for another engine's prefix (`kokoro:x`)."""
    wanted = voice_id.strip()
    engine, _, name = wanted.partition(":") if ":" in wanted else ("", "", wanted)
    # Piper's name compared outside its package, once: the ids of this index, Piper's, are
    # "piper:KEY" or the bare key people type (its catalogue is still the voice library's).
    return name if engine in ("", PIPER.name) else None


def parse_piper_index(data: Any) -> dict[str, PiperEntry]:
    """The voices of a `voices.json`, by key; ValueError if it is not in that format."""
    if not isinstance(data, Mapping):
        raise ValueError("the index is not a JSON object")
    entries = {}
    try:
        for key, voice in data.items():
            if not _SAFE_KEY.fullmatch(key):
                log.warning("skipping voice %r of the index: not a file name", key)
                continue
            language = voice["language"]
            files = tuple(
                RemoteFile(path, int(facts["size_bytes"]), str(facts["md5_digest"]))
                for path, facts in voice["files"].items()
            )
            entries[key] = PiperEntry(
                key=key,
                name=voice["name"],
                language_code=language["code"],
                language_family=language["family"],
                language_english=language.get("name_english", language["code"]),
                language_native=language.get("name_native", ""),
                country=language.get("country_english", ""),
                quality=voice["quality"],
                num_speakers=int(voice.get("num_speakers", 1)),
                files=files,
                aliases=tuple(voice.get("aliases", ())),
            )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"a voice entry is not in the voices.json format ({exc!r})") from exc
    return entries


def snapshot_index() -> dict[str, PiperEntry]:
    """The index shipped inside the package."""
    text = resources.files("audiopub.voices").joinpath(SNAPSHOT).read_text("utf-8")
    return parse_piper_index(json.loads(text))


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


def entry_matches(entry: PiperEntry, language: str | None) -> bool:
    if language is None:
        return True
    return matches_language(
        language, [entry.language_code], [entry.language_english, entry.language_native]
    )


def quality_rank(quality: str) -> int:
    return QUALITIES.index(quality) if quality in QUALITIES else len(QUALITIES)
