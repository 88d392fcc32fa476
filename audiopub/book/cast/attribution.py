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

What the sieves leave, the speaker ranker (`ranker`) decides; a description no name owns
("said the driver") is then someone of its own it may choose (`mentions.described`).

A paragraph's quotations share its speaker unless one of them has a tag of its own naming
someone else ('"What is it?" said the Man. And the Woman said, "…"').
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from itertools import pairwise

from audiopub.book.cast.characters import (
    Cast,
    Person,
    clean_name,
    first_name_gender,
    split_name,
)
from audiopub.book.cast.conversation import (
    NO_TAG,
    Decisions,
    Paragraph,
    SpanTag,
    Tag,
    bound_by_pronoun,
    exchanges,
    take_turns,
    units,
)
from audiopub.book.cast.kinship import Kin, kin_tag, titled_as
from audiopub.book.cast.mentions import (
    HE_OR_SHE,
    TITLED_NAME,
    book_cast,
    described,
    descriptions,
    find_names,
    lowercase_words,
)
from audiopub.book.cast.models import Attribution, Character, Gender, How, Quote
from audiopub.book.cast.quotes import Span, book_elisions, find_quotes, quote_style
from audiopub.book.cast.ranker import rank_speakers
from audiopub.book.cast.tags import (
    TITLES,
    SubjectKind,
    after_title,
    find_tag,
    is_english,
    language_table,
    names_a_role,
    noun_gender,
)
from audiopub.book.models import Book

__all__ = ["NARRATOR", "attribute", "by_lines", "sieves"]

NARRATOR = "Narrator"  # the first-person narrator's name when the book gives none
# How far (in paragraphs) a pronoun may look back, or forward, for the person it means.
_PRONOUN_BACK = 25
_PRONOUN_AHEAD = 50
# Words that open a call but name no one ("Oh", "My God", "Good-bye", "Thanks").
_EXCLAMATIONS = frozenset(
    "oh ah eh ha hm hum hallo hello hullo my good goodbye good-bye thanks thank yes no well "
    "dear god heavens mon ma mein mio tcha pooh bah".split()
)
# Narration that hands over to speech set below it: "…Charles said--", "…she replied:"
# (reading the text makes a dash that ends a paragraph "..."), or that stops with no mark at
# all (a text that lost its dashes: "…said in a small and quiet voice").
_INTRODUCES_SPEECH = re.compile(r"(?:[:,]|--|[—–]|\.\.\.|[^\W\d_])\s*$")
# A sentence's end: not the full stop of a title or an initial ("Mrs. Musgrove", "J. Smith").
_SENTENCE_END = re.compile(r"(?<!\b[A-Z])" + after_title(negated=True) + r"[.!?]['\"]?\s")


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
    lowercase = lowercase_words(book)
    for before, p in zip([None, *paragraphs], paragraphs, strict=False):
        p.tag = _tag(p, language, lowercase, before)

    cast = book_cast(paragraphs, lowercase)

    narrator = None
    if any(p.tag.kind == "first_person" for p in paragraphs):
        narrator = len(cast.people)
        cast.people.append(Person(NARRATOR, Counter({NARRATOR: 1})))
    find_names(paragraphs, cast, lowercase)
    for nominal, person in descriptions(paragraphs, cast).items():
        cast.by_form[nominal] = person
    _described_subjects(paragraphs, cast, language)
    decisions = _explicit(paragraphs, cast, narrator)
    _family_first_names(paragraphs, cast, decisions)
    decisions = _answered_names(paragraphs, cast, decisions, narrator)
    decisions = _distant_subject(paragraphs, decisions, language)
    if narrator is not None:
        narrator, decisions = _name_narrator(paragraphs, decisions, cast, narrator, lowercase)
    decisions = _pronouns(paragraphs, decisions, cast, narrator)
    decisions = _nearby(paragraphs, decisions, narrator)
    decisions = take_turns(paragraphs, decisions, [person.gender for person in cast.people])
    for at, (person, how) in decisions.items():
        paragraphs[at].speaker, paragraphs[at].how = person, how
    described(paragraphs, cast)
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
    set apart below), after any speech of that one's own."""
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
    # The narration ending the paragraph before, after any speech of its own ('"…" but her
    # voice died away. … Katharine raised her head and said:').
    lead = ""
    if before is not None and before.chapter == p.chapter:
        lead = before.text[before.spans[-1].end :] if before.spans else before.text
        if before.spans and len(lead.split()) < 3:
            lead = ""
    if tag is None and p.spans[0].start == 0 and _INTRODUCES_SPEECH.search(lead):
        tag = find_tag(lead, language, "before")
    if tag is None:
        # A quotation inside the paragraph may still have a tag of its own ('…, the Dodo
        # suddenly called out "The race is over!"').
        own = _span_tags(p, language, lowercase)
        return Tag(spans=own) if any(own) else NO_TAG
    kind: SubjectKind | None = tag.kind
    name = None
    if tag.kind == "name":
        name = clean_name(tag.subject, lowercase)
        if name is None:
            kind = None
    elif tag.kind == "noun":
        name = tag.subject.lower()
    return Tag(kind, name, tag.gender, _span_tags(p, language, lowercase))


