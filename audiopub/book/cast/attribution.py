"""Who says each quotation: deterministic sieves, surest first, each leaving what it can't
decide to the next (after He, Barbosa & Kondrak 2013 and Muzny et al. 2017).

1. **Explicit tags** name the speaker: "said Mrs. Carew", "the Inspector cried", or a
   description the book gives a name elsewhere ("my friend, Mr. Sherlock Holmes") or uses
   often enough to be a person of its own ("said the artilleryman"). Speech that introduces
   its speaker ("My name is Helen Stoner") counts too, and so does a speech verb ending the
   narration with its subject earlier in the sentence ("Wild Horse stamped and said").
2. **Pronoun tags** ("she said", "said he", and "the woman cried") go to the nearest person of
   that gender: the subject of the paragraph's narration, else the one in the conversation
   who did not speak the turn before, else named shortly before or after. "I said" is the
   first-person narrator, whose name is the one the others call them by ("my dear Watson").
3. **Nearby names**: narration that begins the paragraph, or is the paragraph just before,
   with someone as its subject ('Holmes chuckled. "…"') gives them the speech.
4. **Turn-taking** (`conversation`): a speech continued over paragraphs is one turn; in a run
   of turns two people alternate, and a name called out ("…, Mr. Holmes?") says who answers.

A paragraph's quotations share its speaker unless one of them has a tag of its own naming
someone else ('"What is it?" said the Man. And the Woman said, "…"').
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from audiopub.book.cast.characters import (
    NOT_NAMES,
    Cast,
    Person,
    build_cast,
    clean_name,
    pronoun_gender,
)
from audiopub.book.cast.conversation import (
    NO_TAG,
    Decisions,
    Paragraph,
    Tag,
    take_turns,
    units,
)
from audiopub.book.cast.models import Attribution, Character, Gender, Quote
from audiopub.book.cast.quotes import book_elisions, find_quotes, quote_style
from audiopub.book.cast.ranker import rank_speakers
from audiopub.book.cast.tags import (
    NOUN_GENDERS,
    TITLES,
    SubjectKind,
    find_tag,
    language_table,
    noun_gender,
)
from audiopub.book.models import Book

__all__ = ["NARRATOR", "attribute", "by_lines", "sieves"]

NARRATOR = "Narrator"  # the first-person narrator's name when the book gives none
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# A description used as a tag this often is a person of its own ("the artilleryman").
_NOMINAL_MIN = 3
# How far (in paragraphs) a pronoun may look back, or forward, for the person it means.
_PRONOUN_BACK = 25
_PRONOUN_AHEAD = 50
# Speech that says who speaks: "My name is Helen Stoner", "I am Sherlock Holmes".
_INTRODUCTION = re.compile(
    r"(?:^|[.!?]\s)(?:[Mm]y name is|I am|I'm)\s+((?:(?:Mr|Mrs|Miss|Dr)\.?\s+)?[A-Z][\w'’-]+"
    r"(?:\s+[A-Z][\w'’-]+)*)"
)
_TITLED_NAME = re.compile(
    r"\b(?:Mr|Mrs|Miss|Ms|Dr|Lady|Lord|Sir|Madame|Mme|Mademoiselle|Mlle|Monsieur|Herr|Frau"
    r"|Fräulein|Señor|Señora|Señorita|Don|Doña)\.?(?:\s(?:van|von|der|de|du)){0,2}"
    r"(?:\s(?:St\.|[A-Z][\w'’-]+)){1,3}"
)
# "Mr. and Mrs. Allen", "Mr and Mrs Musgrove": two people, a Mr. and a Mrs. of that name.
_COUPLE = re.compile(r"\b(Mr|Mrs)(\.?) and (Mrs|Mr)\.? ((?:St\. )?[A-Z][\w'’-]+)\b(?!\s[A-Z][a-z])")
# Words that open a call but name no one ("Oh", "My God", "Good-bye", "Thanks").
_EXCLAMATIONS = frozenset(
    "oh ah eh ha hm hum hallo hello hullo my good goodbye good-bye thanks thank yes no well "
    "dear god heavens mon ma mein mio tcha pooh bah".split()
)
# Narration that hands over to speech set below it: "…Charles said--", "…she replied:".
_INTRODUCES_SPEECH = re.compile(r"(?:[:,]|--|[—–])\s*$")
_SENTENCE_END = re.compile(r"[.!?]['\"]?\s")
_LONGER_NAME = re.compile(r"['’]?\s[A-Z][a-z]")
# What may come before a sentence's subject: its start, a conjunction, an article.
_SUBJECT_BEFORE = re.compile(
    r"(?:^|[.!?;:]\s+|\b(?:and|then|but|when|while|as)\s+)(?:the\s+)?\W*$", re.IGNORECASE
)
# A vocative inside speech: ", Watson," "my dear Watson." "Mr. Holmes?" at a clause's edge.
_VOCATIVE = re.compile(
    r"(?:^|[,;!?]\s|(?<!Mr)(?<!Mrs)(?<!Dr)(?<!St)\.\s)(?:(?:my|My)\s+(?:dear|good)\s+|(?:[Dd]ear|O|Oh)\s+)?"
    r"((?:(?:Mr|Mrs|Miss|Dr|Sir|Lady|Lord|Captain|Inspector)\.?\s+)?(?:St\.\s)?[A-Z][\w'’-]+"
    r"(?:\s+[A-Z][\w'’-]+)?)(?=[,.!?;]|$)"
)


def attribute(book: Book) -> Attribution:
    """Find every quotation of the book and who says it."""
    paragraphs, cast, narrator = sieves(book)
    rank_speakers(paragraphs, cast, narrator)
    return _result(paragraphs, cast)


def sieves(book: Book) -> tuple[list[Paragraph], Cast, int | None]:
    """The book's paragraphs with their quotations, tags, names and the sieves' speakers; the
    cast; the first-person narrator (a person of the cast) where there is one."""
    language = book.language
    paragraphs = _find_all(book)
    lowercase = _lowercase_words(book)
    for before, p in zip([None, *paragraphs], paragraphs, strict=False):
        p.tag = _tag(p, language, lowercase, before)

    mentions: Counter[str] = Counter(
        p.tag.name for p in paragraphs if p.tag.name and p.tag.kind == "name"
    )
    nominals = Counter(p.tag.name for p in paragraphs if p.tag.name and p.tag.kind == "noun")
    appositions = _appositions(paragraphs, mentions, nominals)
    for nominal, count in _nominal_people(paragraphs).items():
        if nominal not in appositions:
            mentions[nominal] += count
    mentions.update(_titled_names(paragraphs))
    mentions.update(_full_names(paragraphs, mentions, lowercase))
    _count_narration_mentions(paragraphs, mentions)
    cast = build_cast(mentions, _pronouns_after_names(paragraphs, mentions))
    for nominal, name in appositions.items():
        person = cast.resolve(name)
        # "the girl, Oliver" where the two merely meet: a description of the other gender
        # is not the name beside it.
        if person is None:
            continue
        described, gender = noun_gender(nominal), cast.people[person].gender
        if described is not None and gender is not None and described != gender:
            continue
        cast.by_form[nominal] = person
    for form, person in list(cast.by_form.items()):
        if cast.people[person].gender is None and form[:1].islower():
            cast.people[person].gender = noun_gender(form)

    narrator = None
    if any(p.tag.kind == "first_person" for p in paragraphs):
        narrator = len(cast.people)
        cast.people.append(Person(NARRATOR, Counter({NARRATOR: 1})))
    _find_names(paragraphs, cast, lowercase)
    for nominal, person in _descriptions(paragraphs, cast).items():
        cast.by_form[nominal] = person
    decisions = _explicit(paragraphs, cast, narrator)
    decisions = _distant_subject(paragraphs, decisions, language)
    if narrator is not None:
        narrator, decisions = _name_narrator(paragraphs, decisions, cast, narrator)
    decisions = _pronouns(paragraphs, decisions, cast, narrator)
    decisions = _nearby(paragraphs, decisions, narrator)
    decisions = take_turns(paragraphs, decisions, [person.gender for person in cast.people])
    for at, (person, how) in decisions.items():
        paragraphs[at].speaker, paragraphs[at].how = person, how
    return paragraphs, cast, narrator


def by_lines(attribution: Attribution) -> list[Character]:
    """The characters, who speaks most first (the order a cast list is shown in)."""
    return sorted(attribution.characters, key=lambda c: (-c.lines, c.name))


# --- finding --------------------------------------------------------------------------------


def _find_all(book: Book) -> list[Paragraph]:
    every = [p for c in book.chapters for p in c.paragraphs]
    style = quote_style(every)
    elisions = book_elisions(every) if style == "single" else frozenset()
    found: list[Paragraph] = []
    for chapter in book.chapters:
        after_open = False
        for index, text in enumerate(chapter.paragraphs):
            if index == 0 and text.strip() == chapter.title.strip():
                continue
            spans = find_quotes(text, style, book.language, after_open, elisions)
            after_open = bool(spans) and spans[-1].open
            found.append(Paragraph(chapter.index, index, text, spans))
    return found


def _tag(
    p: Paragraph, language: str | None, lowercase: Counter[str], before: Paragraph | None = None
) -> Tag:
    """The paragraph's speech tag: after one of its quotations, else before the first, else
    ending the narration paragraph just before ('Presently Charles said--' and the speech
    set apart below)."""
    if not p.spans:
        return NO_TAG
    text = p.text
    tag = None
    for i, span in enumerate(p.spans):
        end = p.spans[i + 1].start if i + 1 < len(p.spans) else len(text)
        tag = find_tag(text[span.end : end], language, "after")
        if tag is not None:
            break
    if tag is None and text[: p.spans[0].start].strip():
        tag = find_tag(text[: p.spans[0].start], language, "before")
    if (
        tag is None
        and p.spans[0].start == 0
        and before is not None
        and before.chapter == p.chapter
        and not before.spans
        and _INTRODUCES_SPEECH.search(before.text)
    ):
        tag = find_tag(before.text, language, "before")
    if tag is None:
        return NO_TAG
    kind: SubjectKind | None = tag.kind
    name = None
    if tag.kind == "name":
        name = clean_name(tag.subject, lowercase)
        if name is None:
            kind = None
    elif tag.kind == "noun":
        name = tag.subject.lower()
    return Tag(kind, name, tag.gender, _span_names(p, language, lowercase))


def _span_names(
    p: Paragraph, language: str | None, lowercase: Counter[str]
) -> tuple[str | None, ...]:
    """The name tag of each quotation of its own, where a paragraph gives speech to two people
    ('"What is it?" said the Man. And the Woman said, "His name…"'): a tag ending the
    narration before it (and not the one the quotation before already had), else one opening
    the narration after it."""
    text = p.text
    names: list[str | None] = []
    for i, span in enumerate(p.spans):
        start = p.spans[i - 1].end if i else 0
        end = p.spans[i + 1].start if i + 1 < len(p.spans) else len(text)
        before = find_tag(text[start : span.start], language, "before")
        if before is not None and i:
            previous = find_tag(text[start : span.start], language, "after")
            if previous is not None and previous.start >= before.start:
                before = None
        tag = before or find_tag(text[span.end : end], language, "after")
        name = None
        if tag is not None and tag.kind == "name":
            name = clean_name(tag.subject, lowercase)
        names.append(name)
    return tuple(names)


def _narration(p: Paragraph) -> list[tuple[int, str]]:
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


def _lowercase_words(book: Book) -> Counter[str]:
    counts: Counter[str] = Counter()
    for chapter in book.chapters:
        for paragraph in chapter.paragraphs:
            counts.update(w for w in _WORD.findall(paragraph) if w[0].islower())
    return counts


# --- names in narration ---------------------------------------------------------------------


def _names_pattern(forms: list[str]) -> re.Pattern[str]:
    alternatives = sorted((re.escape(f) for f in forms), key=len, reverse=True)
    return re.compile(r"(?<![\w.])(?:" + "|".join(alternatives) + r")(?![\w])", re.IGNORECASE)


def _form_of(match: str, forms: dict[str, str]) -> str | None:
    """A matched name back to its form; a name must keep its capital, a description may
    start a sentence ("The artilleryman")."""
    form = forms.get(match.casefold())
    if form is None:
        return None
    if form[:1].isupper() and match != form:
        return None
    return form


def _count_narration_mentions(paragraphs: list[Paragraph], mentions: Counter[str]) -> None:
    """How often each speaker's name is also written in narration (makes "Holmes" more used
    than a once-named "Mr. Holmes")."""
    if not mentions:
        return
    forms = {f.casefold(): f for f in mentions}
    pattern = _names_pattern(list(mentions))
    extra: Counter[str] = Counter()
    for p in paragraphs:
        for _, piece in _narration(p):
            for match in pattern.finditer(piece):
                form = _form_of(match.group(), forms)
                if form is not None:
                    extra[form] += 1
    mentions.update(extra)


def _vocatives(speech: str) -> list[str]:
    """The names a quotation calls out, without the half-names the pattern can take ("Mrs.
    St" of "Mrs. St. Clair has") or possessives ("Dr. Becher's")."""
    names = []
    for match in _VOCATIVE.finditer(speech):
        name = match.group(1)
        if name.endswith((" St", "'s", "’s")):
            continue
        names.append(name)
    return names


def _titled_names(paragraphs: list[Paragraph]) -> Counter[str]:
    """Names written with a title ("Miss Mary Sutherland") in the narration or called out in
    speech: people, whether or not a tag ever names them, so a pronoun can mean them."""
    found: Counter[str] = Counter()
    for p in paragraphs:
        for _, piece in _narration(p):
            found.update(m.group().removesuffix("'s") for m in _TITLED_NAME.finditer(piece))
            for m in _COUPLE.finditer(piece):
                surname = m.group(4).removesuffix("'s").removesuffix("’s")
                found[f"{m.group(1)}{m.group(2)} {surname}"] += 1
        # Speech calling someone by a titled name ("Well, Mrs. St. Clair, …") names them too.
        for span in p.spans:
            for name in _vocatives(span.text):
                if _TITLED_NAME.fullmatch(name):
                    found[name] += 1
    return found


_FULL_NAME = re.compile(r"(?<![\w.])([A-Z][a-z]+)\s([A-Z][a-z]+(?:-[A-Z][a-z]+)?)(?![\w'’])")


def _full_names(
    paragraphs: list[Paragraph], mentions: Counter[str], lowercase: Counter[str]
) -> Counter[str]:
    """A speaker's full name the book writes untitled ("Bill" said, "Bill Gorton" elsewhere),
    at least twice: the name a reader knows them by, which joins their first
    name and their titled forms ("Adela", "Adela Quested", "Miss Quested")."""
    words = {w for form in mentions for w in form.split()[-1:] + form.split()[:1]}
    spoken = {form for form in mentions if " " not in form and form[:1].isupper()}
    firsts = spoken - {w for form in mentions if " " in form for w in form.split()[-1:]}
    surnames = {form.split()[-1] for form in mentions if form.split()[0].lower() in TITLES}
    found: Counter[str] = Counter()
    for p in paragraphs:
        for piece in (p.text,):  # speech too: "This is Bill Gorton," introduces him
            for match in _FULL_NAME.finditer(piece):
                first, last = match.groups()
                if first not in words and last not in words:
                    continue
                if first.lower() in TITLES or first.lower() in NOT_NAMES:
                    continue
                # An ordinary word starting a sentence, or a place ("Street"); a word the tags
                # already use as a name is one ("Bill" said, though the bill is paid).
                if any(lowercase[w.lower()] >= 3 and w not in spoken for w in (first, last)):
                    continue
                found[match.group()] += 1
    # Twice, or once where both words are names the book already uses ("Adela", "Miss
    # Quested": "Adela Quested").
    return Counter(
        {
            name: n
            for name, n in found.items()
            if n >= 2 or (name.split()[0] in firsts and name.split()[-1] in surnames)
        }
    )


def _appositions(
    paragraphs: list[Paragraph], mentions: Counter[str], nominals: Counter[str]
) -> dict[str, str]:
    """Descriptions the narration puts beside a name ("my friend, Mr. Sherlock Holmes",
    "Sherlock Holmes, my friend"): the description means that name."""
    if not nominals or not mentions:
        return {}
    names = _names_pattern(list(mentions)).pattern
    described = "|".join(re.escape(n) for n in sorted(nominals, key=len, reverse=True))
    after = re.compile(rf"\b({described}),?\s+({names})", re.IGNORECASE)
    before = re.compile(rf"({names}),\s+({described})\b", re.IGNORECASE)
    seen: dict[str, Counter[str]] = {}
    for p in paragraphs:
        for _, piece in _narration(p):
            for match in after.finditer(piece):
                seen.setdefault(match.group(1).lower(), Counter())[match.group(2)] += 1
            for match in before.finditer(piece):
                seen.setdefault(match.group(2).lower(), Counter())[match.group(1)] += 1
    return {nominal: names.most_common(1)[0][0] for nominal, names in seen.items()}


def _nominal_people(paragraphs: list[Paragraph]) -> Counter[str]:
    """Descriptions a chapter uses as a speaker often enough to be a person of their own:
    "the artilleryman", "the curate". Not "my friend" or "our visitor" (someone already
    named, in other words), nor "the lady" (whichever lady is there)."""
    per_chapter: Counter[tuple[int, str]] = Counter(
        (p.chapter, p.tag.name)
        for p in paragraphs
        if p.tag.kind == "noun" and p.tag.name and p.tag.name.startswith("the ")
    )
    people: Counter[str] = Counter()
    for (_, nominal), count in per_chapter.items():
        if count >= _NOMINAL_MIN and nominal.split()[-1] not in NOUN_GENDERS:
            people[nominal] += count
    return people


def _pronouns_after_names(
    paragraphs: list[Paragraph], mentions: Counter[str]
) -> dict[str, Counter[Gender]]:
    genders: dict[str, Counter[Gender]] = {}
    if not mentions:
        return genders
    forms = {f.casefold(): f for f in mentions}
    pattern = _names_pattern(list(mentions))
    for p in paragraphs:
        for _, piece in _narration(p):
            for match in pattern.finditer(piece):
                form = _form_of(match.group(), forms)
                if form is None:
                    continue
                after = piece[match.end() : match.end() + 60]
                cut = re.search(r"[.!?;]|\b[A-Z][a-z]", after)
                gender = pronoun_gender(after[: cut.start()] if cut else after)
                if gender is not None:
                    genders.setdefault(form, Counter())[gender] += 1
    return genders


def _find_names(paragraphs: list[Paragraph], cast: Cast, lowercase: Counter[str]) -> None:
    """Each paragraph's people named in narration, and those its speech calls by name."""
    forms = {f.casefold(): f for f in cast.by_form}
    pattern = _names_pattern(list(cast.by_form)) if forms else None
    for p in paragraphs:
        if pattern is not None:
            for offset, piece in _narration(p):
                for match in pattern.finditer(piece):
                    form = _form_of(match.group(), forms)
                    if form is None or _LONGER_NAME.match(piece, match.end()):
                        continue  # "Baker Street" is not Mr. Baker
                    subject = _SUBJECT_BEFORE.search(piece[: match.start()]) is not None
                    p.narration_names.append((offset + match.start(), cast.by_form[form], subject))
            p.narration_names.sort()
        for span in p.spans:
            for name in _vocatives(span.text):
                if lowercase[name.split()[-1].lower()] >= 3 or name.lower() in TITLES:
                    continue  # an ordinary word starting a clause, or a title alone
                p.vocative_names.append(name)
                person = cast.resolve(name)
                if person is not None:
                    p.vocatives.append(person)
            introduced = _INTRODUCTION.search(span.text)
            if introduced is not None and p.introduces is None:
                p.introduces = cast.resolve(introduced.group(1))


# Descriptions that point back to whoever was last named, never to one person.
_RELATIVE = frozenset("other former latter first second third one same".split())
# How many paragraphs either side of a tag make its company, how often a description must
# tag speech to be judged, and how consistently one person must keep it company.
_COMPANY = 4
_DESCRIBED_MIN = 3
_COMPANY_SHARE = 0.5
_COMPANY_LIFT = 2.0


def _descriptions(paragraphs: list[Paragraph], cast: Cast) -> dict[str, int]:
    """Descriptions that stand for one named person throughout the book ("the doctor" for Mr.
    Losberne, "the old gentleman" for Mr. Brownlow): the person named around most of the
    description's tags, far more often than around speech in general. The one it talks
    to (the speaker of the turn next to it) is not it."""
    spoken = [at for at, p in enumerate(paragraphs) if p.spans]

    def company(at: int) -> set[int]:
        chapter = paragraphs[at].chapter
        near: set[int] = set()
        for q in paragraphs[max(0, at - _COMPANY) : at + _COMPANY + 1]:
            if q.chapter == chapter:
                near.update(person for _, person, _ in q.narration_names)
        for q in paragraphs[max(0, at - 1) : at] + paragraphs[at + 1 : at + 2]:
            if q.spans and q.tag.kind == "name" and q.tag.name:
                near.discard(cast.resolve(q.tag.name))
        return near

    uses: dict[str, list[int]] = {}
    for at in spoken:
        p = paragraphs[at]
        words = (p.tag.name or "").split()
        # "the doctor", not "a voice" (anyone) or "his father" (whose father depends on "his").
        if p.tag.kind == "noun" and words[0] == "the" and words[-1] not in _RELATIVE:
            uses.setdefault(" ".join(words), []).append(at)
    # Used in one scene only, a description is someone the book does not name (the jailer).
    uses = {
        d: ats
        for d, ats in uses.items()
        if len(ats) >= _DESCRIBED_MIN and len({paragraphs[at].chapter for at in ats}) > 1
    }
    if not uses:
        return {}
    base: Counter[int] = Counter()
    for at in spoken:
        base.update(company(at))
    found: dict[str, int] = {}
    for description, ats in uses.items():
        own = cast.by_form.get(description)
        seen: Counter[int] = Counter()
        for at in ats:
            seen.update(company(at) - {own} if own is not None else company(at))
        gender = noun_gender(description)
        best = None
        for person, count in seen.most_common():
            share = count / len(ats)
            lift = share / (base[person] / len(spoken))
            if share < _COMPANY_SHARE:
                break
            # Not the narrator, nor a description of its own ("the child").
            named = cast.people[person].name[:1].isupper()
            if lift < _COMPANY_LIFT or person == cast.narrator or not named:
                continue
            if gender is not None and cast.people[person].gender != gender:
                continue
            best = person
            break
        if best is not None:
            found[description] = best
    return found


# --- sieves -----------------------------------------------------------------------------------


def _explicit(paragraphs: list[Paragraph], cast: Cast, narrator: int | None) -> Decisions:
    """The first sieve: tags naming the speaker, "I said", and speech saying who speaks."""
    decisions: Decisions = {}
    for at, p in enumerate(paragraphs):
        if p.tag.kind in ("name", "noun") and p.tag.name:
            person = cast.resolve(p.tag.name) if p.tag.kind == "name" else None
            if p.tag.kind == "noun":
                person = cast.by_form.get(p.tag.name)
            if person is not None:
                decisions[at] = person, "explicit"
        elif p.tag.kind == "first_person" and narrator is not None:
            decisions[at] = narrator, "pronoun"
        if at not in decisions and p.introduces is not None:
            decisions[at] = p.introduces, "nearby"
    return decisions


def _distant_subject(
    paragraphs: list[Paragraph], decisions: Decisions, language: str | None
) -> Decisions:
    """A speech verb ending the narration before the speech, its subject named earlier in the
    same sentence: 'Then Wild Horse stamped with his wild foot and said, "…"'."""
    verbs = _speech_verb_at_end(language)
    decisions = dict(decisions)
    for at, p in enumerate(paragraphs):
        if at in decisions or p.tag.kind is not None or not p.spans:
            continue
        before = p.text[: p.spans[0].start]
        verb = verbs.search(before)
        if verb is None:
            continue
        sentence_start = max(
            (m.end() for m in _SENTENCE_END.finditer(before, 0, verb.start())), default=0
        )
        named = [
            (person, subject)
            for pos, person, subject in p.narration_names
            if sentence_start <= pos < verb.start()
        ]
        subjects = [person for person, subject in named if subject]
        if subjects:
            decisions[at] = subjects[-1], "explicit"
    return decisions


@lru_cache(maxsize=8)
def _speech_verb_at_end(language: str | None) -> re.Pattern[str]:
    verbs = "|".join(
        sorted((re.escape(v) for v in language_table(language).verbs), key=len, reverse=True)
    )
    return re.compile(rf"\b(?:{verbs})\b[^.!?\"']{{0,30}}[,:]?\s*$", re.IGNORECASE)


def _name_narrator(
    paragraphs: list[Paragraph], decisions: Decisions, cast: Cast, narrator: int
) -> tuple[int, Decisions]:
    """The narrator's name: the one the people answering them call them by, most often.
    Where that is a person already in the cast, the narrator is that person, and the lines
    given to the narrator are theirs."""

    def speaker(at: int) -> int | None:
        return decisions[at][0] if at in decisions else None

    called: Counter[str] = Counter()
    chapters: dict[str, set[int]] = {}
    for at, p in enumerate(paragraphs):
        if speaker(at) != narrator:
            continue
        # The turns around theirs, tagged or not (the one spoken to answers untagged).
        for near in [*range(max(0, at - 2), at), *range(at + 1, min(len(paragraphs), at + 3))]:
            other = paragraphs[near]
            if other.spans and other.chapter == p.chapter and speaker(near) != narrator:
                called.update(set(other.vocative_names))
                for vocative in other.vocative_names:
                    chapters.setdefault(vocative, set()).add(p.chapter)
    # A name has a vowel and is no exclamation: "H'm", "Oh", "My God" are no one's; a word one
    # speaker says in one chapter ("Thenks") is no name either.
    # A titled name ("Mr. Barnes") is a name wherever it is said.
    called = Counter(
        {
            n: c
            for n, c in called.items()
            if re.search(r"[aeiouyAEIOUY]", n)
            and n.split()[0].lower() not in _EXCLAMATIONS
            and (len(chapters[n]) >= 2 or _TITLED_NAME.fullmatch(n))
        }
    )
    if not called:
        return narrator, decisions
    name, count = called.most_common(1)[0]
    if count < 2:
        return narrator, decisions
    person = cast.resolve(name)
    if person is None:
        cast.people[narrator].name = name
        cast.people[narrator].forms[name] += 1
        cast.by_form[name] = narrator
        person = narrator
    else:
        decisions = {
            at: (person if who == narrator else who, how) for at, (who, how) in decisions.items()
        }
        for p in paragraphs:
            p.vocatives = [person if v == narrator else v for v in p.vocatives]
    # The other names the others call the narrator by, often enough and no one else's
    # ("Jake", and "Barnes" too).
    # A person the narration names ("Mr. Barnes") but no tag gives a line is the narrator
    # too, when that is what the others call them.
    speaking = Counter(who for who, _ in decisions.values())
    names = [name]
    for alias, times in called.items():
        if alias == name or times < 2:
            continue
        owner = cast.resolve(alias)
        if owner is not None and owner != person and not speaking[owner]:
            _merge(paragraphs, cast, owner, person)
            owner = person
        if owner in (None, person):
            cast.people[person].forms[alias] += times
            cast.by_form[alias] = person
            names.append(alias)
    for p in paragraphs:
        if any(n in p.vocative_names for n in names) and person not in p.vocatives:
            p.vocatives.append(person)
    cast.narrator = person
    return person, decisions


def _merge(paragraphs: list[Paragraph], cast: Cast, other: int, person: int) -> None:
    """`other` is `person`: their names and mentions become theirs."""
    cast.people[person].forms.update(cast.people[other].forms)
    cast.people[other].forms.clear()
    for form, owner in cast.by_form.items():
        if owner == other:
            cast.by_form[form] = person
    for p in paragraphs:
        p.narration_names = [
            (pos, person if who == other else who, subject)
            for pos, who, subject in p.narration_names
        ]
        p.vocatives = [person if v == other else v for v in p.vocatives]


def _pronouns(
    paragraphs: list[Paragraph], decisions: Decisions, cast: Cast, narrator: int | None
) -> Decisions:
    """Pronoun tags, and descriptions with a gender ("the lady"), resolved to a person. A
    paragraph's answer counts for the ones after it."""
    decisions = dict(decisions)
    for at, p in enumerate(paragraphs):
        if at in decisions or p.tag.kind not in ("pronoun", "noun"):
            continue
        gender = p.tag.gender
        if gender is None and p.tag.kind == "noun":
            continue
        person = _pronoun_person(paragraphs, decisions, at, cast, gender, narrator)
        if person is not None:
            decisions[at] = person, "pronoun"
    return decisions


def _pronoun_person(
    paragraphs: list[Paragraph],
    decisions: Decisions,
    at: int,
    cast: Cast,
    gender: Gender | None,
    narrator: int | None,
) -> int | None:
    p = paragraphs[at]
    first_quote = p.spans[0].start

    def fits(person: int, strict: bool = True) -> bool:
        if person == narrator:
            return False
        actual = cast.people[person].gender
        if gender is None:
            return True
        return actual == gender or (not strict and actual is None)

    # Named in the paragraph's narration before its speech: 'Mr. Wilson laughed. "…" said he.'
    before = [(person, subject) for pos, person, subject in p.narration_names if pos < first_quote]
    for strict in (True, False):
        for person, subject in reversed(before):
            if subject and fits(person, strict):
                return person
    # In a conversation: the one of that gender who did not speak last; else who was last
    # named as the subject of a sentence, before or (someone just coming in) after.
    # Who spoke the turn before is not who answers, if this paragraph opens with its speech;
    # after narration the same person may speak again.
    previous = _previous_speaker(paragraphs, decisions, at) if first_quote == 0 else None
    chapter = p.chapter
    end = min(len(paragraphs), at + _PRONOUN_AHEAD)
    back = [j for j in range(max(0, at - _PRONOUN_BACK), at) if paragraphs[j].chapter == chapter]
    ahead = [j for j in range(at, end) if paragraphs[j].chapter == chapter]

    def candidates(j: int, subjects_only: bool, backwards: bool) -> list[int]:
        named = [
            person
            for _, person, subject in paragraphs[j].narration_names
            if subject or not subjects_only
        ]
        # Who speaks counts too, ahead as well: someone who will say "My name is …".
        found = ([decisions[j][0]] if j in decisions else []) + (
            named[::-1] if backwards else named
        )
        return [person for person in found if person != previous]

    for strict in (True, False):
        # In the two paragraphs just before, someone of unknown gender counts too: "The
        # door opened and May came in." and then '"…" she asked' is May.
        for distance, j in enumerate(reversed(back)):
            for person in candidates(j, True, True):
                if fits(person, strict and distance > 1):
                    return person
        for j in ahead:
            for person in candidates(j, True, False):
                if fits(person, strict):
                    return person
    # Last, anyone named: in this paragraph, then before it.
    for j in [at, *reversed(back)]:
        for person in candidates(j, False, True):
            if fits(person) and (j != at or person in dict(before)):
                return person
    return None


def _previous_speaker(paragraphs: list[Paragraph], decisions: Decisions, at: int) -> int | None:
    """Who spoke in the paragraph just before, if it has speech: the turn this one answers."""
    if at == 0:
        return None
    before = paragraphs[at - 1]
    if before.chapter != paragraphs[at].chapter or not before.spans:
        return None
    return decisions[at - 1][0] if at - 1 in decisions else None


def _nearby(paragraphs: list[Paragraph], decisions: Decisions, narrator: int | None) -> Decisions:
    """Narration naming someone as a sentence's subject, just before untagged speech: at the
    start of its paragraph ('Holmes chuckled. "…"'), or as the paragraph before ('The
    artilleryman looked at me for a moment.')."""
    decisions = dict(decisions)
    for at, (before, p) in enumerate(zip([None, *paragraphs], paragraphs, strict=False)):
        if at in decisions or not p.spans or p.spans[0].continues:
            continue
        if p.spans[0].start > 0:
            subjects = [(pos, person) for pos, person, subject in p.narration_names if subject]
            if subjects and subjects[0][0] < 5:
                decisions[at] = subjects[0][1], "nearby"
            elif narrator is not None and p.text.startswith("I "):
                decisions[at] = narrator, "nearby"
            continue
        if before is None or before.spans or before.chapter != p.chapter:
            continue
        first = before.narration_names[0] if before.narration_names else None
        if first is not None and first[2] and first[0] < 5:
            decisions[at] = first[1], "nearby"
    return decisions


# --- result -----------------------------------------------------------------------------------


def _result(paragraphs: list[Paragraph], cast: Cast) -> Attribution:
    for unit in units(paragraphs):
        speakers = [p.speaker for p in unit if p.speaker is not None]
        if speakers:
            first = next(p for p in unit if p.speaker is not None)
            for p in unit:
                p.speaker, p.how = speakers[0], first.how
    quotes: list[Quote] = []
    lines: Counter[int] = Counter()
    for p in paragraphs:
        speaker, how = p.speaker, p.how
        for i, span in enumerate(p.spans):
            own = p.tag.span_names[i] if i < len(p.tag.span_names) else None
            person = cast.resolve(own) if own else None
            if person is not None and person != speaker:
                speaker, how = person, "explicit"
            name = cast.people[speaker].name if speaker is not None else None
            quotes.append(Quote(p.chapter, p.index, span.start, span.end, span.text, name, how))
            if speaker is not None:
                lines[speaker] += 1
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
