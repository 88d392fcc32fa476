"""Conversations: the paragraphs of a book as speech turns, and the turn-taking sieve.

A **unit** is one turn: a paragraph with speech and the paragraphs that continue it (English
leaves a long speech's closing mark off until its last paragraph). A **run** is a stretch of
turns with no narration paragraph between them. In a run two people usually alternate, so a
turn nobody tagged goes to the one who did not speak the turn before (or after); a name the
speaker before calls out ("…, Mr. Holmes?") says who answers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from audiopub.book.cast.models import Gender, How
from audiopub.book.cast.quotes import Span
from audiopub.book.cast.tags import SubjectKind

__all__ = [
    "NO_TAG",
    "Decisions",
    "Paragraph",
    "SpanTag",
    "Tag",
    "addressed_gender",
    "bound_by_pronoun",
    "narration",
    "take_turns",
    "units",
]

# How far back the narration may have named the other party of a conversation.
_LOOK_BACK = 30
# Forms of address that show the gender of who is spoken to.
_ADDRESS = re.compile(
    r"(?:^|[,;!?.]\s)(madam|ma'am|miss|sir|my dear fellow|my good man)(?=[,.!?;]|$)",
    re.IGNORECASE,
)
_LADIES = frozenset({"madam", "ma'am", "miss"})

# The sieves' answers so far: a paragraph's position to its speaker (a person of the cast) and
# how they were found. Each sieve returns a new mapping that keeps every earlier answer (naming
# the narrator may say whose the narrator's answers are).
Decisions = dict[int, tuple[int, How]]


@dataclass(frozen=True)
class SpanTag:
    """A quotation's own tag, where a paragraph may give speech to two people ('"…" he
    queried; and she returned: "…"'): its kind, a name or description (as `Tag.name`), and
    the gender a pronoun or description shows."""

    kind: SubjectKind
    name: str | None = None
    gender: Gender | None = None


@dataclass(frozen=True)
class Tag:
    """What a paragraph's speech tag says, found once from its text and never changed."""

    kind: SubjectKind | None = None
    name: str | None = None  # a name tag's cleaned name, a description in lower case
    # Kept where a name tag's name is cleaned away (kind None): its gender still counts.
    gender: Gender | None = None
    spans: tuple[SpanTag | None, ...] = ()  # each quotation's own tag


NO_TAG = Tag()


@dataclass
class Paragraph:
    """One paragraph of the book as the sieves see it."""

    chapter: int
    index: int
    text: str
    spans: list[Span]
    tag: Tag = NO_TAG
    speaker: int | None = None  # a person of the cast
    how: How = "none"
    # People named in narration: (offset, person, whether the name stands as a subject).
    narration_names: list[tuple[int, int, bool]] = field(default_factory=list)
    # A name's offset → the gender of a "she" or "he" before it in its clause ('She forgot
    # about Adela'): the name is not whom that pronoun means.
    after_pronoun: dict[int, Gender] = field(default_factory=dict)
    vocative_names: list[str] = field(default_factory=list)  # as the speech writes them
    vocatives: list[int] = field(default_factory=list)  # those that are people of the cast
    speech_names: list[int] = field(default_factory=list)  # people its speech names at all
    introduces: int | None = None  # the person its speech says it is ("My name is …")
    # A later quotation's speaker by the narration just before it: its position in `spans`
    # → the subject of a speech verb ending that narration ('…, and Das said: "…"').
    span_subjects: dict[int, int] = field(default_factory=dict)


def bound_by_pronoun(p: Paragraph, gender: Gender | None) -> set[int]:
    """The people a "she" or "he" of `gender` in the paragraph's narration cannot be: those
    named after it in its clause (`Paragraph.after_pronoun`)."""
    return {person for pos, person, _ in p.narration_names if p.after_pronoun.get(pos) == gender}


def units(paragraphs: list[Paragraph]) -> list[list[Paragraph]]:
    """The speech turns: each paragraph with speech, with those that continue it."""
    found: list[list[Paragraph]] = []
    for p in paragraphs:
        if not p.spans:
            continue
        if found and p.spans[0].continues and found[-1][-1].spans[-1].open:
            found[-1].append(p)
        else:
            found.append([p])
    return found


def exchanges(paragraphs: list[Paragraph], speech: list[list[Paragraph]]) -> list[int]:
    """Per turn of `speech` (`units` of `paragraphs`), the number of its exchange: turns with
    no narration paragraph between them, in one chapter, share one."""
    position = {id(p): i for i, p in enumerate(paragraphs)}
    run = [0] * len(speech)
    for k in range(1, len(speech)):
        a, b = position[id(speech[k - 1][-1])], position[id(speech[k][0])]
        same = b == a + 1 and paragraphs[a].chapter == paragraphs[b].chapter
        run[k] = run[k - 1] if same else run[k - 1] + 1
    return run


def _runs(paragraphs: list[Paragraph]) -> list[list[list[int]]]:
    """Turns, as paragraph positions, grouped into runs: a narration paragraph or a new chapter
    ends a run."""
    runs: list[list[list[int]]] = []
    run: list[list[int]] = []
    unit: list[int] = []
    previous: Paragraph | None = None
    for at, p in enumerate(paragraphs):
        new_chapter = previous is not None and previous.chapter != p.chapter
        previous = p
        if new_chapter or not p.spans:
            if unit:
                run.append(unit)
            if run:
                runs.append(run)
            run, unit = [], []
            if not p.spans:
                continue
        if unit and p.spans[0].continues and paragraphs[unit[-1]].spans[-1].open:
            unit.append(at)
            continue
        if unit:
            run.append(unit)
        unit = [at]
    if unit:
        run.append(unit)
    if run:
        runs.append(run)
    return runs