def _span_tags(
    p: Paragraph, language: str | None, lowercase: Counter[str]
) -> tuple[SpanTag | None, ...]:
    """The tag of each quotation of its own, where a paragraph gives speech to two people
    ('"What is it?" said the Man. And the Woman said, "His name…"'): a tag ending the
    narration before it (and not the one the quotation before already had), else one opening
    the narration after it."""
    text = p.text
    spans = p.spans
    # Per gap between two quotations: whether its narration leads into the one after it.
    opens = [_opens_next(a, text[a.end : b.start], b) for a, b in pairwise(spans)]
    found: list[SpanTag | None] = []
    led = False  # whether the quotation before had a tag before it
    for i, span in enumerate(spans):
        start = spans[i - 1].end if i else 0
        end = spans[i + 1].start if i + 1 < len(spans) else len(text)
        lead = text[start : span.start]
        before = find_tag(lead, language, "before")
        # A tag between two quotations is the one before's, unless that one had its own
        # before it: 'Mrs. Sparsit said, "…" Mr. Bounderby replied, "…"'.
        if before is not None and i and not opens[i - 1] and not led:
            previous = find_tag(lead, language, "after")
            if previous is not None and previous.start >= before.start:
                before = None
        led = before is not None
        after = None
        if i and before is None and _continues(lead, opens[i - 1], language):
            # '"Three-and-twenty!" cried Thorpe, "five-and-twenty if it is an inch." Morland
            # remonstrated': one sentence of speech around its tag, whoever acts after it.
            found.append(found[-1])
            continue
        if i + 1 == len(spans) or not opens[i]:
            after = find_tag(text[span.end : end], language, "after")
        tag = before or after
        own = None
        if tag is not None and tag.kind == "name":
            name = clean_name(tag.subject, lowercase)
            own = SpanTag("name", name, tag.gender) if name else None
        elif tag is not None:
            name = tag.subject.lower() if tag.kind == "noun" else None
            own = SpanTag(tag.kind, name, tag.gender)
        found.append(own)
    return tuple(found)


def _continues(lead: str, opens: bool, language: str | None) -> bool:
    """Whether a quotation goes on with the sentence of the one before, across that one's tag
    ('"Yes," said he, "I will."')."""
    lead = lead.strip()
    return (
        not opens
        and lead.endswith(",")
        and len(lead.split()) <= 5
        and not re.search(r"[;.!?]\s", lead)
        and find_tag(lead, language, "after") is not None
    )


