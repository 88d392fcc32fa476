"""Defaults in one place, one comment each; the options the environment sets (AUDIOPUB_*, and
the few of other programs Audiopub honours) in one `Settings`, read here and nowhere else.
An engine's own variables are declared in its folder (`EngineSetting`, listed by its
`EngineInfo.settings`): `Settings` carries them as set, and each engine reads and checks its own.

A command reads them once as it starts (`load`, then `installed` for its run) and hands them
to the code below it where it can; code no caller can hand them to (engines the registry loads
for every caller, the executor a job's plan asks for, the Hub's address, the folders below)
asks `current()`. Code run without a command (tests, a library caller) gets the environment's
settings as they are at the call, so a test may set a variable at any time; `from_environ`
builds them from any mapping."""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, Generic, TypeVar

from audiopub.errors import SettingInvalid

log = logging.getLogger(__name__)
T = TypeVar("T")

# Flow-matching steps for engines that use them: 16 is Supertonic's quality/speed sweet spot.
DEFAULT_STEPS: Final = 16
MIN_STEPS: Final = 2
MAX_STEPS: Final = 128

# Speaking rate multiplier; outside this range voices start to sound broken.
DEFAULT_SPEED: Final = 1.0
MIN_SPEED: Final = 0.7
MAX_SPEED: Final = 2.0

# Silence inserted by the stitcher, in seconds. Head and tail are the room tone audiobook
# distributors (ACX) ask of every file: 0.5-1 s before the speech, 1-5 s after it.
CHAPTER_HEAD_S: Final = 0.75  # at the start of every chapter, before its first words
SENTENCE_PAUSE_S: Final = 0.25  # between chunks inside a paragraph
PARAGRAPH_PAUSE_S: Final = 0.6  # after the last chunk of a paragraph
CHAPTER_PAUSE_S: Final = 1.5  # at the end of every chapter, before the next one starts

# Piper reads whole sentences well; longer chunks only cost memory. ONNX Runtime's arena
# grows to the largest chunk's activations: with the joe voice at 200 characters two engine
# processes peaked at 896 MB together, at 400 at 1,529 MB, for the same speed.
PIPER_MAX_CHUNK_CHARS: Final = 200

# Chunks per padded batch on a GPU, unless the free VRAM allows fewer: one H100 spoke ~20,000
# chars/s at 64 Piper chunks a batch against ~6,000 at 16 (HEURISTIC conv search).
GPU_MAX_BATCH: Final = 64
MAX_BATCH_SIZE: Final = 512  # what --batch-size accepts

# Largest EPUB the web UI accepts; real novels are 0.3-5 MB, illustrated ones rarely 100 MB.
MAX_UPLOAD_MB: Final = 200

# The token the web UI asks for beyond loopback (`ui.guard`): a chosen one (AUDIOPUB_TOKEN)
# shorter than this is refused; the one made at start is 32 random characters.
MIN_TOKEN_CHARS: Final = 16
# Different wrong tokens one client address may offer before it is refused (HTTP 429) for
# TOKEN_LOCKOUT_S, each next time twice as long, up to TOKEN_LOCKOUT_MAX_S (`ui.token_lockout`):
# a typo or two cost nothing, and a guesser soon gets 5 tries an hour.
TOKEN_GUESSES: Final = 5
TOKEN_LOCKOUT_S: Final = 60.0
TOKEN_LOCKOUT_MAX_S: Final = 3600.0

# Jobs waiting or running at once: a flood of submissions must not fill the disk with copies.
MAX_ACTIVE_JOBS: Final = 50

# Speech runs at ~15-19 characters per second at speed 1; the low end sizes disk estimates.
CHARS_PER_AUDIO_SECOND: Final = 15

# AAC bitrate for the .m4b: speech at 64 kb/s mono is transparent for audiobooks.
AAC_BITRATE: Final = "64k"

# Default engine and voice: the Piper voice shipped on PyPI, so a fresh install speaks.
DEFAULT_ENGINE: Final = "piper"
DEFAULT_PIPER_VOICE: Final = "en_US-joe-medium"