def _speaker(unit: list[int], decisions: Decisions) -> int | None:
    return next((decisions[at][0] for at in unit if at in decisions), None)


def take_turns(
    paragraphs: list[Paragraph], decisions: Decisions, genders: Sequence[Gender | None] = ()
) -> Decisions:
    """Give untagged turns a speaker by alternation and vocatives, run by run: the answers so
    far and these. `genders` holds each person's gender, where known."""
    runs = _runs(paragraphs)
    decisions = dict(decisions)
    # A name called out only counts for someone who speaks in the chapter: "Hosmer, Mr.
    # Angel, was a cashier" calls no one.
    voices: dict[int, set[int]] = {}
    for at, (person, _) in decisions.items():
        voices.setdefault(paragraphs[at].chapter, set()).add(person)
    last_two: list[int] = []  # the two people who spoke last, carried across short breaks
    for run in runs:
        known = [s for s in (_speaker(u, decisions) for u in run) if s is not None]
        people = list(dict.fromkeys(known))
        present = voices.get(paragraphs[run[0][0]].chapter, set())
        for unit in run:
            for at in unit:
                people.extend(
                    v for v in paragraphs[at].vocatives if v not in people and v in present
                )
        if len(people) == 1:
            other = _other_party(paragraphs, decisions, run, people[0], last_two, genders)
            if other is not None:
                people.append(other)
        changed = True
        while changed:
            changed = False
            for k, unit in enumerate(run):
                if _speaker(unit, decisions) is not None:
                    continue
                guess = _guess(paragraphs, decisions, run, k, people, present)
                if guess is not None:
                    # A turn continued over paragraphs is one speaker's.
                    for at in unit:
                        decisions[at] = guess, "turn"
                    changed = True
        for speaker in (_speaker(u, decisions) for u in run):
            if speaker is not None and (not last_two or last_two[-1] != speaker):
                if speaker in last_two:
                    last_two.remove(speaker)
                last_two.append(speaker)
                del last_two[:-2]
    return decisions


def _other_party(
    paragraphs: list[Paragraph],
    decisions: Decisions,
    run: list[list[int]],
    speaker: int,
    last_two: list[int],
    genders: Sequence[Gender | None],
) -> int | None:
    """Who a run's one known voice talks with: whoever spoke with them just before, unless
    the voice calls the other "madam" or "sir" and that person is of the other gender; then
    the last person of the right gender the narration named shortly before."""
    addressed = _addressed_gender(paragraphs, decisions, run, speaker)

    def gender(person: int) -> Gender | None:
        return genders[person] if person < len(genders) else None

    before = [person for person in reversed(last_two) if person != speaker]
    if addressed is None:
        return before[0] if before else None
    for person in before:
        if gender(person) == addressed:
            return person
    start = run[0][0]
    chapter = paragraphs[start].chapter
    for p in reversed(paragraphs[max(0, start - _LOOK_BACK) : start + 1]):
        if p.chapter != chapter:
            break
        for _, person, _ in reversed(p.narration_names):
            if person != speaker and gender(person) == addressed:
                return person
    return next((person for person in before if gender(person) is None), None)


def addressed_gender(speech: Iterable[str]) -> Gender | None:
    """The gender of whom this speech calls "sir" or "madam", where it is one."""
    votes: Counter[Gender] = Counter()
    for text in speech:
        for match in _ADDRESS.finditer(text):
            votes["female" if match.group(1).lower() in _LADIES else "male"] += 1
    return next(iter(votes)) if len(votes) == 1 else None


def _addressed_gender(
    paragraphs: list[Paragraph], decisions: Decisions, run: list[list[int]], speaker: int
) -> Gender | None:
    votes: Counter[Gender] = Counter()
    for unit in run:
        if _speaker(unit, decisions) != speaker:
            continue
        for at in unit:
            for span in paragraphs[at].spans:
                for match in _ADDRESS.finditer(span.text):
                    votes["female" if match.group(1).lower() in _LADIES else "male"] += 1
    if not votes or len(votes) > 1:
        return None
    return next(iter(votes))


def _guess(
    paragraphs: list[Paragraph],
    decisions: Decisions,
    run: list[list[int]],
    k: int,
    people: list[int],
    present: set[int],
) -> int | None:
    def said(j: int) -> int | None:
        return _speaker(run[j], decisions)

    before = said(k - 1) if k >= 1 else None
    after = said(k + 1) if k + 1 < len(run) else None
    # The turn before called someone by name: they answer.
    if k >= 1 and before is not None:
        called = [
            v for at in run[k - 1] for v in paragraphs[at].vocatives if v != before and v in present
        ]
        if called:
            return called[-1]
    two = people[:2] if len(people) >= 2 else None
    if two is not None and len(set(people)) == 2:
        if before is not None and before in two:
            return two[1] if before == two[0] else two[0]
        if after is not None and after in two:
            return two[1] if after == two[0] else two[0]
    # With more people: the turn two back, if the turn between was someone else.
    if k >= 2 and before is not None and said(k - 2) not in (None, before):
        return said(k - 2)
    if k + 2 < len(run) and after is not None and said(k + 2) not in (None, after):
        return said(k + 2)
    return None


def narration(p: Paragraph) -> list[tuple[int, str]]:
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
