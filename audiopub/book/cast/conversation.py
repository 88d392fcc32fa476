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

__all__ = ["NO_TAG", "Paragraph", "Tag", "addressed_gender", "take_turns", "units"]

# How far back the narration may have named the other party of a conversation.
_LOOK_BACK = 30
# Forms of address that show the gender of who is spoken to.
_ADDRESS = re.compile(
    r"(?:^|[,;!?.]\s)(madam|ma'am|miss|sir|my dear fellow|my good man)(?=[,.!?;]|$)",
    re.IGNORECASE,
)
_LADIES = frozenset({"madam", "ma'am", "miss"})


@dataclass(frozen=True)
class Tag:
    """What a paragraph's speech tag says, found once from its text and never changed."""

    kind: SubjectKind | None = None
    name: str | None = None  # a name tag's cleaned name, a description in lower case
    # Kept when a name tag's name is no name ("said Nobody"): the verb's gender still counts.
    gender: Gender | None = None
    span_names: tuple[str | None, ...] = ()  # each quotation's own name tag


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
    vocative_names: list[str] = field(default_factory=list)  # as the speech writes them
    vocatives: list[int] = field(default_factory=list)  # those that are people of the cast
    introduces: int | None = None  # the person its speech says it is ("My name is …")


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


def _runs(paragraphs: list[Paragraph]) -> list[list[list[Paragraph]]]:
    """Turns grouped into runs: a narration paragraph or a new chapter ends a run."""
    runs: list[list[list[Paragraph]]] = []
    run: list[list[Paragraph]] = []
    unit: list[Paragraph] = []
    previous: Paragraph | None = None
    for p in paragraphs:
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
        if unit and p.spans[0].continues and unit[-1].spans[-1].open:
            unit.append(p)
            continue
        if unit:
            run.append(unit)
        unit = [p]
    if unit:
        run.append(unit)
    if run:
        runs.append(run)
    return runs


def _speaker(unit: list[Paragraph]) -> int | None:
    return next((p.speaker for p in unit if p.speaker is not None), None)


def _set(unit: list[Paragraph], speaker: int) -> None:
    for p in unit:
        if p.speaker is None:
            p.speaker, p.how = speaker, "turn"


def take_turns(paragraphs: list[Paragraph], genders: Sequence[Gender | None] = ()) -> None:
    """Give untagged turns a speaker by alternation and vocatives, run by run. `genders`
    holds each person's gender, where known."""
    runs = _runs(paragraphs)
    position = {id(p): i for i, p in enumerate(paragraphs)}
    # A name called out only counts for someone who speaks in the chapter: "Hosmer, Mr.
    # Angel, was a cashier" calls no one.
    voices: dict[int, set[int]] = {}
    for p in paragraphs:
        if p.speaker is not None:
            voices.setdefault(p.chapter, set()).add(p.speaker)
    last_two: list[int] = []  # the two people who spoke last, carried across short breaks
    for run in runs:
        known = [s for s in (_speaker(u) for u in run) if s is not None]
        people = list(dict.fromkeys(known))
        present = voices.get(run[0][0].chapter, set())
        for unit in run:
            for p in unit:
                people.extend(v for v in p.vocatives if v not in people and v in present)
        if len(people) == 1:
            other = _other_party(
                paragraphs, position[id(run[0][0])], run, people[0], last_two, genders
            )
            if other is not None:
                people.append(other)
        changed = True
        while changed:
            changed = False
            for k, unit in enumerate(run):
                if _speaker(unit) is not None:
                    continue
                guess = _guess(run, k, people, present)
                if guess is not None:
                    _set(unit, guess)
                    changed = True
        for speaker in (_speaker(u) for u in run):
            if speaker is not None and (not last_two or last_two[-1] != speaker):
                if speaker in last_two:
                    last_two.remove(speaker)
                last_two.append(speaker)
                del last_two[:-2]


def _other_party(
    paragraphs: list[Paragraph],
    start: int,
    run: list[list[Paragraph]],
    speaker: int,
    last_two: list[int],
    genders: Sequence[Gender | None],
) -> int | None:
    """Who a run's one known voice talks with: whoever spoke with them just before, unless
    the voice calls the other "madam" or "sir" and that person is of the other gender; then
    the last person of the right gender the narration named shortly before."""
    addressed = _addressed_gender(run, speaker)

    def gender(person: int) -> Gender | None:
        return genders[person] if person < len(genders) else None

    before = [person for person in reversed(last_two) if person != speaker]
    if addressed is None:
        return before[0] if before else None
    for person in before:
        if gender(person) == addressed:
            return person
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


def _addressed_gender(run: list[list[Paragraph]], speaker: int) -> Gender | None:
    votes: Counter[Gender] = Counter()
    for unit in run:
        if _speaker(unit) != speaker:
            continue
        for p in unit:
            for span in p.spans:
                for match in _ADDRESS.finditer(span.text):
                    votes["female" if match.group(1).lower() in _LADIES else "male"] += 1
    if not votes or len(votes) > 1:
        return None
    return next(iter(votes))


def _guess(run: list[list[Paragraph]], k: int, people: list[int], present: set[int]) -> int | None:
    before = _speaker(run[k - 1]) if k >= 1 else None
    after = _speaker(run[k + 1]) if k + 1 < len(run) else None
    # The turn before called someone by name: they answer.
    if k >= 1 and before is not None:
        called = [v for p in run[k - 1] for v in p.vocatives if v != before and v in present]
        if called:
            return called[-1]
    two = people[:2] if len(people) >= 2 else None
    if two is not None and len(set(people)) == 2:
        if before is not None and before in two:
            return two[1] if before == two[0] else two[0]
        if after is not None and after in two:
            return two[1] if after == two[0] else two[0]
    # With more people: the turn two back, if the turn between was someone else.
    if k >= 2 and before is not None and _speaker(run[k - 2]) not in (None, before):
        return _speaker(run[k - 2])
    if k + 2 < len(run) and after is not None and _speaker(run[k + 2]) not in (None, after):
        return _speaker(run[k + 2])
    return None