# Limits on an EPUB's zip, so a hostile file can't exhaust memory, disk or time (issue #6).
# Entries in the archive: the biggest real EPUBs (comics, dictionaries) hold a few thousand.
EPUB_MAX_ENTRIES: Final = 10_000
# All entries together as their headers declare them; real books unpack to well under 1 GiB.
EPUB_MAX_UNPACKED_BYTES: Final = 1 << 30
# Bytes really unpacked while reading (text, TOC, cover): 128 MiB is ~30 times the whole Bible.
EPUB_MAX_READ_BYTES: Final = 128 << 20
# One XHTML page, parsed whole into memory: real ones are well under 1 MiB, and 16 MiB of
# dense markup already takes ~500 MB to parse.
EPUB_MAX_DOCUMENT_BYTES: Final = 16 << 20
# The cover picture: real ones are 0.1-5 MB and at most ~25 Mpx (a print cover at 300 dpi).
# A bigger one is not used: it would travel into the page, the job and the .m4b, and decoding
# 20000x20000 pixels alone takes 1.2 GB.
EPUB_MAX_COVER_BYTES: Final = 20_000_000
EPUB_MAX_COVER_PIXELS: Final = 50_000_000
# Unpacked:packed size of one entry; real text deflates 3-16:1, zip bombs reach ~1000:1.
EPUB_MAX_COMPRESSION_RATIO: Final = 100
# Entries up to this size unpacked are harmless whatever their ratio (e.g. a page of spaces).
EPUB_RATIO_FREE_BYTES: Final = 1 << 20
# Books in other formats (see docs/formats.md). A text, Markdown or HTML file is read whole
# like one EPUB page (`EPUB_MAX_DOCUMENT_BYTES`); a Word, OpenDocument or zipped FB2 file with
# the EPUB's zip limits; an FB2 file, pictures inside, up to `EPUB_MAX_READ_BYTES`.
# The text part of a Word or OpenDocument file (word/document.xml, content.xml): their XML is
# ~8 times the text, so a long novel's is ~10 MiB.
OFFICE_MAX_DOCUMENT_BYTES: Final = 64 << 20
# PDFs are read in a separate process that is stopped past these: pages (the longest real
# books have ~1,500), seconds (a 300-page novel takes ~30 s on one slow core) and memory.
PDF_MAX_BYTES: Final = 256 << 20
PDF_MAX_PAGES: Final = 3_000
PDF_MAX_SECONDS: Final = 600.0
PDF_MAX_MEMORY_BYTES: Final = 3 << 30
# Calibre's ebook-convert, for MOBI and AZW3: seconds before the conversion is given up.
EBOOK_CONVERT_SECONDS: Final = 300.0
# A book whose letters are more than this share in scripts the voice can't read is refused.
MAX_UNSPEAKABLE_SHARE: Final = 0.3


# How long a server keeps a job's engine processes after the job, for the next one: starting
# them again costs 11-30 s; idle, they hold ~0.5 GB each (the Piper joe voice).
ENGINE_IDLE_S: Final = 600.0


# Optional CUDA settings that `audiopub bench --cuda-tuning` compares; none is on by default
# until a GPU measures it faster (AUDIOPUB_CUDA_TUNING=max_workspace,pad_nc1d turns them on):
# two cuDNN settings, and Piper's decoder in half precision (`tts.half_precision`).
CUDA_TUNINGS: Final = ("max_workspace", "pad_nc1d", "fp16_decoder")


# The environment variables Audiopub reads, all here: `from_environ` turns them into one
# `Settings`. Each name's meaning is on the field it sets.
DATA_DIR_ENV: Final = "AUDIOPUB_DATA_DIR"
MODELS_DIR_ENV: Final = "AUDIOPUB_MODELS_DIR"
BATCH_SIZE_ENV: Final = "AUDIOPUB_BATCH_SIZE"
CUDA_TUNING_ENV: Final = "AUDIOPUB_CUDA_TUNING"
ENGINE_IDLE_ENV: Final = "AUDIOPUB_ENGINE_IDLE_S"
CPU_WORKERS_ENV: Final = "AUDIOPUB_CPU_WORKERS"
RAY_ADDRESS_ENV: Final = "AUDIOPUB_RAY_ADDRESS"
TOKEN_ENV: Final = "AUDIOPUB_TOKEN"
HOSTS_ENV: Final = "AUDIOPUB_ALLOWED_HOSTS"  # more names, separated by commas or spaces
# An engine's own variables (AUDIOPUB_<ENGINE>_*) are declared in its folder (`EngineSetting`).
HUB_TIMEOUT_ENV: Final = "HF_HUB_ETAG_TIMEOUT"  # huggingface_hub's own names, honoured here too
HUB_ENDPOINT_ENV: Final = "HF_ENDPOINT"
HUB_METADATA_TIMEOUT_S: Final = 10.0  # seconds the Hub has to answer a metadata request


