"""What the Voices page lists: every downloadable voice with what is installed, and filters.

No NiceGUI here, and the functions that read disks or the network block: the page calls them
through `run.io_bound`. What brings huggingface_hub (the downloaders) is imported when they run.
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
from audiopub.voices.catalogue import Catalogue

AVAILABLE: Final = "available"
INSTALLED: Final = "installed"
UNFINISHED: Final = "unfinished"  # a download stopped half-way: its complete files are kept

# Names of languages the catalogues may not name (Supertonic-3 reads these), for the filter.
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
    engine: str  # its engine's name
    name: str
    languages: tuple[str, ...]  # primary subtags it speaks: ("de",), Supertonic's many
    language_label: str  # German (Germany) · Deutsch
    quality: str | None = None  # its grade, where its catalogue grades voices
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

    unfinished: frozenset[str]  # catalogue ids with a stopped download
    offers: tuple[Offer, ...] = ()  # the engines' downloads, with what is installed


def installed_now() -> OnDisk:
    """Installed voices and stopped downloads, read from the models folder (blocking). The
    models that read many languages first, then the engines whose voices each read one, by
    language: a few models are not lost below a hundred voices."""
    from audiopub.voices.install import unfinished_downloads  # huggingface_hub, see the top

    by_kind = sorted(registry.engines(), key=lambda info: not info.multilingual)
    offered = tuple(
        offer for info in by_kind if info.downloads is not None for offer in info.downloads.offers()
    )
    return OnDisk(frozenset(unfinished_downloads()), offered)


def hub_address() -> str:
    from audiopub.tts.hub import endpoint  # huggingface_hub, see the top

    return endpoint()


def build_rows(catalogue: Catalogue, have: OnDisk, endpoint: str) -> list[VoiceRow]:
    """A row for every download the engines offer, in `installed_now`'s order."""
    return [_offer_row(offer, catalogue, have, endpoint) for offer in have.offers]


def _offer_row(offer: Offer, catalogue: Catalogue, have: OnDisk, endpoint: str) -> VoiceRow:
    """A download an engine offers (a voice; a Supertonic release; Kokoro-82M, every voice in
    it)."""
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
        quality=offer.quality,
        speakers=offer.speakers,
        size=offer.size or catalogue.sizes.get(offer.id),  # the Hub's, when it was asked
        licence_url=f"{endpoint}/{offer.licence_path}" if offer.licence_path else None,
        status=status,
        origin=offer.installed,
        voice=offer.voice,
        note=note,
        usable=offer.usable,
    )


# --- filters ------------------------------------------------------------------------------


def language_names() -> dict[str, tuple[str, str]]:
    """Primary subtag → (English name, native name), for every language a voice speaks, as
    the catalogues name them (blocking: each reads its copy)."""
    names = dict(_OTHER_LANGUAGES)
    for found in registry.downloads():
        for code, named in found.language_names().items():
            names.setdefault(code, named)
    return names


def qualities() -> tuple[str, ...]:
    """The grades the catalogues' voices come in, worst to best, for the quality filter."""
    return tuple(dict.fromkeys(q for found in registry.downloads() for q in found.qualities))


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
    counts: Counter[str] = Counter()
    for found in registry.downloads():
        for offer in found.offers():
            if not offer.installed:
                counts.update(offer.languages)
    return Offers(language_names(), dict(counts))


def visible(rows: Sequence[VoiceRow], language: str | None, quality: str | None) -> list[VoiceRow]:
    """The rows for a language (primary subtag) and a quality; None or "": any. A quality
    leaves out what its catalogue does not grade (Supertonic's releases)."""
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
