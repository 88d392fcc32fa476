"""What Audiopub knows of an engine before loading it: its name, how people call it, what it
reads, where its files are, how it is loaded and how to tell its files changed.

Each engine package (tts/piper/, tts/kokoro/, tts/supertonic/) describes itself with one
`EngineInfo`, and `registry.register` adds it to the engines: the rest of Audiopub (the voice
library, the command line, the web pages, casting) asks the description instead of comparing
engine names, so a new engine is one new package and one line in the registry. Nothing heavy is
imported to describe an engine: its `load` imports the engine itself, its `downloads` the Hub
client when they run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from audiopub import settings
from audiopub.settings import EngineSetting
from audiopub.tts.engine import Engine, Voice

if TYPE_CHECKING:  # for the hints only: the Hub client is imported when a download runs
    from audiopub.tts.downloads import Installed
    from audiopub.tts.hub import Progress

# What an engine's model files look like now (name, size, mtime of each), to notice them
# replaced; None where the engine rescans its folder itself.
Stamp = tuple[tuple[str, int, int], ...] | None


@dataclass(frozen=True)
class LoadRequest:
    """Everything an engine is made with."""

    model_dir: Path
    use_gpu: bool
    threads: int | None
    device_id: int  # the CUDA device, when use_gpu


def _no_stamp(model_dir: Path) -> Stamp:
    return None


@dataclass(frozen=True)
class Steps:
    """The denoising steps an engine takes: what `--steps` and the page's slider offer."""

    low: int = settings.MIN_STEPS
    high: int = settings.MAX_STEPS
    default: int = settings.DEFAULT_STEPS


@dataclass(frozen=True)
class Mixing:
    """How an engine's voices mix into one: "af_heart:0.6+am_adam:0.4" (voice, weight)."""

    separator: str  # between the voices of a mix: "+"
    weight_separator: str  # between a voice and its weight: ":"
    # Raises an AudiopubError that says what is wrong with a mix the engine can't speak.
    check: Callable[[str], object]


@dataclass(frozen=True)
class Offer:
    """One download of an engine's catalogue (a voice, or a whole model with every voice in
    it), as the Voices page lists it."""

    id: str  # what `audiopub voices download` and `remove` take: "piper:KEY", "kokoro"
    engine: str
    name: str
    languages: tuple[str, ...]  # primary subtags it reads
    language_label: str  # what a person reads: "German (Germany) · Deutsch"
    installed: str | None = None  # its origin once installed (`tts.downloads.DOWNLOADED`…)
    unfinished: bool = False  # a download stopped half-way: its complete files are kept
    size: int | None = None  # bytes to download, where known
    licence_path: str | None = None  # on the Hub: "owner/repo" or a file's "owner/repo/blob/…"
    voice: str | None = None  # the voice to preview it with once installed; "": the first
    note: str | None = None  # what else a person should know of it
    usable: bool = False  # installed, and the engine could switch to it (`voices use`)
    quality: str | None = None  # its grade, where its catalogue grades voices (one of `qualities`)
    speakers: int | None = None  # how many speakers a voice of several speakers has


@dataclass(frozen=True)
class Suggested:
    """A voice of an engine's catalogue that reads a book's language, and how to get it."""

    voice: str  # what --voice takes
    download: str  # what `audiopub voices download` takes
    installed: bool
    whole_model: bool = False  # the download is the engine's model, every voice in it


@dataclass(frozen=True)
class Listing:
    """An engine's part of `audiopub voices --all`: a heading, a line per voice or model, and
    an id to show `voices download` with."""

    heading: str
    lines: tuple[str, ...]
    example: str