@dataclass(frozen=True)
class Settings:
    """The options a person sets outside the command line, read from the environment once
    (`from_environ`), with the command line's overriding them (`load`). Plain, picklable
    values: handed to engine processes as they are."""

    data_dir: Path  # jobs, uploads, finished books (AUDIOPUB_DATA_DIR, else XDG_DATA_HOME)
    models_dir: Path  # downloaded and dropped-in models (AUDIOPUB_MODELS_DIR)
    models_dir_chosen: bool = False  # AUDIOPUB_MODELS_DIR set: the old ./models is not read
    # Keep chapter WAVs after the book is written (AUDIOPUB_KEEP_INTERMEDIATE=1).
    keep_intermediate_files: bool = False
    # Keep a finished job's chunk audio, so converting the book again (after a lexicon edit,
    # say) speaks only what changed (AUDIOPUB_KEEP_CHUNK_AUDIO=0 removes it instead).
    keep_chunk_audio: bool = True
    # Bring each chapter to the audiobook standard's levels (AUDIOPUB_LEVEL_CHAPTERS=0: keep
    # the voice's own, measured all the same).
    level_chapters: bool = True
    # Chunks per batch for every job that sets none (AUDIOPUB_BATCH_SIZE); None: the fastest
    # for the device.
    batch_size: int | None = None
    cuda_tuning: frozenset[str] = frozenset()  # see CUDA_TUNINGS (AUDIOPUB_CUDA_TUNING)
    engine_idle_s: float = ENGINE_IDLE_S  # see ENGINE_IDLE_S (AUDIOPUB_ENGINE_IDLE_S)
    # The Ray cluster that speaks jobs' chunks (`--ray`, AUDIOPUB_RAY_ADDRESS: what `ray.init`
    # takes, e.g. `auto`, `host:6379`, `ray://host:10001`); None: this machine.
    ray_address: str | None = None
    # Engine processes for CPU synthesis (AUDIOPUB_CPU_WORKERS; 1 = in-process); None: as many
    # as the cores and memory allow (`jobs.cpu_sizing`).
    cpu_workers: int | None = None
    # The web UI's token, chosen by the person (AUDIOPUB_TOKEN); a secret: never printed.
    token: str | None = field(default=None, repr=False)
    allowed_hosts: tuple[str, ...] = ()  # more names for the web UI (AUDIOPUB_ALLOWED_HOSTS)
    # The AUDIOPUB_* variables as the environment set them (the token aside), for the
    # engines' own settings, which each engine reads and checks itself (`EngineSetting`).
    environment: Mapping[str, str] = field(default_factory=dict)
    hub_metadata_timeout_s: float = HUB_METADATA_TIMEOUT_S  # (HF_HUB_ETAG_TIMEOUT)
    hub_endpoint: str | None = None  # the Hugging Face Hub's address (HF_ENDPOINT)
    # The GPUs CUDA shows this process, and its order of them, as CUDA reads its variables.
    cuda_visible_devices: str | None = None
    cuda_device_order: str = ""