def _opens_next(left: Span, between: str, right: Span) -> bool:
    """Whether the narration between two quotations leads into the right one, not on from
    the left one: after a clause break ('"…cow-dung"; Das thought, "…"'), or as a sentence of
    its own between two ('"…we were out." Elinor, rejoiced…, ventured to say, "Depend…"').
    A tag after a comma ('"Yes," said he, "…"') is the left one's."""
    lead = between.strip()
    if not lead or lead[-1] not in ",:" or not right.text[:1].isupper():
        return False
    if lead.startswith(";"):
        return True
    return left.text.rstrip()[-1:] in (".", "!", "?") and lead[:1].isupper()


# --- sieves -----------------------------------------------------------------------------------


# A description opening a clause, and its verb: "The clerk looked him over", "the physician
# gave up". The verb is past ("-ed", or one of the common irregular ones) so that "The old
# clerk" is not read as "The old" doing "clerk".
_DESCRIBED_SUBJECT = re.compile(
    r"(?:^|[.!?;]\s+|\b(?:and|but|then|when|while)\s+)"
    r"(?P<description>(?:[Tt]he|[Aa]n?)\s+(?:[a-z-]+\s+){0,2}?[a-z-]+)\s+(?:[a-z]+ly\s+)?"
    r"(?:[a-z]+ed|was|had|came|went|took|gave|saw|put|sat|stood|got|began|made|held|spoke"
    r"|shook|rose|ran|knew|thought|felt|left|kept|told|drew|broke|bent|read|found|threw|wrote"
    r"|struck|sprang|sank|lay|let|caught|brought|seemed)\b"
)
# Words that make a description point at someone already there ("the other"), or no
# description at all ("the other she held out").
_NOT_DESCRIBING = frozenset("he she it they other others more only same first last".split())


def _described_subjects(paragraphs: list[Paragraph], cast: Cast, language: str | None) -> None:
    """A "he said" or "she said" right after narration whose last subject is a description of
    someone by what they do: 'The clerk called to him. / "I didn't know," he said.' The tag
    is that description's, not the nearest name's: the person the book gives it to ("the
    painter" for Basil Hallward), else one of its own (`mentions.described`)."""
    if not is_english(language):
        return
    for at, p in enumerate(paragraphs):
        if p.tag.kind != "pronoun" or not p.spans:
            continue
        owner, lead = p, p.text[: p.spans[0].start]
        before = paragraphs[at - 1] if at else None
        if not lead.strip() and before is not None and not before.spans:
            if before.chapter != p.chapter:
                continue
            owner, lead = before, before.text
        found = list(_DESCRIBED_SUBJECT.finditer(lead))
        # Its sentence ends the narration: after 'The driver slackened. He did not know who
        # she was.' a "she cried" is someone else.
        if not found or _SENTENCE_END.search(lead.rstrip(), found[-1].end()):
            continue
        where = found[-1].start("description")
        description = found[-1].group("description").lower()
        words = description.split()
        head = words[-1]
        if (
            noun_gender(description) is not None
            or set(words) & _NOT_DESCRIBING
            or not names_a_role(head)
        ):
            continue
        if any(subject and pos > where for pos, _, subject in owner.narration_names):
            continue  # someone named speaks after it: 'The clerk nodded, and Joe said'
        name = "the " + " ".join(words[1:])
        p.tag = Tag("noun", name, p.tag.gender, p.tag.spans)


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


def _explicit_speakers(
    paragraphs: list[Paragraph],
    speech: list[list[Paragraph]],
    decisions: Decisions,
    by_name: bool = False,
) -> list[int | None]:
    """Per speech turn, whom the sieves' explicit answer gives it (None where none does);
    with `by_name`, only a tag naming them ("cried Lucy", not "said the doctor")."""
    at = {id(p): i for i, p in enumerate(paragraphs)}
    found: list[int | None] = []
    for unit in speech:
        person = None
        for p in unit:
            who, how = decisions.get(at[id(p)], (None, ""))
            if how == "explicit" and (not by_name or p.tag.kind == "name"):
                person = who
                break
        found.append(person)
    return found


