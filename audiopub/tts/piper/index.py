"""Piper's voice index: what the Hub's `rhasspy/piper-voices` lists, and which copy of it is
read.

The repository lists its voices in `voices.json` (per voice: key, language, quality, speakers,
and per file its size and MD5). A snapshot of that index ships beside this module, so the list
shows offline; it is refreshed from the Hub only when a person asks for downloadable voices,
and the refreshed copy is kept in the data directory as the newest known index until the next
refresh (`IndexCopies`).
"""

from __future__ import annotations

import difflib
import functools
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

from audiopub import settings
from audiopub.atomic import atomic_write
from audiopub.errors import VoiceNotFound
from audiopub.tts.engine_info import matches_language
from audiopub.tts.piper.files import NAME

log = logging.getLogger(__name__)

PIPER_REPO: Final = "rhasspy/piper-voices"
PIPER_INDEX: Final = "voices.json"
SNAPSHOT: Final = "piper-voices.json"  # package data: the index as it was when shipped
QUALITIES: Final = ("x_low", "low", "medium", "high")  # Piper's names, worst to best
# Which copy is read, as a person is told.
SHIPPED: Final = "the voice index shipped with Audiopub"
KEPT: Final = "the voice index last fetched from the Hub"
FETCHED: Final = "the Hub's voice index"
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
        return voice_download_id(self.key)

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


def voice_download_id(key: str) -> str:
    """What `voices download` takes for the voice `key`: "piper:de_DE-thorsten-medium"."""
    return f"{NAME}:{key}"


def piper_key(voice_id: str) -> str | None:
    """The key of `piper:KEY` or of a bare KEY; None for another engine's prefix (`kokoro:x`)."""
    wanted = voice_id.strip()
    engine, _, name = wanted.partition(":") if ":" in wanted else ("", "", wanted)
    # "piper:KEY", or the bare key people type: Piper's index is the voice library's own.
    return name if engine in ("", NAME) else None


def find_entry(entries: Mapping[str, PiperEntry], voice_id: str, source: str) -> PiperEntry:
    """The entry for `piper:KEY` or a bare Piper key (or an old alias) among `entries`, the
    index `source` names; VoiceNotFound with near misses otherwise."""
    name = piper_key(voice_id)
    if name is None:
        raise VoiceNotFound(
            f"Unknown engine {voice_id.strip().partition(':')[0]!r} in {voice_id!r}: use "
            "piper:VOICE, or an id `audiopub voices --all` lists"
        )
    if name in entries:
        return entries[name]
    for entry in entries.values():
        if name in entry.aliases:
            return entry
    known = {key: entry.id for key, entry in entries.items()}
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(known[c] for c in close)}?" if close else ""
    raise VoiceNotFound(
        f"No voice {voice_id!r} in {source}.{hint} `audiopub voices --all` lists them."
    )


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
    return dict(_snapshot())


@functools.cache  # package data: read once per process
def _snapshot() -> Mapping[str, PiperEntry]:
    text = resources.files(__package__).joinpath(SNAPSHOT).read_text("utf-8")
    return parse_piper_index(json.loads(text))


def entry_matches(entry: PiperEntry, language: str | None) -> bool:
    if language is None:
        return True
    return matches_language(
        language, [entry.language_code], [entry.language_english, entry.language_native]
    )


def quality_rank(quality: str) -> int:
    return QUALITIES.index(quality) if quality in QUALITIES else len(QUALITIES)


# --- its copies ----------------------------------------------------------------------------


def refreshed_index_path() -> Path:
    """Where the index last fetched from the Hub is kept (data directory)."""
    return settings.data_dir() / "voices" / SNAPSHOT


@dataclass(frozen=True)
class Index:
    """The voices of one copy of the index, and which copy it is, as a person reads it."""

    entries: Mapping[str, PiperEntry]
    source: str  # SHIPPED, KEPT or FETCHED

    def find(self, voice_id: str) -> PiperEntry:
        return find_entry(self.entries, voice_id, self.source)


def _stamp(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


class IndexCopies:
    """The newest index on this computer, and refreshing it from the Hub."""

    def __init__(self) -> None:
        # What the last refresh fetched, with where it was kept: read as the Hub's while that
        # copy is unchanged (and read even if it could not be written).
        self._fetched: tuple[Path, int | None, Mapping[str, PiperEntry]] | None = None

    def newest(self) -> Index:
        """The one just fetched, the one kept by the last refresh, else the shipped snapshot.
        No network."""
        path = refreshed_index_path()
        fetched = self._fetched
        if fetched is not None and fetched[:2] == (path, _stamp(path)):
            return Index(fetched[2], FETCHED)
        if path.is_file():
            try:
                return Index(parse_piper_index(json.loads(path.read_text("utf-8"))), KEPT)
            except (OSError, ValueError) as exc:  # a damaged copy: the snapshot still works
                log.warning("ignoring %s: %s", path, exc)
        return Index(_snapshot(), SHIPPED)

    def refresh(self, timeout_s: float) -> None:
        """Fetch the Hub's index and keep it: a network call. HubUnreachable, another
        AudiopubError, or ValueError for an answer that is not an index."""
        from audiopub.tts import hub  # huggingface_hub: only when a person asked for the Hub

        self._fetched = None  # until the Hub answers, the copy on this computer is read
        _, data = hub.fetch_json(PIPER_REPO, PIPER_INDEX, timeout_s=timeout_s)
        entries = parse_piper_index(data)
        path = refreshed_index_path()
        try:
            with atomic_write(path) as temp:
                temp.write_text(json.dumps(data), "utf-8")
        except OSError as exc:  # listing still works; only the offline copy is older
            log.warning("could not keep the refreshed voice index: %s", exc)
        self._fetched = (path, _stamp(path), entries)
