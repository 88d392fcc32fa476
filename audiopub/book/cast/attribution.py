"""Who says each quotation: deterministic sieves, surest first, each leaving what it can't
decide to the next (after He, Barbosa & Kondrak 2013 and Muzny et al. 2017).

1. **Explicit tags** name the speaker: "said Mrs. Carew", "the Inspector cried".
2. **Pronoun tags** ("she said", "said he") go to the last person of that gender named in the
   paragraph's narration, else the one of that gender in the conversation who did not speak
   last. "I said" is the first-person narrator.
3. **Continued speech**: a paragraph continuing an open quotation has its speaker.
4. **Nearby names**: a paragraph whose narration names someone as it begins ('Holmes
   chuckled. "…"') gives them the speech.
5. **Turn-taking**: in a run of speech paragraphs, two people alternate; a vocative ("…, Mr.
   Holmes?") tells who answers.

All quotations in one paragraph share a speaker: books start a new paragraph when the speaker
changes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from audiopub.book.cast.characters import Cast, build_cast, clean_name, pronoun_gender
from audiopub.book.cast.models import Attribution, Character, Gender, How, Quote
from audiopub.book.cast.quotes import Span, find_quotes, quote_style
from audiopub.book.cast.tags import Tag, find_tag
from audiopub.book.models import Book

__all__ = ["NARRATOR", "attribute", "by_lines"]

NARRATOR = "Narrator"  # the first-person narrator's name when the book gives none
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


@dataclass
class _Paragraph:
    chapter: int
    index: int
    text: str
    spans: list[Span]
    tag: Tag | None = None
    tag_name: str | None = None  # the cleaned name of an explicit tag
    speaker: int | None = None  # index into the cast
    how: How = "none"
    narration_names: list[tuple[int, int]] = field(default_factory=list)  # (position, person)
    vocatives: list[int] = field(default_factory=list)


def attribute(book: Book) -> Attribution:
    """Find every quotation of the book and who says it."""
    language = book.language
    paragraphs = _find_all(book)
    lowercase = _lowercase_words(book)
    # Tags first: their names make the cast.
    mentions: Counter[str] = Counter()
    for p in paragraphs:
        p.tag = _paragraph_tag(p, language)
        if p.tag is not None and p.tag.kind == "name":
            p.tag_name = clean_name(p.tag.subject, lowercase)
            if p.tag_name:
                mentions[p.tag_name] += 1
    has_narrator = any(p.tag is not None and p.tag.kind == "first_person" for p in paragraphs)
    _count_narration_mentions(paragraphs, mentions)
    genders = _pronouns_after_names(paragraphs, mentions)
    cast = build_cast(mentions, genders)
    narrator = None
    if has_narrator:
        narrator = len(cast.people)
        from audiopub.book.cast.characters import Person

        cast.people.append(Person(NARRATOR, Counter({NARRATOR: 1})))
    _find_names_in_narration(paragraphs, cast)
    _explicit(paragraphs, cast, narrator)
    _pronouns(paragraphs, cast)
    _continued(paragraphs)
    _nearby(paragraphs)
    _turns(paragraphs)
    return _result(paragraphs, cast)


def by_lines(attribution: Attribution) -> list[Character]:
    """The characters, who speaks most first (the order a cast list is shown in)."""
    return sorted(attribution.characters, key=lambda c: (-c.lines, c.name))


# --- finding --------------------------------------------------------------------------------


def _find_all(book: Book) -> list[_Paragraph]:
    style = quote_style(p for c in book.chapters for p in c.paragraphs)
    found: list[_Paragraph] = []
    for chapter in book.chapters:
        after_open = False
        for index, text in enumerate(chapter.paragraphs):
            if index == 0 and text.strip() == chapter.title.strip():
                continue
            spans = find_quotes(text, style, book.language, after_open)
            after_open = bool(spans) and spans[-1].open
            if spans:
                found.append(_Paragraph(chapter.index, index, text, spans))
            else:
                found.append(_Paragraph(chapter.index, index, text, []))
    return found


def _narration(p: _Paragraph) -> list[tuple[int, str]]:
    """The paragraph's text outside its quotations, as (offset, text) pieces."""
    pieces = []
    at = 0
    for span in p.spans:
        if span.start > at:
            pieces.append((at, p.text[at : span.start]))
        at = span.end
    if at < len(p.text):
        pieces.append((at, p.text[at:]))
    return pieces