def _family_first_names(paragraphs: list[Paragraph], cast: Cast, decisions: Decisions) -> None:
    """A first name no one of the cast owns, called out in reply to someone the book only
    ever titles ("Miss Steele") by one of their own family ('"Ferrars!" repeated Miss
    Steele' answered by '"How can you say so, Anne?" cried Lucy', Lucy Steele): the first
    name is theirs: a family calls its own so, where others keep to the title."""
    speech = units(paragraphs)
    exchange = exchanges(paragraphs, speech)
    named = _explicit_speakers(paragraphs, speech, decisions, by_name=True)

    def surnames(person: int) -> set[str]:
        return {words[-1] for _, words in map(split_name, cast.people[person].forms) if words}

    votes: dict[str, set[int]] = {}
    for k in range(1, len(speech)):
        titled, speaker = named[k - 1], named[k]
        if titled is None or speaker in (None, titled) or exchange[k] != exchange[k - 1]:
            continue
        forms = [split_name(form) for form in cast.people[titled].forms]
        if not forms or any(not title or len(words) != 1 for title, words in forms):
            continue  # not titled only ("Miss Steele"), or a first name is known
        if not surnames(titled) & surnames(speaker):
            continue
        gender = cast.people[titled].gender
        for p in speech[k]:
            for name in p.vocative_names:
                own = first_name_gender(name)
                if " " in name or own is None or cast.resolve(name) is not None:
                    continue
                if gender is None or own == gender:
                    votes.setdefault(name, set()).add(titled)
    for name, people in votes.items():
        if len(people) != 1:
            continue
        (person,) = people
        cast.people[person].forms[name] += 1
        cast.by_form[name] = person
        for p in paragraphs:
            if name in p.vocative_names and person not in p.vocatives:
                p.vocatives.append(person)


# A name the answers to someone's lines call them by often enough is theirs (`_answered_names`).
_ANSWERED_MIN = 3
_ANSWERED_SHARE = 0.05


def _answered_names(
    paragraphs: list[Paragraph], cast: Cast, decisions: Decisions, narrator: int | None
) -> Decisions:
    """Two people of the cast who are one: the reply to a line a tag gives one calls them by
    the other's name ('"…" said the Jew.' answered by '"Fagin, …"'; Mrs. Munt answered by
    "Aunt Juley"), in at least `_ANSWERED_SHARE` of their tagged lines, while no tag ever
    gives the two turns next to each other and neither's lines call the other by name."""
    speech = units(paragraphs)
    tagged = _explicit_speakers(paragraphs, speech, decisions)
    called = [{v for p in u for v in p.vocatives} for u in speech]
    exchange = exchanges(paragraphs, speech)
    lines = Counter(t for t in tagged if t is not None)
    answered: Counter[tuple[int, int]] = Counter()
    apart: set[frozenset[int]] = set()  # two people who talk to each other
    for k, speaker in enumerate(tagged):
        if speaker is None:
            continue
        apart.update(frozenset((speaker, v)) for v in called[k])
        if k + 1 < len(speech) and exchange[k + 1] == exchange[k]:
            answered.update((speaker, v) for v in called[k + 1] if v != speaker)
            following = tagged[k + 1]
            if following is not None and following != speaker:
                apart.add(frozenset((speaker, following)))
    merged: dict[int, int] = {}
    for (speaker, name), times in answered.most_common():
        if times < _ANSWERED_MIN:
            break
        if speaker in merged or name in merged or narrator in (speaker, name):
            continue
        if times < _ANSWERED_SHARE * lines[speaker] or frozenset((speaker, name)) in apart:
            continue
        one, other = cast.people[speaker].gender, cast.people[name].gender
        if one is not None and other is not None and one != other:
            continue
        keep, gone = _kept(cast, speaker, name)
        _merge(paragraphs, cast, gone, keep)
        merged[gone] = keep
    if not merged:
        return decisions
    return {i: (merged.get(person, person), how) for i, (person, how) in decisions.items()}