class Downloads(Protocol):
    """An engine's catalogue of downloadable voices and models, and how to fetch and remove
    them. What brings the Hub client is imported by the methods that need it, when they run."""

    variants: tuple[str, ...]  # what `voices download --variant` may choose; () for none
    qualities: tuple[str, ...]  # the grades its offers come in, worst to best; () for none

    def source(self) -> str | None:
        """Where the list it offers now comes from, as a person reads it ("the voice index
        shipped with Audiopub"); None: its catalogue is part of Audiopub, nothing to refresh."""
        ...

    def refresh(self, timeout_s: float) -> None:
        """Ask the Hub for its newest catalogue and keep it on this computer for the lists
        after (a network call, for a person who asked for the newest list); nothing where it
        keeps none. HubUnreachable when the Hub does not answer, another AudiopubError or a
        ValueError when the answer is not a catalogue: the copy on this computer stays."""
        ...

    def language_names(self) -> Mapping[str, tuple[str, str]]:
        """Primary subtag → (English, native) name of each language its catalogue names, for
        the language filter and for telling a person which language a book is in."""
        ...

    def offers(self) -> Sequence[Offer]:
        """What can be downloaded, with what is installed (from this computer: no network;
        blocking, it reads the models folder)."""
        ...

    def sizes(self, timeout_s: float) -> Mapping[str, int]:
        """Download sizes by id as the Hub tells them now, where `offers` can't know them
        (a network call, for a person who asked for the newest list)."""
        ...

    def listing(
        self, language: str | None, ask_hub: bool, sizes: Mapping[str, int]
    ) -> Listing | None:
        """Its part of `voices --all` for `language` (None: every one), the Hub asked for the
        newest list when `ask_hub`, with the `sizes` the Hub told; None when nothing of it
        reads that language."""
        ...

    def notes(self) -> list[str]:
        """Lines `audiopub voices` prints after the installed voices (what else is there)."""
        ...

    def suggest(self, tag: str) -> Suggested | None:
        """Its voice that best reads `tag`'s language (installed first, its region where the
        tag names one), for the warning that a book is not in its voice's language; None:
        none of its voices reads it, or it suggests none. No network."""
        ...

    def owns(self, download_id: str) -> bool:
        """Whether `download_id` (as `voices download` takes it) is one of its downloads."""
        ...

    def install(
        self,
        download_id: str,
        revision: str | None,
        variant: str | None,
        on_progress: Callable[[Progress], None] | None,
        cancel: threading.Event | None,
    ) -> Installed: ...

    def how_to_speak(self, installed: Installed) -> str:
        """The line that says how to speak with what was just installed."""
        ...

    def remove(self, download_id: str) -> list[Path]:
        """What was removed: only what Audiopub downloaded, and unfinished downloads."""
        ...

    def unfinished(self) -> list[str]:
        """The ids of its downloads that stopped half-way."""
        ...


def matches_language(wanted: str, codes: Iterable[str], names: Iterable[str] = ()) -> bool:
    """Whether `wanted` (de, de_DE, de-DE, German, Deutsch) names one of the languages."""
    want = wanted.strip().lower().replace("-", "_")
    for code in codes:
        code = code.lower().replace("-", "_")
        if want == code or want == code.split("_")[0]:
            return True
    return any(want == name.lower() for name in names if name)


@dataclass(frozen=True)
class EngineInfo:
    name: str  # what --engine takes, and what a job and the chunk cache store
    label: str  # what a person reads: "Piper"
    # The languages (primary subtags) its model reads, every voice each of them; empty where
    # each voice reads its own one language (Piper).
    languages: tuple[str, ...]
    sample_rate: int | None  # of every voice; None where the voice or model says (Piper's differ)
    default_model_dir: Callable[[], Path]  # where its files are unless told (settings, env)
    load: Callable[[LoadRequest], Engine]  # imports and makes the engine
    stamp: Callable[[Path], Stamp] = _no_stamp  # its files in this folder as they are now
    # The files behind one voice, where each voice is files of its own (Piper's `.onnx` and
    # `.onnx.json`, none for one shipped inside a package); None: the model folder is one
    # whole that speaks every voice.
    voice_files: Callable[[str], list[Path]] | None = None
    # What can run its model (Kokoro's `RUNTIME` setting chooses), its default first.
    runtimes: tuple[str, ...] = ("onnx",)
    steps: Steps | None = None  # None: `SynthesisOptions.steps` changes nothing it says
    mixing: Mixing | None = None  # None: its voices don't mix
    # Whether its voices are made from a reference recording of a person (each voice's own
    # `Voice.from_recording` says which), rather than trained into the model.
    voices_from_recordings: bool = False
    downloads: Downloads | None = None  # None: nothing of it can be downloaded
    # What `audiopub voices` says above its installed voices ("supertonic (supertonic-3 in …):");
    # None: its name.
    heading: Callable[[Sequence[Voice]], str] | None = None
    # Its own environment variables (AUDIOPUB_<NAME>_*), declared in its folder: each is
    # checked as a command starts (`registry.check_settings`) and read where the engine needs it.
    settings: tuple[EngineSetting, ...] = ()

    @property
    def uses_steps(self) -> bool:
        """Whether `SynthesisOptions.steps` changes what it says."""
        return self.steps is not None

    @property
    def multilingual(self) -> bool:
        """Whether its voices read several languages (the book's is passed as it speaks)."""
        return bool(self.languages)