def from_environ(environ: Mapping[str, str]) -> Settings:
    """The settings an environment gives: defaults where it sets nothing. SettingInvalid
    names a variable whose value can't be used."""
    data = environ.get(DATA_DIR_ENV)
    if data:
        data_dir = folder(data)
    else:
        base = environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
        data_dir = Path(base) / "audiopub"
    models = environ.get(MODELS_DIR_ENV)
    return Settings(
        data_dir=data_dir,
        models_dir=folder(models) if models else data_dir / "models",
        models_dir_chosen=bool(models),
        keep_intermediate_files=_flag(environ, "AUDIOPUB_KEEP_INTERMEDIATE", default=False),
        keep_chunk_audio=_flag(environ, "AUDIOPUB_KEEP_CHUNK_AUDIO", default=True),
        level_chapters=_flag(environ, "AUDIOPUB_LEVEL_CHAPTERS", default=True),
        batch_size=_parsed(environ, BATCH_SIZE_ENV, parse_batch_size),
        cuda_tuning=_parsed(environ, CUDA_TUNING_ENV, parse_cuda_tuning) or frozenset(),
        engine_idle_s=_engine_idle_s(environ.get(ENGINE_IDLE_ENV, "").strip()),
        ray_address=environ.get(RAY_ADDRESS_ENV, "").strip() or None,
        cpu_workers=_cpu_workers(environ.get(CPU_WORKERS_ENV)),
        token=environ.get(TOKEN_ENV, "").strip() or None,
        allowed_hosts=tuple(environ.get(HOSTS_ENV, "").replace(",", " ").split()),
        environment={
            name: value
            for name, value in environ.items()
            if name.startswith("AUDIOPUB_") and name != TOKEN_ENV  # the secret, kept once
        },
        hub_metadata_timeout_s=_parsed(environ, HUB_TIMEOUT_ENV, float) or HUB_METADATA_TIMEOUT_S,
        hub_endpoint=environ.get(HUB_ENDPOINT_ENV) or None,
        cuda_visible_devices=environ.get("CUDA_VISIBLE_DEVICES"),
        cuda_device_order=environ.get("CUDA_DEVICE_ORDER", ""),
    )


@dataclass(frozen=True)
class EngineSetting(Generic[T]):
    """One option of one engine, set by an environment variable: declared in the engine's
    folder and listed by its `EngineInfo.settings`, so this module needs to know no engine.
    `read` gives its value from the settings in force, as they were read from the environment
    (`Settings.environment`) and handed to engine processes."""

    env: str  # the variable: AUDIOPUB_<ENGINE>_<NAME>
    parse: Callable[[str], T]  # the variable's text to the value; ValueError says what's wrong
    default: T  # while the variable is unset or empty
    description: str  # one line, for a person

    def read(self, options: Settings | None = None) -> T:
        """Its value in `options` (None: the settings in force, `current`); SettingInvalid
        names the variable when its text can't be used."""
        chosen = options if options is not None else current()
        text = chosen.environment.get(self.env, "")
        if not text.strip():
            return self.default
        try:
            return self.parse(text)
        except ValueError as exc:
            raise SettingInvalid(f"{self.env}: {exc}") from None

    def given(self, options: Settings, text: str) -> Settings:
        """`options` with the text a command line's option gave, as if the variable held it."""
        return replace(options, environment={**options.environment, self.env: text})

    def argument(self, text: str) -> T:
        """`parse` for argparse, which shows its message as is."""
        try:
            return self.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None


def folder(text: str) -> Path:
    """An `EngineSetting`'s parser for a folder: `~` is the home folder, as the shell would."""
    return Path(text).expanduser()


def load(ray_address: str | None = None) -> Settings:
    """This process's settings as a command starts: defaults, then its environment, then the
    command line's options (None: not given)."""
    loaded = from_environ(os.environ)
    if ray_address:
        loaded = replace(loaded, ray_address=ray_address)
    return loaded


_installed: Settings | None = None  # see `current`


def current() -> Settings:
    """The settings this process runs under: those a command installed when it started
    (`installed`), else, in code run without one (tests, a library caller), the environment's
    as it is now (`from_environ`)."""
    return _installed if _installed is not None else from_environ(os.environ)


@contextmanager
def installed(chosen: Settings) -> Iterator[Settings]:
    """`chosen` is what `current` answers inside the block, in every thread of the process;
    the settings before are back after it."""
    global _installed
    before, _installed = _installed, chosen
    try:
        yield chosen
    finally:
        _installed = before


def install(chosen: Settings) -> None:
    """`chosen` is what `current` answers from now on in this process (an engine process
    given its parent's settings)."""
    global _installed
    _installed = chosen


def keep_intermediate_files() -> bool:
    return current().keep_intermediate_files


def keep_chunk_audio() -> bool:
    return current().keep_chunk_audio


def level_chapters() -> bool:
    return current().level_chapters


def batch_size_override() -> int | None:
    """Chunks per batch for every job that sets none (AUDIOPUB_BATCH_SIZE); None: the fastest
    for the device."""
    return current().batch_size


def cuda_tuning() -> frozenset[str]:
    """The CUDA settings turned on for every GPU session (AUDIOPUB_CUDA_TUNING)."""
    return current().cuda_tuning