def _paragraph_tag(p: _Paragraph, language: str | None) -> Tag | None:
    if not p.spans:
        return None
    text = p.text
    for i, span in enumerate(p.spans):
        end = p.spans[i + 1].start if i + 1 < len(p.spans) else len(text)
        tag = find_tag(text[span.end : end], language, "after")
        if tag is not None and _ends_with_tag_punct(span, text):
            return tag
    before = text[: p.spans[0].start]
    if before.strip():
        return find_tag(before, language, "before")
    return None


def _ends_with_tag_punct(span: Span, text: str) -> bool:
    """A tag follows speech that ends in a comma, "?", "!" or a dash; after a full stop the
    narration is a new sentence ('"No." He turned away.') — but 'said he' still counts."""
    return not span.open


def _lowercase_words(book: Book) -> Counter[str]:
    counts: Counter[str] = Counter()
    for chapter in book.chapters:
        for paragraph in chapter.paragraphs:
            counts.update(w for w in _WORD.findall(paragraph) if w[0].islower())
    return counts


# --- names in narration ---------------------------------------------------------------------


def _count_narration_mentions(paragraphs: list[_Paragraph], mentions: Counter[str]) -> None:
    """How often each speaker's name is also written in narration (makes "Holmes" more used
    than a once-named "Mr. Holmes")."""
    if not mentions:
        return
    pattern = _names_pattern(list(mentions))
    extra: Counter[str] = Counter()
    for p in paragraphs:
        for _, piece in _narration(p):
            extra.update(m.group() for m in pattern.finditer(piece))
    mentions.update(extra)


def _names_pattern(forms: list[str]) -> re.Pattern[str]:
    alternatives = sorted((re.escape(f) for f in forms), key=len, reverse=True)
    return re.compile(r"(?<![\w.])(?:" + "|".join(alternatives) + r")(?![\w])")


def _pronouns_after_names(
    paragraphs: list[_Paragraph], mentions: Counter[str]
) -> dict[str, Counter[Gender]]:
    genders: dict[str, Counter[Gender]] = {}
    if not mentions:
        return genders
    pattern = _names_pattern(list(mentions))
    for p in paragraphs:
        for _, piece in _narration(p):
            for match in pattern.finditer(piece):
                after = piece[match.end() : match.end() + 60]
                cut = re.search(r"[.!?;]|\b[A-Z][a-z]", after)
                gender = pronoun_gender(after[: cut.start()] if cut else after)
                if gender is not None:
                    genders.setdefault(match.group(), Counter())[gender] += 1
    return genders


def _find_names_in_narration(paragraphs: list[_Paragraph], cast: Cast) -> None:
    forms = [f for f in cast.by_form]
    if not forms:
        return
    pattern = _names_pattern(forms)
    for p in paragraphs:
        for offset, piece in _narration(p):
            for match in pattern.finditer(piece):
                p.narration_names.append((offset + match.start(), cast.by_form[match.group()]))
        for span in p.spans:
            for vocative in re.finditer(
                r"(?:^|[,!?] )(?:my dear |dear |my good )?(" + pattern.pattern + r")(?=[,.!?]|$)",
                span.text,
            ):
                p.vocatives.append(cast.by_form[vocative.group(1)])


# --- sieves -----------------------------------------------------------------------------------


def _explicit(paragraphs: list[_Paragraph], cast: Cast, narrator: int | None) -> None:
    for p in paragraphs:
        if p.tag is None:
            continue
        if p.tag.kind == "name" and p.tag_name:
            person = cast.resolve(p.tag_name)
            if person is not None:
                p.speaker, p.how = person, "explicit"
        elif p.tag.kind == "first_person" and narrator is not None:
            p.speaker, p.how = narrator, "pronoun"