def _kept(cast: Cast, a: int, b: int) -> tuple[int, int]:
    """Of two people found to be one, the one whose name the merged person keeps (and the
    other): a titled name ("Mr. Fagin", not "Jew"), else the one the book names more."""
    titled = [TITLED_NAME.fullmatch(cast.people[i].name) is not None for i in (a, b)]
    if titled[0] != titled[1]:
        return (a, b) if titled[0] else (b, a)
    more = sum(cast.people[a].forms.values()) >= sum(cast.people[b].forms.values())
    return (a, b) if more else (b, a)


def _distant_subject(
    paragraphs: list[Paragraph], decisions: Decisions, language: str | None
) -> Decisions:
    """A speech verb ending the narration before the speech, its subject named earlier in the
    same sentence: 'Then Wild Horse stamped with his wild foot and said, "…"', 'Henry
    Crawford entered the room, calling out, "…"', or in the narration paragraph before one
    that opens with speech, ending with a colon. A later quotation of the paragraph may have
    its own ('"…," cried Marianne. Elinor, rejoiced…, now ventured to say, "…"')."""
    verbs = _speech_verb_at_end(language)
    ended = _speech_verb_at_end(language, ended=True)
    decisions = dict(decisions)
    for at, p in enumerate(paragraphs):
        own = p.tag.spans
        for i in range(1, len(p.spans)):
            if i >= len(own) or own[i] is None:
                start, end = p.spans[i - 1].end, p.spans[i].start
                person = _subject_of_verb(p, start, end, verbs)
                # Between two quotations a sentence of its own may say who speaks next
                # ('"…in such terms--" Mary interrupted him. "I declare, …"').
                if person is None and _one_sentence(p.text[start:end]):
                    person = _subject_of_verb(p, start, end, ended, first=True)
                if person is not None:
                    p.span_subjects[i] = person
        if at in decisions or p.tag.kind is not None or not p.spans:
            continue
        person = _subject_of_verb(p, 0, p.spans[0].start, verbs)
        if person is None and p.spans[0].start == 0 and at:
            person = _introducing(paragraphs[at - 1], p, verbs)
        if person is not None:
            decisions[at] = person, "explicit"
    return decisions


def _introducing(before: Paragraph, p: Paragraph, verbs: re.Pattern[str]) -> int | None:
    """The subject of a speech verb ending the narration paragraph just before a paragraph of
    speech with a colon ('Rodney lit his lamp, pulled his curtains, … exclaimed:')."""
    if before.chapter != p.chapter:
        return None
    start = before.spans[-1].end if before.spans else 0
    if not before.text[start:].rstrip().endswith(":"):
        return None
    return _subject_of_verb(before, start, len(before.text), verbs, first=True)


def _subject_of_verb(
    p: Paragraph, start: int, end: int, verbs: re.Pattern[str], first: bool = False
) -> int | None:
    """The person named last as a subject in the sentence that a speech verb ends, in the
    paragraph's narration between `start` and `end`: opening a clause, or before a verb of
    their own ('…, Mrs. Munt never ceased to rejoice, and to say,'). `first`: the one opening
    the sentence instead, unless a "he" or "she" comes between them and the verb ('Diana,
    going to the east gable, where Anne was standing at her window, said gently:')."""
    narration = p.text[start:end]
    verb = verbs.search(narration)
    if verb is None:
        return None
    sentence_start = max(
        (m.end() for m in _SENTENCE_END.finditer(narration, 0, verb.start())), default=0
    )
    subjects = [
        (pos, person)
        for pos, person, subject in p.narration_names
        if start + sentence_start <= pos < start + verb.start()
        and (subject or _ACTING.match(p.text, pos))
    ]
    if not subjects:
        return None
    if not first:
        return subjects[-1][1]
    pos, person = subjects[0]
    if not _OPENS_SENTENCE.fullmatch(p.text, start + sentence_start, pos):
        return None
    return None if HE_OR_SHE.search(p.text, pos, start + verb.start()) else person


_OPENS_SENTENCE = re.compile(r"\s*(?:(?:And|But|Then|So|Now|At last|At length|Presently),?\s+)?")


