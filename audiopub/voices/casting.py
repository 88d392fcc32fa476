"""A cast of voices for a book: the narrator in one voice, each character's quotations in
another, chosen from the engine's voices and kept per book with the user's corrections.

    assign_voices   a voice per character: distinct for the characters with the most lines
                    while the engine has voices to spare, of the character's gender where both
                    are known, never the narrator's, the same every time it is cast again
    CastFile        what is kept per book (<data dir>/books/<book key>/cast.json, beside its
                    lexicon): the quotations and speakers as the finder attributed them, the
                    user's corrections (names, speakers of quotations, voices, genders), and
                    the characters with their voices as last cast
    Cast            the cast as it is spoken: the corrected attribution, a voice per character
    rename, merge, split, reassign, set_voice, set_gender   corrections, kept in the file

A cast speaks with one engine (its voices of one sample rate): `check_voicing` refuses others.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from audiopub.atomic import atomic_write
from audiopub.book.cast.attribution import NARRATOR as FIRST_PERSON
from audiopub.book.cast.models import Attribution, Character, Gender, Quote
from audiopub.book.lexicons.lexicon import book_key
from audiopub.book.models import Book
from audiopub.book.voicing import VoicedSpan, Voicing, cast_summary
from audiopub.errors import AudiopubError
from audiopub.tts.engine import Engine, Voice, voice_of

FILE_NAME: Final = "cast.json"
# What `audiopub cast` and the Cast panel say of a book where no one speaks.
NO_ONE_SPEAKS: Final = (
    "no one speaks in this book, as far as Audiopub can tell: the narrator reads it all"
)
VERSION: Final = 1


def book_cast_path(data_dir: Path, epub: Path) -> Path:
    """Where a book's cast is kept: its own folder, beside its lexicon."""
    return Path(data_dir) / "books" / book_key(epub) / FILE_NAME


# --- voices ----------------------------------------------------------------------------------


def cast_voices(voices: Iterable[Voice], narrator: Voice, language: str | None) -> list[Voice]:
    """The voices a cast may give characters, of an engine's `voices`: those that read the
    book's language (the narrator's where the book names none) at the narrator's sample rate,
    not the narrator's; of those, the voices whose own language it is where there are any
    (every Kokoro voice reads English, a Japanese voice with its accent)."""
    readers = [
        voice
        for voice in voices
        if voice.id != narrator.id
        and voice.sample_rate == narrator.sample_rate
        and (voice.speaks(language) if language else voice.language == narrator.language)
    ]
    if not language:
        return readers
    native = [voice for voice in readers if _primary(voice.language) == _primary(language)]
    return native or readers


def _primary(tag: str) -> str:
    return tag.replace("_", "-").split("-", 1)[0].lower()


def _stable_rank(name: str, voice: str) -> str:
    # A hash, not Python's hash(): the same on every run, so casting again changes nothing.
    return hashlib.sha256(f"{name}\0{voice}".encode()).hexdigest()


def _gender_fit(character: Character, voice: Voice) -> int:
    """0: the same gender; 1: one of them unknown; 2: the other gender."""
    gender = voice.gender  # as the engine declares it
    if character.gender is None or gender is None:
        return 1
    return 0 if gender == character.gender else 2


def speaking_order(characters: Iterable[Character]) -> list[Character]:
    """Most lines first (they choose first), then by name: the order voices are given in."""
    return sorted(characters, key=lambda c: (-c.lines, c.name))