def _pronouns(paragraphs: list[_Paragraph], cast: Cast) -> None:
    recent: list[int] = []  # people named or speaking, most recent last
    previous_speaker: int | None = None
    for p in paragraphs:
        if p.tag is not None and p.tag.kind == "pronoun" and p.speaker is None:
            gender = p.tag.gender
            fits = [
                person
                for _, person in sorted(p.narration_names)
                if _fits(cast, person, gender) and _before_tag(p)
            ]
            if fits:
                p.speaker, p.how = fits[-1], "pronoun"
            else:
                for person in reversed(recent):
                    if person != previous_speaker and _fits(cast, person, gender, strict=True):
                        p.speaker, p.how = person, "pronoun"
                        break
        for _, person in sorted(p.narration_names):
            _touch(recent, person)
        if p.speaker is not None:
            _touch(recent, p.speaker)
        if p.spans:
            previous_speaker = p.speaker
        elif p.narration_names:
            previous_speaker = None


def _before_tag(p: _Paragraph) -> bool:
    return True


def _touch(recent: list[int], person: int) -> None:
    if person in recent:
        recent.remove(person)
    recent.append(person)
    del recent[:-12]


def _fits(cast: Cast, person: int, gender: Gender | None, strict: bool = False) -> bool:
    if cast.people[person].name == "Narrator":
        return False
    actual = cast.people[person].gender
    if gender is None:
        return True
    return actual == gender if strict else actual in (gender, None)


def _continued(paragraphs: list[_Paragraph]) -> None:
    for before, p in zip(paragraphs, paragraphs[1:], strict=False):
        if p.spans and p.spans[0].continues and p.speaker is None and before.speaker is not None:
            p.speaker, p.how = before.speaker, before.how
    for p, after in reversed(list(zip(paragraphs, paragraphs[1:], strict=False))):
        if after.spans and after.spans[0].continues and p.speaker is None:
            p.speaker, p.how = after.speaker, after.how


def _nearby(paragraphs: list[_Paragraph]) -> None:
    for p in paragraphs:
        if p.speaker is not None or not p.spans or not p.narration_names:
            continue
        # Narration that begins the paragraph with a name: 'Holmes chuckled. "…"'.
        first_at, person = min(p.narration_names)
        if first_at < p.spans[0].start and first_at < 5:
            p.speaker, p.how = person, "nearby"


def _turns(paragraphs: list[_Paragraph]) -> None:
    """Alternation in runs of consecutive speech paragraphs."""
    runs: list[list[_Paragraph]] = []
    run: list[_Paragraph] = []
    for p in paragraphs:
        if p.spans:
            run.append(p)
        else:
            if run:
                runs.append(run)
            run = []
    if run:
        runs.append(run)
    for run in runs:
        changed = True
        while changed:
            changed = False
            for i, p in enumerate(run):
                if p.speaker is not None:
                    continue
                guess = None
                if i >= 1 and run[i - 1].vocatives and run[i - 1].speaker is not None:
                    addressed = [v for v in run[i - 1].vocatives if v != run[i - 1].speaker]
                    if addressed:
                        guess = addressed[0]
                if guess is None and i >= 2 and run[i - 2].speaker is not None:
                    if run[i - 1].speaker not in (None, run[i - 2].speaker):
                        guess = run[i - 2].speaker
                if guess is None and i + 2 < len(run) and run[i + 2].speaker is not None:
                    if run[i + 1].speaker not in (None, run[i + 2].speaker):
                        guess = run[i + 2].speaker
                if guess is not None:
                    p.speaker, p.how = guess, "turn"
                    changed = True


# --- result -----------------------------------------------------------------------------------


def _result(paragraphs: list[_Paragraph], cast: Cast) -> Attribution:
    quotes: list[Quote] = []
    lines: Counter[int] = Counter()
    for p in paragraphs:
        name = cast.people[p.speaker].name if p.speaker is not None else None
        for span in p.spans:
            quotes.append(Quote(p.chapter, p.index, span.start, span.end, span.text, name, p.how))
            if p.speaker is not None:
                lines[p.speaker] += 1
    characters = tuple(
        Character(
            person.name,
            tuple(sorted(f for f in person.forms if f != person.name)),
            person.gender,
            lines[i],
        )
        for i, person in enumerate(cast.people)
        if lines[i]
    )
    return Attribution(characters, tuple(quotes))