# A name followed by a verb of its own: "Mrs. Munt never ceased", "Mrs. Norris was too much
# vexed", "Sir Thomas's saying"; not "borne Edmund company".
_ACTING = re.compile(
    r"(?:(?:Mr|Mrs|Dr|Ms|St)\.?\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*"
    r"(?:['’]s\s+[a-z]+ing\b|\s+(?:(?:never|again|still|now|then|only|\w+ly)\s+)?"
    r"(?:was|were|had|has|would|could|should|will|did|might|must|can|may|[a-z]+ed)\b)"
)


# Speech verbs as participles: 'entered the room, calling out, "…"'.
_EN_PARTICIPLES = (
    "saying", "calling out", "crying", "exclaiming", "asking", "adding", "replying",
    "remarking", "observing", "whispering", "answering", "muttering", "shouting",
)  # fmt: skip


@lru_cache(maxsize=8)
def _speech_verb_at_end(language: str | None, ended: bool = False) -> re.Pattern[str]:
    """A speech verb ending a stretch of narration. `ended`: a sentence it ends, with a few
    words after it ("Mary interrupted him.")."""
    words = list(language_table(language).verbs)
    if is_english(language):
        words += _EN_PARTICIPLES
    verbs = "|".join(sorted((re.escape(v) for v in words), key=len, reverse=True))
    if ended:
        return re.compile(rf"\b(?:{verbs})\b[^.!?\"',;:]{{0,20}}[.]\s*$", re.IGNORECASE)
    # What may follow the verb: whom it is said to ("said to Mrs. Bhattacharya, whose face
    # she liked,"), no end of sentence.
    title_stop = r"\." + after_title(r"\.")  # "said to Mrs. Bhattacharya"
    return re.compile(rf"\b(?:{verbs})\b(?:{title_stop}|[^.!?\"']){{0,60}}[,:]?\s*$", re.IGNORECASE)


def _one_sentence(narration: str) -> bool:
    """Whether narration between two quotations is one sentence, ended."""
    text = narration.strip()
    return text.endswith(".") and not _SENTENCE_END.search(text + " ", 0, len(text) - 1)


def _name_narrator(
    paragraphs: list[Paragraph],
    decisions: Decisions,
    cast: Cast,
    narrator: int,
    lowercase: Counter[str],
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
            and (len(chapters[n]) >= 2 or TITLED_NAME.fullmatch(n))
            and _may_be_a_name(n, cast, lowercase)
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
            p.speech_names = [person if v == narrator else v for v in p.speech_names]
    # The other names the others call the narrator by, often enough and no one else's
    # ("Jake", and "Barnes" too).
    # A person the narration names ("Mr. Barnes") but no tag gives a line is the narrator
    # too, when that is what the others call them.
    speaking = Counter(who for who, _ in decisions.values())
    names = [name]
    title, _ = split_name(name)
    gender = cast.people[person].gender or (TITLES.get(title) if title else None)
    for alias, times in called.items():
        if alias == name or times < 2:
            continue
        # Not a first name of the other gender: "Hullo, Evie" is said to the woman beside
        # Mr. Hastings.
        alias_gender = first_name_gender(alias.split()[0])
        if None not in (gender, alias_gender) and alias_gender != gender:
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


def _may_be_a_name(called: str, cast: Cast, lowercase: Counter[str]) -> bool:
    """Whether what others call someone may be a name: not a word the book also writes in
    lower case ("Farewell", "Oui", "Presumably"), unless it is titled, a name of the cast
    or a first name."""
    if TITLED_NAME.fullmatch(called) or cast.resolve(called) is not None:
        return True
    if first_name_gender(called.split()[0]) is not None:
        return True
    return not any(lowercase[word.lower()] for word in called.split())


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
        p.speech_names = [person if v == other else v for v in p.speech_names]


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
        # "answered Daisy's mamma": whoever it is, not Daisy.
        kin = kin_tag(p.tag.name) if p.tag.kind == "noun" else None
        owner = cast.resolve(kin.owner) if kin is not None and kin.owner else None
        person = _pronoun_person(paragraphs, decisions, at, cast, gender, narrator, owner, kin)
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
    excluded: int | None = None,
    kin: Kin | None = None,
) -> int | None:
    p = paragraphs[at]
    first_quote = p.spans[0].start
    # 'She forgot about Adela in her surprise. "…" she repeated.': not Adela.
    bound = bound_by_pronoun(p, gender) if p.tag.kind == "pronoun" else set()

    def fits(person: int, strict: bool = True) -> bool:
        if person in (narrator, excluded) or person in bound:
            return False
        if kin is not None and not titled_as(cast, person, kin):
            return False  # "his mother murmured": not a girl the book only calls "Miss"
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
    # The pronoun ruled out the only other one of its gender: who spoke the turn before
    # goes on ('"…" she said to Adela.' after Mrs. Moore's line).
    if bound and previous is not None and fits(previous):
        return previous
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
            last = _last_sentence_subject(p, p.spans[0].start)
            if last is not None:
                decisions[at] = last, "nearby"
            elif subjects and subjects[0][0] < 5:
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