def assign_voices(
    characters: Sequence[Character],
    pool: Sequence[Voice],
    narrator: Voice,
    chosen: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A voice id per character name, from `pool`, keeping the `chosen` ones.

    Characters choose in `speaking_order`. Each takes the first voice it ranks (its gender,
    then the narrator's accent, then a stable hash of its name and the voice) that no one has
    yet and is not of the other gender; when none is left it shares the one of its gender
    the fewest characters have. Never the narrator's voice, but for the first-person narrator
    (the finder's `FIRST_PERSON`: "I said"), who is the one telling the story. The same
    characters and voices give the same cast every time.
    """
    chosen = dict(chosen or {})
    voices = dict(chosen)
    if any(c.name == FIRST_PERSON for c in characters):
        voices.setdefault(FIRST_PERSON, narrator.id)  # "I said": the one who tells the story
    candidates = [voice for voice in pool if voice.id != narrator.id]
    if not candidates:
        if any(c.name not in voices for c in characters):
            raise AudiopubError(
                f"No voice is left for the characters: the engine has no other voice than the "
                f"narrator's ({narrator.id}) in the book's language at {narrator.sample_rate} Hz"
            )
        return voices
    taken = Counter(voice for voice in voices.values() if voice != narrator.id)
    for character in speaking_order(characters):
        if character.name in voices:
            continue
        ranked = sorted(
            candidates,
            key=lambda v: (
                _gender_fit(character, v),
                v.language != narrator.language,
                _stable_rank(character.name, v.id),
            ),
        )
        fitting = [v for v in ranked if _gender_fit(character, v) < 2] or ranked
        free = [v for v in fitting if taken[v.id] == 0]
        pick = free[0] if free else min(fitting, key=lambda v: (taken[v.id], fitting.index(v)))
        voices[character.name] = pick.id
        taken[pick.id] += 1
    return voices


# --- the book's cast file ----------------------------------------------------------------------


def quote_key(quote: Quote) -> str:
    """Names a quotation in the corrections: where it starts."""
    return f"{quote.chapter}:{quote.paragraph}:{quote.start}"


@dataclass(frozen=True)
class CastFile:
    """What is kept of a book's cast: the finder's attribution and the user's corrections."""

    attribution: Attribution
    names: Mapping[str, str] = field(default_factory=dict)  # renamed or merged: old → new
    speakers: Mapping[str, str | None] = field(default_factory=dict)  # quote_key → speaker
    voices: Mapping[str, str] = field(default_factory=dict)  # character → the voice chosen
    genders: Mapping[str, Gender | None] = field(default_factory=dict)
    # The cast last made of it, for a person reading the file: engine, narrator, and each
    # character with its voice. Made again from the rest whenever it is asked for.
    made: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "made": dict(self.made),
            "names": dict(self.names),
            "speakers": dict(self.speakers),
            "voices": dict(self.voices),
            "genders": dict(self.genders),
            "attribution": self.attribution.to_dict(),
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> CastFile:
        return CastFile(
            Attribution.from_dict(data.get("attribution", {})),
            dict(data.get("names", {})),
            dict(data.get("speakers", {})),
            dict(data.get("voices", {})),
            dict(data.get("genders", {})),
            dict(data.get("made", {})),
        )

    def corrected(self) -> Attribution:
        """The attribution with the user's corrections: names mapped (a merge joins aliases and
        keeps the first known gender), speakers of quotations reassigned (a name no character
        has yet is a new character), genders set, lines counted again; a character no
        quotation is left to is gone."""
        characters: dict[str, Character] = {}
        for original in self.attribution.characters:
            name = self.final_name(original.name)
            known = characters.get(name)
            # A renamed character keeps its old name as an alias; every one keeps its aliases.
            aliases = (
                (*original.aliases, original.name) if name != original.name else original.aliases
            )
            if known is None:
                characters[name] = Character(name, _unique(aliases), original.gender)
            else:
                characters[name] = Character(
                    name,
                    _unique((*known.aliases, *original.aliases, *aliases)),
                    known.gender or original.gender,
                )
        quotes = []
        for quote in self.attribution.quotes:
            key = quote_key(quote)
            # A speaker the user gave is a name as it is now; the finder's are mapped.
            if key in self.speakers:
                speaker = self.speakers[key]
            else:
                speaker = self.final_name(quote.speaker) if quote.speaker is not None else None
            if speaker is not None and speaker not in characters:
                characters[speaker] = Character(speaker)
            quotes.append(replace(quote, speaker=speaker))
        lines = Counter(q.speaker for q in quotes if q.speaker is not None)
        return Attribution(
            tuple(
                replace(
                    c,
                    gender=self.genders.get(c.name, c.gender),
                    lines=lines[c.name],
                    aliases=tuple(a for a in c.aliases if a not in characters),
                )
                for c in characters.values()
                if lines[c.name]
            ),
            tuple(quotes),
        )

    def final_name(self, name: str) -> str:
        """A name after every rename and merge (a chain of them followed to its end)."""
        seen = {name}
        while name in self.names and self.names[name] not in seen:
            name = self.names[name]
            seen.add(name)
        return name


def _unique(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def read_cast_file(path: Path) -> CastFile | None:
    """The book's cast file, or None where there is none yet."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return CastFile.from_dict(json.loads(text))
    except (ValueError, KeyError, TypeError) as exc:
        raise AudiopubError(f"{path} is not a cast file Audiopub can read ({exc})") from exc


# --- the cast as it is spoken ------------------------------------------------------------------


@dataclass(frozen=True)
class Cast:
    """A book's characters with their voices, and its quotations with their speakers."""

    engine: str
    narrator: str
    attribution: Attribution  # corrected
    voices: Mapping[str, str]  # character → voice

    def voice_of(self, quote: Quote) -> str:
        """Who reads a quotation: its speaker's voice, the narrator's for one no one says."""
        return self.voices.get(quote.speaker, self.narrator) if quote.speaker else self.narrator

    def voicing(self, engine: Engine) -> Voicing:
        """What a job keeps of it: the spans other voices than the narrator's read, and the
        model identity of each voice (it names their chunks' audio)."""
        spans: dict[tuple[int, int], list[VoicedSpan]] = {}
        for quote in self.attribution.quotes:
            voice = self.voice_of(quote)
            if voice != self.narrator:
                spans.setdefault((quote.chapter, quote.paragraph), []).append(
                    (quote.start, quote.end, voice)
                )
        used = sorted(set(self.voices.values()))
        return Voicing(
            self.engine,
            self.narrator,
            dict(self.voices),
            {voice: engine.model_id(voice) for voice in used},
            {key: tuple(sorted(value)) for key, value in spans.items()},
        )

    def summary(self) -> str:
        """ "cast: 3 characters in 2 voices (narrator af_heart)"."""
        return f"cast: {cast_summary(self.voices, self.narrator)}"

    def to_dict(self) -> dict[str, Any]:
        """Characters with their voices and quotations with theirs (what `cast --json` prints:
        a quotation's speaker is None where no one could tell)."""
        return {
            "engine": self.engine,
            "narrator": self.narrator,
            "characters": [
                {**c.to_dict(), "voice": self.voices.get(c.name)}
                for c in speaking_order(self.attribution.characters)
            ],
            "quotes": [
                {
                    "chapter": q.chapter,
                    "paragraph": q.paragraph,
                    "start": q.start,
                    "end": q.end,
                    "text": q.text,
                    "speaker": q.speaker,
                    "how": q.how,
                    "voice": self.voice_of(q),
                }
                for q in self.attribution.quotes
            ],
        }


Attribute = Callable[[Book], Attribution]


class BookCast:
    """One book's cast file, read and written: the corrections and the cast they make."""

    def __init__(self, path: Path, book: Book, attribute: Attribute) -> None:
        self.path = path
        self._book = book
        self._attribute = attribute
        self._file: CastFile | None = None

    @classmethod
    def of(cls, data_dir: Path, epub: Path, book: Book, attribute: Attribute) -> BookCast:
        return cls(book_cast_path(data_dir, epub), book, attribute)

    @property
    def file(self) -> CastFile:
        """The kept file; the finder attributes the book on first use (then it is kept)."""
        if self._file is None:
            self._file = read_cast_file(self.path)
            if self._file is None:
                self._save(CastFile(self._attribute(self._book)))
        assert self._file is not None
        return self._file

    def _save(self, cast_file: CastFile) -> None:
        with atomic_write(self.path) as temp:
            temp.write_text(
                json.dumps(cast_file.to_dict(), ensure_ascii=False, indent=1), encoding="utf-8"
            )
        self._file = cast_file

    def cast(self, engine: Engine, narrator: str, language: str | None = None) -> Cast:
        """The cast for `engine` with this narrator: voices chosen where the user chose them
        (if the engine has them), the rest assigned (`assign_voices`)."""
        narrator_voice = voice_of(engine, narrator)
        attribution = self.file.corrected()
        chosen = {}
        for name, voice in self.file.voices.items():
            try:
                voice_of(engine, voice)
            except AudiopubError:
                continue  # another engine's voice: that engine's casts keep it
            chosen[name] = voice
        pool = cast_voices(engine.voices(), narrator_voice, language or self._book.language)
        names = {c.name for c in attribution.characters}
        voices = assign_voices(
            attribution.characters,
            pool,
            narrator_voice,
            {name: voice for name, voice in chosen.items() if name in names},
        )
        cast = Cast(engine.name, narrator, attribution, voices)
        made = {
            "engine": engine.name,
            "narrator": narrator,
            "characters": [
                {**character.to_dict(), "voice": voices.get(character.name)}
                for character in speaking_order(attribution.characters)
            ],
        }
        if made != self.file.made:
            self._save(replace(self.file, made=made))
        return cast

    def listed(self, engine: Engine, narrator: str) -> tuple[Cast, bool]:
        """The cast as `audiopub cast` and the Cast panel show it, and whether it has voices
        for the characters: with an engine of one voice, the characters and their lines with
        no voice given (`unvoiced`)."""
        if self.can_cast(engine, narrator):
            return self.cast(engine, narrator), True
        return self.unvoiced(engine, narrator), False

    def can_cast(self, engine: Engine, narrator: str, language: str | None = None) -> bool:
        """Whether the engine has a voice for the characters beside the narrator's (Kokoro or
        a multi-speaker Piper voice does; the embedded one-voice Piper does not)."""
        pool = cast_voices(
            engine.voices(), voice_of(engine, narrator), language or self._book.language
        )
        return bool(pool)

    def unvoiced(self, engine: Engine, narrator: str) -> Cast:
        """The characters and who says each quotation, with no voice given to anyone beyond
        those the user chose: what `cast` shows when the engine has one voice."""
        voice_of(engine, narrator)
        attribution = self.file.corrected()
        names = {c.name for c in attribution.characters}
        chosen = {name: voice for name, voice in self.file.voices.items() if name in names}
        return Cast(engine.name, narrator, attribution, chosen)

    def find_again(self) -> int:
        """Have the finder read the book afresh (a newer Audiopub finds more), keeping every
        correction. Returns how many corrections name no character or quotation the finder
        found this time: they stay in the file and count again where a later finding matches
        them."""
        kept = self._file or read_cast_file(self.path)
        found_now = self._attribute(self._book)
        fresh = CastFile(found_now) if kept is None else replace(kept, attribution=found_now)
        # A name a split of yours made is yours, found or not.
        found = {c.name for c in fresh.attribution.characters} | set(fresh.speakers.values())
        keys = {quote_key(q) for q in fresh.attribution.quotes}
        self._save(fresh)
        return sum(name not in found for name in fresh.names) + sum(
            key not in keys for key in fresh.speakers
        )

    # --- corrections ---

    def _names(self) -> set[str]:
        return {c.name for c in self.file.corrected().characters}

    def _require(self, name: str) -> None:
        if name not in self._names():
            raise AudiopubError(
                f"No character {name!r} in the cast; the characters are "
                f"{', '.join(sorted(self._names())) or 'none'}"
            )

    def rename(self, name: str, new_name: str) -> None:
        """Call a character by another name (its old one becomes an alias)."""
        self._require(name)
        if new_name in self._names():
            raise AudiopubError(f"{new_name!r} is a character already: merge them instead")
        self._rename(name, new_name)

    def merge(self, name: str, into: str) -> None:
        """Make two characters one: `name`'s quotations are `into`'s, its names its aliases."""
        self._require(name)
        self._require(into)
        self._rename(name, into)

    def _rename(self, name: str, new_name: str) -> None:
        current = self.file
        names = {old: new for old, new in current.names.items()}
        for old, new in names.items():
            if new == name:
                names[old] = new_name
        names[name] = new_name
        names.pop(new_name, None)  # a name given back is no longer mapped away
        voices = dict(current.voices)
        if name in voices:
            voices.setdefault(new_name, voices.pop(name))
        speakers = {
            key: new_name if speaker == name else speaker
            for key, speaker in current.speakers.items()
        }
        self._save(replace(current, names=names, voices=voices, speakers=speakers))

    def split(self, name: str, new_name: str, quotes: Iterable[Quote]) -> None:
        """Give some of a character's quotations to a new one (the finder made two people
        one)."""
        self._require(name)
        self.reassign(quotes, new_name)

    def reassign(self, quotes: Iterable[Quote], speaker: str | None) -> None:
        """Say who speaks these quotations (None: no one, the narrator reads them)."""
        current = self.file
        speakers = dict(current.speakers)
        for quote in quotes:
            speakers[quote_key(quote)] = speaker
        self._save(replace(current, speakers=speakers))

    def set_voice(self, name: str, voice: str | None, engine: Engine) -> None:
        """Choose a character's voice (None: assigned again); checked against the engine
        (a Kokoro mix is a voice)."""
        self._require(name)
        voices = dict(self.file.voices)
        if voice is None:
            voices.pop(name, None)
        else:
            voices[name] = voice_of(engine, voice).id
        self._save(replace(self.file, voices=voices))

    def set_gender(self, name: str, gender: Gender | None) -> None:
        self._require(name)
        self._save(replace(self.file, genders={**self.file.genders, name: gender}))


def check_voicing(voicing: Voicing, engine: Engine, narrator: Voice) -> None:
    """Refuse a cast that cannot be spoken with this job: another engine's, or voices at
    another sample rate than the narrator's (a chapter is one stream at one rate)."""
    if voicing.engine != engine.name:
        raise AudiopubError(
            f"The cast was made for {voicing.engine}, not {engine.name}: a cast speaks with one "
            "engine's voices (cast the book again with this engine)"
        )
    for voice_id in sorted(set(voicing.voices.values())):
        voice = voice_of(engine, voice_id)
        if voice.sample_rate != narrator.sample_rate:
            raise AudiopubError(
                f"The voice {voice_id} speaks at {voice.sample_rate} Hz, the narrator "
                f"{narrator.id} at {narrator.sample_rate} Hz: a cast's voices must share one "
                "sample rate"
            )