def parse_cuda_tuning(text: str) -> frozenset[str]:
    """Comma-separated names of CUDA_TUNINGS ("" or "default": none); ValueError names the
    unknown ones."""
    names = {name.strip() for name in text.split(",") if name.strip()} - {"default"}
    unknown = sorted(names - set(CUDA_TUNINGS))
    if unknown:
        raise ValueError(
            f"unknown {', '.join(unknown)}; the settings are {', '.join(CUDA_TUNINGS)}"
        )
    return frozenset(names)


def parse_batch_size(text: str) -> int:
    """A batch size as a person typed it (option, variable); ValueError says what is wrong."""
    try:
        size = int(text)
    except ValueError:
        raise ValueError(f"a batch size is a whole number, not {text!r}") from None
    if not 1 <= size <= MAX_BATCH_SIZE:
        raise ValueError(f"a batch size is 1-{MAX_BATCH_SIZE} chunks, not {size}")
    return size


def batch_size_argument(text: str) -> int:
    """`parse_batch_size` for argparse, which shows its message as is."""
    try:
        return parse_batch_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def engine_idle_s() -> float:
    """Seconds idle engine processes are kept for the next job (AUDIOPUB_ENGINE_IDLE_S)."""
    return current().engine_idle_s


def ray_address() -> str | None:
    """The Ray cluster that speaks jobs' chunks (see `Settings.ray_address`)."""
    return current().ray_address


def _parsed(environ: Mapping[str, str], name: str, parse: Callable[[str], T]) -> T | None:
    value = environ.get(name, "").strip()
    if not value:
        return None
    try:
        return parse(value)
    except ValueError as exc:
        raise SettingInvalid(f"{name}: {exc}") from None


def _engine_idle_s(value: str) -> float:
    if not value:
        return ENGINE_IDLE_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise SettingInvalid(f"{ENGINE_IDLE_ENV}: expected seconds (0 or more), not {value!r}")
    return seconds


def _cpu_workers(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return max(1, int(value))
    except ValueError:
        raise SettingInvalid(
            f"{CPU_WORKERS_ENV}: expected a number of processes, not {value!r}"
        ) from None


def _flag(environ: Mapping[str, str], name: str, default: bool) -> bool:
    value = environ.get(name, "").strip().lower()
    if not value:
        return default
    return value not in ("0", "false", "no", "off")


def data_dir() -> Path:
    """Where jobs, uploads and finished books live (AUDIOPUB_DATA_DIR overrides)."""
    return current().data_dir


def model_cache_dir() -> Path:
    """Models Audiopub derives from the user's (rewritten for speed); safe to delete."""
    return data_dir() / "model-cache"


def models_dir() -> Path:
    """Where downloaded and dropped-in models live, the same wherever Audiopub is started:
    `models/` in the data directory (AUDIOPUB_MODELS_DIR overrides)."""
    return current().models_dir


def old_models_dir() -> Path | None:
    """`models/` of the current directory, where Audiopub used to look: still read while it
    holds models and AUDIOPUB_MODELS_DIR is not set (the first time, a note says how to move
    them). None otherwise."""
    if current().models_dir_chosen:
        return None
    try:
        old = Path.cwd() / "models"
        held = [
            p.name for p in old.iterdir() if not p.name.startswith(".") and p.name != "README.md"
        ]  # a checkout's own
    except OSError:  # no such folder, or the current directory is gone
        return None
    if not held or old.resolve() == models_dir().resolve():
        return None
    # Once per command: not again in its engine processes (children of it).
    if old not in _NOTED_OLD_MODELS and multiprocessing.parent_process() is None:
        _NOTED_OLD_MODELS.add(old)
        new = models_dir()
        moves = " ".join(str(old / name) for name in sorted(held))
        log.warning(
            "Models are also read from %s, where Audiopub looked before; they belong "
            "in %s now: move them there (`mkdir -p %s && mv %s %s/`), or set "
            "AUDIOPUB_MODELS_DIR=%s to keep them where they are.",
            old,
            new,
            new,
            moves,
            new,
            old,
        )
    return old


_NOTED_OLD_MODELS: set[Path] = set()  # old folders already noted in this process


def model_folders(name: str) -> list[Path]:
    """Where a folder of the models directory (`piper`, `supertonic-3`, …) is looked for, the
    first found winning: the models directory, then the old `./models` while it is read."""
    folders = [models_dir() / name]
    old = old_models_dir()
    if old is not None and (old / name).is_dir():
        folders.append(old / name)
    return folders