def _last_sentence_subject(p: Paragraph, end: int) -> int | None:
    """The person named as the subject opening the last sentence of the narration before
    `end`, where that is not the paragraph's first: 'Aziz undertook to explain, but …
    Professor Godbole chaffed him pleasantly. "My dear young sir, …"' is Godbole's."""
    stop = len(p.text[:end].rstrip())  # the last sentence's own full stop is no start
    starts = [m.end() for m in _SENTENCE_END.finditer(p.text, 0, stop)]
    if not starts:
        return None
    start = starts[-1]
    for pos, person, subject in p.narration_names:
        if subject and start <= pos < end and _OPENS_SENTENCE.fullmatch(p.text, start, pos):
            return person
    return None


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
    for at, p in enumerate(paragraphs):
        speaker, how = p.speaker, p.how
        for i, span in enumerate(p.spans):
            person, own_how = _own_speaker(paragraphs, at, i, speaker, cast)
            if person is not None and person != speaker:
                speaker, how = person, own_how
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


def _own_speaker(
    paragraphs: list[Paragraph], at: int, i: int, speaker: int | None, cast: Cast
) -> tuple[int | None, How]:
    """Who says the paragraph's `i`th quotation by a tag of its own, where that is not who
    says the quotation before (`speaker`): a name or a description the book gives a person,
    "I said" of the first-person narrator, or a pronoun of the other gender ('"…" he
    queried; and she returned: "…"'), which means the person of that gender nearest in the
    narration before it, else in the turns around."""
    p = paragraphs[at]
    own = p.tag.spans[i] if i < len(p.tag.spans) else None
    if own is None:
        return p.span_subjects.get(i), "explicit"
    if own.kind == "name" and own.name:
        return cast.resolve(own.name), "explicit"
    if own.kind == "noun" and own.name in cast.by_form:
        return cast.by_form[own.name], "explicit"
    if own.kind == "first_person":
        return cast.narrator, "pronoun"
    gender = own.gender
    if gender is None or speaker is None or cast.people[speaker].gender in (gender, None):
        return None, "none"
    chapter = p.chapter
    start = p.spans[i].start
    subjects = [person for pos, person, subject in p.narration_names if pos < start and subject]
    here = [person for pos, person, _ in p.narration_names if pos < start]
    near = [
        paragraphs[j]
        for j in (at - 1, at + 1, at - 2, at + 2)
        if 0 <= j < len(paragraphs) and paragraphs[j].chapter == chapter
    ]
    turns = [q.speaker for q in near if q.spans and q.speaker is not None]
    before = [
        person
        for j in range(at - 1, max(-1, at - 4), -1)
        if paragraphs[j].chapter == chapter
        for _, person, _ in reversed(paragraphs[j].narration_names)
    ]
    for person in [*reversed(subjects), *turns, *reversed(here), *before]:
        if person != speaker and person != cast.narrator and cast.people[person].gender == gender:
            return person, "pronoun"
    return None, "none"
