"""What the Voices page lists: every downloadable voice with what is installed, and filters.

No NiceGUI here, and the functions that read disks or the network block: the page calls them
through `run.io_bound`. What brings huggingface_hub (the downloaders, and `voices.installed`,
which reads their records) is imported when they run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from audiopub.book.scripts import primary_subtag
from audiopub.tts import registry
from audiopub.tts.downloads import DOWNLOADED
from audiopub.tts.engine_info import Offer
from audiopub.tts.piper import PIPER
from audiopub.tts.piper.downloads import (
    PIPER_REPO,
    QUALITIES,
    PiperEntry,
    quality_rank,
    voice_download_id,
)
from audiopub.voices.catalogue import Catalogue, local_catalogue

AVAILABLE: Final = "available"
INSTALLED: Final = "installed"
UNFINISHED: Final = "unfinished"  # a download stopped half-way: its complete files are kept

# Supertonic-3 speaks languages no Piper voice does; their names for the language filter.
_OTHER_LANGUAGES: Final = {
    "ar": ("Arabic", "العربية"),
    "bg": ("Bulgarian", "Български"),
    "et": ("Estonian", "Eesti"),
    "hi": ("Hindi", "हिन्दी"),
    "hr": ("Croatian", "Hrvatski"),
    "id": ("Indonesian", "Bahasa Indonesia"),
    "ja": ("Japanese", "日本語"),
    "ko": ("Korean", "한국어"),
    "lt": ("Lithuanian", "Lietuvių"),
    "lv": ("Latvian", "Latviešu"),
    "sl": ("Slovenian", "Slovenščina"),
}

# A preview sentence in each common language (by primary subtag); others hear English.
SAMPLES: Final = {
    "en": "Hello! This is how I will sound when I read your book.",
    "ca": "Hola! Així sonaré quan llegeixi el teu llibre.",
    "cs": "Ahoj! Takhle budu znít, až budu číst vaši knihu.",
    "da": "Hej! Sådan kommer jeg til at lyde, når jeg læser din bog.",
    "de": "Hallo! So klinge ich, wenn ich dein Buch vorlese.",
    "el": "Γεια σας! Έτσι θα ακούγομαι όταν διαβάζω το βιβλίο σας.",
    "es": "¡Hola! Así sonaré cuando lea tu libro.",
    "fi": "Hei! Tältä kuulostan, kun luen kirjaasi.",
    "fr": "Bonjour ! Voici comment je sonnerai en lisant votre livre.",
    "hu": "Helló! Így fogok szólni, amikor felolvasom a könyvedet.",
    "it": "Ciao! Ecco come suonerò quando leggerò il tuo libro.",
    "nl": "Hallo! Zo klink ik wanneer ik je boek voorlees.",
    "no": "Hei! Slik kommer jeg til å høres ut når jeg leser boken din.",
    "pl": "Cześć! Tak będę brzmieć, czytając twoją książkę.",
    "pt": "Olá! É assim que vou soar quando ler o seu livro.",
    "ro": "Bună! Așa voi suna când voi citi cartea ta.",
    "ru": "Здравствуйте! Так я буду звучать, когда буду читать вашу книгу.",
    "sv": "Hej! Så här kommer jag att låta när jag läser din bok.",
    "tr": "Merhaba! Kitabınızı okurken sesim böyle olacak.",
    "uk": "Привіт! Ось так я звучатиму, коли читатиму вашу книгу.",
    "vi": "Xin chào! Đây là giọng của tôi khi đọc sách của bạn.",
    "zh": "你好！这就是我朗读你的书时的声音。",
}


@dataclass(frozen=True)
class VoiceRow:
    """One line of the Voices page."""

    id: str  # what install/remove take: piper:KEY, supertonic-3
    engine: str  # piper, supertonic
    name: str
    languages: tuple[str, ...]  # primary subtags it speaks: ("de",), Supertonic's many
    language_label: str  # German (Germany) · Deutsch
    quality: str | None = None  # Piper's x_low … high
    speakers: int | None = None
    size: int | None = None
    licence_url: str | None = None
    status: str = AVAILABLE
    origin: str | None = None  # built in, downloaded, added by you (installed only)
    voice: str | None = None  # the engine's voice id to preview with; None: can't be heard
    note: str | None = None  # why it can't be heard, what else to know
    usable: bool = False  # an installed Supertonic release the engine could switch to

    @property
    def removable(self) -> bool:
        """Audiopub removes only what it downloaded (and discards unfinished downloads)."""
        return self.status == UNFINISHED or (self.status == INSTALLED and self.origin == DOWNLOADED)


@dataclass(frozen=True)
class OnDisk:
    """What is on this computer now, by catalogue id."""

    piper_origins: dict[str, str]  # piper:KEY → origin
    unfinished: frozenset[str]  # catalogue ids with a stopped download
    offers: tuple[Offer, ...] = ()  # the downloads of the engines that declare theirs


def installed_now() -> OnDisk:
    """Installed voices and stopped downloads, read from the models folder (blocking)."""
    # huggingface_hub, see the top
    from audiopub.voices import installed
    from audiopub.voices.install import unfinished_downloads

    origins = {voice_download_id(voice.id): voice.origin for voice in installed.piper_voices()}
    offered = tuple(offer for found in registry.downloads() for offer in found.offers())
    own_ids = {offer.id for offer in offered}
    stopped = {
        name if name in own_ids else voice_download_id(name) for name in unfinished_downloads()
    }
    return OnDisk(origins, frozenset(stopped), offered)


def hub_address() -> str:
    from audiopub.tts.hub import endpoint  # huggingface_hub, see the top

    return endpoint()


def build_rows(catalogue: Catalogue, have: OnDisk, endpoint: str) -> list[VoiceRow]:
    """The downloads the engines declare (Supertonic's releases, Kokoro), then every Piper voice
    by language and quality, then installed Piper voices the index does not list (the user's
    own)."""
    rows = [_offer_row(offer, catalogue, have, endpoint) for offer in have.offers]
    piper = sorted(
        catalogue.piper.values(),
        key=lambda e: (e.language_english, e.country, e.name, quality_rank(e.quality)),
    )
    rows += [_piper_row(entry, have, endpoint) for entry in piper]
    listed = {row.id for row in rows}
    for voice_id, origin in sorted(have.piper_origins.items()):
        if voice_id not in listed:
            key = voice_id.split(":", 1)[1]
            language = key.split("-", 1)[0]
            rows.append(
                VoiceRow(
                    voice_id,
                    PIPER.name,
                    key,
                    (primary_subtag(language),),
                    language.replace("_", "-"),
                    status=INSTALLED,
                    origin=origin,
                    voice=key,
                    quality=_quality_of(key),
                )
            )
    return rows


def _piper_row(entry: PiperEntry, have: OnDisk, endpoint: str) -> VoiceRow:
    card = next((f.path for f in entry.files if f.name == "MODEL_CARD"), None)
    folder = entry.files[0].path.rsplit("/", 1)[0] if entry.files else ""
    licence = f"{endpoint}/{PIPER_REPO}/blob/main/{card or folder + '/MODEL_CARD'}"
    label = entry.describe_language()
    if entry.language_native and entry.language_native != entry.language_english:
        label += f" · {entry.language_native}"
    origin = have.piper_origins.get(entry.id)
    status = INSTALLED if origin else UNFINISHED if entry.id in have.unfinished else AVAILABLE
    return VoiceRow(
        entry.id,
        PIPER.name,
        entry.key,
        (entry.language_family.lower(),),
        label,
        quality=entry.quality,
        speakers=entry.num_speakers,
        size=entry.size,
        licence_url=licence,
        status=status,
        origin=origin,
        voice=entry.key if origin else None,
    )


def _offer_row(offer: Offer, catalogue: Catalogue, have: OnDisk, endpoint: str) -> VoiceRow:
    """A download an engine declares (a Supertonic release; Kokoro-82M, every voice in it)."""
    status = (
        INSTALLED
        if offer.installed
        else UNFINISHED
        if offer.unfinished or offer.id in have.unfinished
        else AVAILABLE
    )
    mixes = registry.engine_info(offer.engine).mixing is not None
    note = offer.note
    if note is None and offer.installed and mixes:
        note = "Its voices can be mixed on the Convert page."
    return VoiceRow(
        offer.id,
        offer.engine,
        offer.name,
        offer.languages,
        offer.language_label,
        size=offer.size or catalogue.sizes.get(offer.id),  # the Hub's, when it was asked
        licence_url=f"{endpoint}/{offer.licence_path}" if offer.licence_path else None,
        status=status,
        origin=offer.installed,
        voice=offer.voice,
        note=note,
        usable=offer.usable,
    )


def _quality_of(key: str) -> str | None:
    last = key.rsplit("-", 1)[-1]
    return last if last in QUALITIES else None


# --- filters ------------------------------------------------------------------------------


def language_names(catalogue: Catalogue) -> dict[str, tuple[str, str]]:
    """Primary subtag → (English name, native name), for every language a voice speaks."""
    names = dict(_OTHER_LANGUAGES)
    for entry in catalogue.piper.values():
        names.setdefault(
            entry.language_family.lower(), (entry.language_english, entry.language_native)
        )
    return names


def describe(code: str, names: dict[str, tuple[str, str]], between: str = " · ") -> str:
    """ "German · Deutsch" (or "German (Deutsch)" with between="("), the code if unknown."""
    english, native = names.get(code, (code, ""))
    if not native or native == english:
        return english
    return f"{english} ({native})" if between == "(" else f"{english}{between}{native}"


def language_options(rows: Iterable[VoiceRow], names: dict[str, tuple[str, str]]) -> dict[str, str]:
    """Options for the language filter, with how many voices each has: {"de": "German ·
    Deutsch (10)"}, "" first for every language, then by name."""
    rows = list(rows)
    counts = Counter(code for row in rows for code in row.languages)
    options = {"": f"All languages ({len(rows)})"}
    for code in sorted(counts, key=lambda c: describe(c, names).casefold()):
        options[code] = f"{describe(code, names)} ({counts[code]})"
    return options


@dataclass(frozen=True)
class Offers:
    """What the Convert page can suggest, from the voice index on this computer (no network)."""

    names: dict[str, tuple[str, str]]
    downloadable: dict[str, int]  # primary subtag → voices and models not installed


def offers() -> Offers:
    """Per language, how many voices could be downloaded (blocking: reads the models folder)."""
    from audiopub.voices.installed import installed_ids  # huggingface_hub, see the top

    catalogue, have = local_catalogue(), installed_ids()
    counts: Counter[str] = Counter()
    for entry in catalogue.piper.values():
        if entry.id not in have:
            counts[entry.language_family.lower()] += 1
    for found in registry.downloads():  # Supertonic's releases, Kokoro's model
        for offer in found.offers():
            if not offer.installed:
                counts.update(offer.languages)
    return Offers(language_names(catalogue), dict(counts))


def visible(rows: Sequence[VoiceRow], language: str | None, quality: str | None) -> list[VoiceRow]:
    """The rows for a language (primary subtag) and a Piper quality; None or "": any. Only
    Piper grades its voices, so a quality leaves Supertonic out."""
    return [
        row
        for row in rows
        if (not language or language in row.languages) and (not quality or row.quality == quality)
    ]


def sample(language: str) -> tuple[str, str | None]:
    """The sentence a preview speaks in `language`, and a note when it had to be English."""
    code = primary_subtag(language)
    if code in SAMPLES:
        return SAMPLES[code], None
    return SAMPLES["en"], f"No sample sentence in “{language}” yet: this one is English."
