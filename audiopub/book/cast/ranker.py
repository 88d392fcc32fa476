"""The speaker ranker: for each speech turn the sieves did not settle, the people
who might say it are scored by a small model and the first one speaks.

Candidates are the people named in the narration around the turn, the speakers of the turns
around it (up to `_SCENE_WIDE` either side), those its neighbours call by name, the sieves' own
answer, the first-person narrator, and a description its tag gives speech to that no name of
the cast owns ("said the driver": someone the book never names). Each gets features
(`FEATURES`): what the sieves said and how, what a description tag says, gender agreement with
a pronoun tag, where and how near they are named, turn parity in the exchange, being called
inside the quotation or the one before (by name, or "sir" and "madam" for a gender), who spoke
across a narration paragraph, salience in the chapter and the scene, the gender of a "she" or
"he" opening the turn's narration, whom a sentence-opening "He" or "She" just before stands
for, and how like the turn's words are to the lines a tag gives each person. A score is a
linear part plus one small hidden layer (`Model`), run in rounds: each round sees the speakers
the round before chose around the turn, each as much as it was sure of it (`Round`). The
weights (`speakers.json`, beside this file) were learned by `scripts/train_speakers.py` from
the Project Dialogism Novel Corpus (Vishnubhotla, Hammond and Hirst, LREC 2022), numpy only.

The turns a tag names (`KEEP`, and "I said") stay the sieves'; those they settled by a
pronoun tag, a name just before or the turn-taking (`SURE`) stay theirs unless the model's
first candidate scores a margin above (`Margins`); the model gives the others a speaker.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from audiopub.book.cast.characters import Cast, opening_pronoun_gender
from audiopub.book.cast.conversation import (
    Paragraph,
    addressed_gender,
    bound_by_pronoun,
    exchanges,
    narration,
    units,
)
from audiopub.book.cast.kinship import Kin, family_names, kin_tag, titled_as
from audiopub.book.cast.models import Gender
from audiopub.book.cast.tags import names_a_role, noun_gender

__all__ = [
    "FEATURES",
    "KEEP",
    "SURE",
    "Margins",
    "Model",
    "Round",
    "Turn",
    "rank_speakers",
    "ranked",
    "rounds",
    "settled",
    "turns",
]

WEIGHTS = Path(__file__).with_name("speakers.json")
# The sieves' answers the model leaves alone: a tag naming the speaker.
KEEP: frozenset[str] = frozenset({"explicit"})
# The sieves' answers the model overrides only by a margin (`Margins`, in speakers.json).
SURE: frozenset[str] = frozenset({"pronoun", "nearby", "turn"})

FEATURES: tuple[str, ...] = (
    "sieve_pronoun",  # the sieves gave the turn to this person, from a pronoun tag
    "sieve_nearby",  # … from a name just before the speech
    "sieve_turn",  # … from turn-taking
    "sieve_other",  # … any other way
    "gender_agrees",  # a gendered tag ("she said", "the lady cried") and this person's gender
    "gender_clashes",
    "pronoun_tag_subject_here",  # a pronoun tag and this person the subject of the narration
    "noun_tag",  # the tag is a description, this person is not named by it
    "named_here_subject_before",  # named as a subject in the turn's narration before its speech
    "named_here_before",
    "named_here_after",  # named in the narration after the speech
    "first_subject_previous",  # the subject opening the narration paragraph just before
    "back_1",  # named in narration this many paragraphs back (nearest)
    "back_2",
    "back_3_5",
    "back_6_12",
    "back_subject",  # that nearest mention is a sentence's subject
    "ahead_1_2",  # named in narration just after
    "turn_minus_1",  # the named speaker of the turn before, in the same exchange
    "turn_minus_2",
    "turn_minus_3",
    "turn_plus_1",
    "turn_plus_2",
    "said_minus_1",  # the sieves' speaker of the turn before (any how)
    "said_minus_2",
    "said_plus_1",
    "said_plus_2",
    "called_here",  # called by name inside this turn's speech (spoken to, not speaking)
    "called_before",  # called by name in the turn before (answers now)
    "called_after",  # called by name in the turn after
    "narrator",  # the first-person narrator
    "narrator_i_here",  # … and the narration of the turn says "I"
    "last_speaker",  # the most recent named speaker before this turn in the chapter
    "second_last_speaker",
    "chapter_lines",  # log of named lines in the chapter
    "book_mentions",  # log share of mentions in the book
    # The turn opens with speech and this person said the one before.
    "opens_with_speech_and_said_before",
    "in_run",  # the turn is in an exchange of several turns and this person named in it
    # The nearest turn of the exchange a tag names, an even number of turns away (this
    # person's own turn as two people alternate), or an odd number (their partner's).
    "run_even",
    "run_odd",
    # The turn before calls its listener "sir" or "madam": this person's gender fits, or not.
    "addressed_agrees",
    "addressed_clashes",
    # The sieves' speaker of the turn one or two back, across a narration paragraph ('"…"
    # She turned away. "…"': the same person often goes on).
    "said_across_1",
    "said_across_2",
    # Named as a sentence's subject anywhere in the narration paragraph just before
    # ("Mr. Thomas came in."), and the last one named there.
    "subject_previous",
    "last_named_previous",
    # The speaker of the turn two back, where the one between was someone else: A, B, A.
    "said_minus_2_alternates",
    # The turn's narration names this person after the speech and the turn opens with it
    # ('"…" Polina forced herself to say.').
    "named_after_opening",
    # Named inside this turn's speech (people seldom name themselves), or the one before.
    "named_in_speech",
    "named_in_speech_before",
    # The share of the exchange's other turns this person was given: its two parties.
    "run_share",
    "chapter_share",  # share of the chapter's tagged turns
    "scene_share",  # share of the tagged turns within `_SCENE` turns either side
    # How much the turn's words sound like this person's tagged speech elsewhere in the book
    # ("dat" and "de", "sir", a catchword), per word against all tagged speech; and whether
    # no other candidate sounds more like it.
    "sounds_like",
    "sounds_most_like",
    # Given a turn within `_SCENE_WIDE` turns either side, in the chapter.
    "scene_speaker",
    # The turn's narration opens on "she" or "he" ('She shook her head. "No."', '"Our
    # boat?" She frowned.'): this person's gender fits, or not.
    "beat_agrees",
    "beat_clashes",
    # The one a sentence-opening "He" or "She" means (the nearest named before it of that
    # gender), in the turn's narration before its speech, or the narration paragraph just
    # before: 'He found the younger of them alone. She was looking …' brings in two people
    # no name there does.
    "pronoun_subject_here",
    "pronoun_subject_previous",
    # The turn's tag is a description no name of the cast owns ("said the driver") and this
    # is that description as a person of its own (`Cast.described`); how often tags use it
    # in the book (log); the tag says "a …" (someone the scene brings in); more words than
    # the noun ("the inflexible beadle": an epithet for someone named).
    "described",
    "described_uses",
    "described_indefinite",
    "described_epithet",
    # … its noun is a word for a person ("driver", "pauper", "gentleman"; not "the
    # announcement"); the narration just before says it (the scene brought them in: 'The
    # master was a fat, healthy man.').
    "described_role",
    "described_scene",
    # The tag names a kin ("said her mother", `kinship`): the book's titles for this person
    # fit it (no "Miss" for a mother); and so does a family name shared with someone else
    # of the turn's candidates (the one "her" means).
    "kin_titled",
    "kin_family",
    # The one a tag's name owns ("Daisy" in "answered Daisy's mamma"): never the speaker.
    "kin_owner",
    # Named after a "she" or "he" in its clause, in the turn's narration, where a pronoun of
    # that gender tags the turn or opens its narration: 'She forgot about Adela. "…" she
    # repeated.' is not Adela.
    "pronoun_bound",
)
# How many turns either side make a turn's scene: who talks there now.
_SCENE = 10
_SCENE_WIDE = 20


@dataclass(frozen=True)
class Round:
    """One round of the model over a book: per speech turn, whom it chose (None where a tag
    settles the turn or it chose no one) and how sure it was: the chosen candidate's share
    of the turn's softmax over its scores."""

    chosen: list[int | None]
    sure: list[float]


@dataclass
class Turn:
    """One speech turn to rank: its paragraphs, its candidates and their features."""

    paragraphs: list[Paragraph]
    candidates: list[int]
    features: np.ndarray  # (candidates, FEATURES)


def _beat(p: Paragraph) -> Gender | None:
    """The gender of a pronoun opening the narration before the paragraph's speech, or
    right after its opening speech: whose gesture the speech comes with."""
    start = p.spans[0].start
    if p.text[:start].strip():
        piece = p.text[:start]
    else:
        piece = p.text[p.spans[0].end : p.spans[1].start if len(p.spans) > 1 else len(p.text)]
    return opening_pronoun_gender(piece)


_SUBJECT_PRONOUN = re.compile(r"(?:^|[.!?;:]\s+|[\"“”]\s*)(He|She)\b")
# How many paragraphs back a pronoun looks for the name it stands for.
_PRONOUN_REACH = 6


def _pronoun_subjects(paragraphs: list[Paragraph], at: int, cast: Cast, until: int) -> set[int]:
    """Whom the sentence-opening "He" and "She" of paragraph `at`'s narration (before
    offset `until`) stand for: the nearest person of that gender named before each."""
    p = paragraphs[at]
    before: list[int] = []  # the people named in the paragraphs before, in order
    for j in range(max(0, at - _PRONOUN_REACH), at):
        if paragraphs[j].chapter == p.chapter:
            before += _named(paragraphs[j])
    found: set[int] = set()
    for match in _SUBJECT_PRONOUN.finditer(p.text[:until]):
        if any(s.start <= match.start(1) < s.end for s in p.spans):
            continue
        gender: Gender = "male" if match.group(1) == "He" else "female"
        earlier = before + [person for pos, person, _ in p.narration_names if pos < match.start(1)]
        for person in reversed(earlier):
            if cast.people[person].gender == gender:
                found.add(person)
                break
    return found


def _named(p: Paragraph) -> list[int]:
    return [person for _, person, _ in p.narration_names]


def turns(
    paragraphs: list[Paragraph],
    cast: Cast,
    narrator: int | None,
    before: Round | None = None,
    voices: _Voices | None = None,
) -> list[Turn]:
    """Every speech turn with its candidates and features, settled ones included (the
    trainer learns from every turn; `rank_speakers` skips those with a naming tag).
    `before`: what the model's previous round chose (none in the first);
    `voices`: the book's `_Voices`, where an earlier round made them."""
    speech = units(paragraphs)
    position = {id(p): i for i, p in enumerate(paragraphs)}
    said, how, named = _answers(speech)
    # Who spoke the turns around: the previous round's choice where it made one, else the
    # sieves'. A turn's own sieve answer stays the sieves'. A neighbour's speaker counts as
    # much as the round was sure of it: one doubtful choice should not carry the next.
    others = list(said)
    sure = [1.0] * len(said)
    if before is not None:
        for j, person in enumerate(before.chosen):
            if person is not None:
                others[j], sure[j] = person, before.sure[j]
    run = exchanges(paragraphs, speech)
    mentions: Counter[int] = Counter()
    for p in paragraphs:
        mentions.update(_named(p))
    for s in said:
        if s is not None:
            mentions[s] += 1
    total = max(1, sum(mentions.values()))
    chapter_lines: Counter[tuple[int, int]] = Counter(
        (u[0].chapter, s) for u, s in zip(speech, named, strict=True) if s is not None
    )
    # Each person's share of the chapter's tagged turns: how much a narrator talks here (a
    # book of stories has a cast per story).
    tagged = _tagged(speech, named, narrator)
    chapter_tagged = Counter(
        (u[0].chapter, s) for u, s in zip(speech, tagged, strict=True) if s is not None
    )
    chapter_total: Counter[int] = Counter()
    for (chapter_index, _), count in chapter_tagged.items():
        chapter_total[chapter_index] += count
    if voices is None:
        voices = _Voices(speech, tagged)
    index = {name: i for i, name in enumerate(FEATURES)}
    found: list[Turn] = []
    recent: list[int] = []  # named speakers of the chapter, latest last
    chapter = -1
    for k, unit in enumerate(speech):
        first = unit[0]
        if first.chapter != chapter:
            chapter, recent = first.chapter, []
        at = position[id(first)]
        candidates: dict[int, np.ndarray] = {}

        def feature(
            person: int | None,
            name: str,
            value: float = 1.0,
            candidates: dict[int, np.ndarray] = candidates,
        ) -> None:
            if person is None:
                return
            row = candidates.get(person)
            if row is None:
                row = candidates[person] = np.zeros(len(FEATURES))
            row[index[name]] = max(row[index[name]], value)

        def near(offset: int, k: int = k, chapter: int = chapter) -> int | None:
            j = k + offset
            if 0 <= j < len(speech) and speech[j][0].chapter == chapter:
                return j
            return None

        # The sieves' answer.
        if said[k] is not None:
            kind = how[k] if how[k] in ("pronoun", "nearby", "turn") else "other"
            feature(said[k], f"sieve_{kind}")
        for p in unit:
            description = _description(p, cast)
            if description is not None:
                person, words = description
                feature(person, "described")
                feature(person, "described_uses", math.log1p(cast.people[person].forms.total()))
                feature(person, "described_indefinite", words[0] in ("a", "an"))
                feature(person, "described_epithet", len(words) > 2)
                head = _head(words[1:])
                feature(person, "described_role", names_a_role(head) or bool(noun_gender(head)))
                feature(person, "described_scene", _in_scene(paragraphs, at, head))
                break
        # The turn's own narration.
        quote_at = first.spans[0].start
        for pos, person, subject in first.narration_names:
            if pos < quote_at:
                feature(person, "named_here_subject_before" if subject else "named_here_before")
                if subject and first.tag.kind == "pronoun":
                    feature(person, "pronoun_tag_subject_here")
            else:
                feature(person, "named_here_after")
        for p in unit[1:]:
            for person in _named(p):
                feature(person, "named_here_after")
        # Narration before and after.
        for back in range(1, 13):
            j = at - back
            if j < 0 or paragraphs[j].chapter != chapter:
                break
            q = paragraphs[j]
            if back == 1 and not q.spans and q.narration_names:
                if q.narration_names[0][2]:
                    feature(q.narration_names[0][1], "first_subject_previous")
                feature(q.narration_names[-1][1], "last_named_previous")
                for _, person, subject in q.narration_names:
                    if subject:
                        feature(person, "subject_previous")
            name = "back_1" if back == 1 else "back_2" if back == 2 else "back_3_5"
            if back > 5:
                name = "back_6_12"
            for _, person, subject in q.narration_names:
                if person not in candidates or not any(
                    candidates[person][index[b]] for b in ("back_1", "back_2", "back_3_5")
                ):
                    feature(person, name)
                    if subject:
                        feature(person, "back_subject")
        for person in _pronoun_subjects(paragraphs, at, cast, quote_at):
            feature(person, "pronoun_subject_here")
        if at > 0 and not paragraphs[at - 1].spans and paragraphs[at - 1].chapter == chapter:
            previous = paragraphs[at - 1]
            for person in _pronoun_subjects(paragraphs, at - 1, cast, len(previous.text)):
                feature(person, "pronoun_subject_previous")
        last = position[id(unit[-1])]
        for ahead in (1, 2):
            j = last + ahead
            if j < len(paragraphs) and paragraphs[j].chapter == chapter:
                for person in _named(paragraphs[j]):
                    feature(person, "ahead_1_2")
        # The exchange.
        for offset, name in ((-1, "minus_1"), (-2, "minus_2"), (-3, "minus_3")):
            m = near(offset)
            if m is not None and run[m] == run[k] and named[m] is not None:
                feature(named[m], f"turn_{name}")
        for offset, name in ((1, "plus_1"), (2, "plus_2")):
            m = near(offset)
            if m is not None and run[m] == run[k] and named[m] is not None:
                feature(named[m], f"turn_{name}")
        for offset, name in ((-1, "minus_1"), (-2, "minus_2"), (1, "plus_1"), (2, "plus_2")):
            m = near(offset)
            if m is not None and others[m] is not None and run[m] == run[k]:
                feature(others[m], f"said_{name}", sure[m])
                if offset == -1 and quote_at == 0:
                    feature(others[m], "opens_with_speech_and_said_before", sure[m])
        for offset, name in ((-1, "across_1"), (-2, "across_2")):
            m = near(offset)
            if m is not None and others[m] is not None and run[m] != run[k]:
                if at - position[id(speech[m][-1])] <= 4:
                    feature(others[m], f"said_{name}", sure[m])
        m1, m2 = near(-1), near(-2)
        if (
            m1 is not None
            and m2 is not None
            and run[m2] == run[k]
            and others[m2] is not None
            and others[m1] not in (None, others[m2])
        ):
            feature(others[m2], "said_minus_2_alternates", sure[m2])
        beat = _beat(first)
        pronoun = first.tag.gender if first.tag.kind == "pronoun" else beat
        for person in bound_by_pronoun(first, pronoun) if pronoun is not None else ():
            feature(person, "pronoun_bound")
        addressed = None
        if m1 is not None and run[m1] == run[k]:
            addressed = addressed_gender(s.text for p in speech[m1] for s in p.spans)
        if quote_at == 0:
            # Only the narration right after the opening speech.
            until = first.spans[1].start if len(first.spans) > 1 else len(first.text)
            for pos, person, _ in first.narration_names:
                if pos < until:
                    feature(person, "named_after_opening")
        for p in unit:
            for person in p.vocatives:
                feature(person, "called_here")
        for offset, name in ((-1, "called_before"), (1, "called_after")):
            m = near(offset)
            if m is not None and run[m] == run[k]:
                for p in speech[m]:
                    for person in p.vocatives:
                        feature(person, name)
        if narrator is not None:
            feature(narrator, "narrator")
            if any(w in ("I", "me", "my") for w in first.text[:quote_at].split()):
                feature(narrator, "narrator_i_here")
        if recent:
            feature(recent[-1], "last_speaker")
        if len(recent) > 1:
            feature(recent[-2], "second_last_speaker")
        parities: set[int] = set()
        for distance in range(1, 13):
            for j in (k - distance, k + distance):
                if distance % 2 in parities or not 0 <= j < len(speech):
                    continue
                if run[j] == run[k] and named[j] is not None:
                    feature(named[j], "run_odd" if distance % 2 else "run_even")
                    parities.add(distance % 2)
        for j in range(k - 1, k - 8, -1):
            if j >= 0 and run[j] == run[k] and others[j] is not None:
                feature(others[j], "in_run", sure[j])
            else:
                break
        for j in range(max(0, k - _SCENE_WIDE), min(len(speech), k + _SCENE_WIDE + 1)):
            if j != k and others[j] is not None and speech[j][0].chapter == chapter:
                feature(others[j], "scene_speaker", sure[j])
        # The turn's first paragraph and the last of the turn before: a long story told in
        # several paragraphs quotes others naming its teller ("'This is Mr. Jabez Wilson,'
        # said my assistant").
        in_speech = set(first.speech_names)
        in_speech_before = set(speech[m1][-1].speech_names) if m1 is not None else set()
        run_said = _run_said(others, sure, run, k)
        scene = Counter(
            tagged[j]
            for j in range(max(0, k - _SCENE), min(len(speech), k + _SCENE + 1))
            if j != k and tagged[j] is not None and speech[j][0].chapter == chapter
        )
        scene_total = sum(scene.values())
        run_total = sum(run_said.values())
        # Who speaks, and what the tag says of them.
        for person, row in candidates.items():
            row[index["named_in_speech"]] = person in in_speech
            row[index["named_in_speech_before"]] = person in in_speech_before
            if run_total:
                row[index["run_share"]] = run_said.get(person, 0.0) / run_total
            gender = cast.people[person].gender
            if first.tag.gender is not None and gender is not None:
                row[index["gender_agrees" if gender == first.tag.gender else "gender_clashes"]] = 1
            if addressed is not None and gender is not None:
                row[index["addressed_agrees" if gender == addressed else "addressed_clashes"]] = 1
            if beat is not None and gender is not None:
                row[index["beat_agrees" if gender == beat else "beat_clashes"]] = 1
            if first.tag.kind == "noun" and said[k] != person and not row[index["described"]]:
                row[index["noun_tag"]] = 1
            row[index["chapter_lines"]] = math.log1p(chapter_lines[(chapter, person)])
            share = chapter_tagged[(chapter, person)] / max(1, chapter_total[chapter])
            row[index["chapter_share"]] = share
            if scene_total:
                row[index["scene_share"]] = scene[person] / scene_total
            row[index["book_mentions"]] = math.log1p(1000 * mentions[person] / total)
        kin = kin_tag(first.tag.name) if first.tag.kind == "noun" else None
        if kin is not None:
            _kin_features(cast, kin, candidates, index)
        likeness = {person: voices.likeness(k, person) for person in candidates}
        most = max((v for v in likeness.values() if v is not None), default=None)
        for person, row in candidates.items():
            value = likeness[person]
            if value is not None:
                row[index["sounds_like"]] = value
                row[index["sounds_most_like"]] = value == most
        people = list(candidates)
        found.append(
            Turn(
                unit,
                people,
                np.array([candidates[c] for c in people]).reshape(len(people), len(FEATURES)),
            )
        )
        speaker = named[k]
        if speaker is not None:
            if speaker in recent:
                recent.remove(speaker)
            recent.append(speaker)
    return found


def _kin_features(
    cast: Cast, kin: Kin, candidates: dict[int, np.ndarray], index: dict[str, int]
) -> None:
    families = {person: family_names(cast, person) for person in candidates}
    for person, row in candidates.items():
        if cast.people[person].gender not in (kin.gender, None) or not titled_as(cast, person, kin):
            continue
        row[index["kin_titled"]] = 1
        if any(families[person] & families[other] for other in candidates if other != person):
            row[index["kin_family"]] = 1
    owner = cast.resolve(kin.owner) if kin.owner else None
    if owner in candidates:
        candidates[owner][index["kin_owner"]] = 1


# Words after which a description's noun is done: "the landlord of the Cripples", "the man
# with the keys", "a girl opposite".
_AFTER_HEAD = frozenset("of with in at on from who that outside inside opposite without".split())
# How far back the narration counts as the scene a description tag speaks in.
_SCENE_BACK = 5


def _head(words: list[str]) -> str:
    """The noun of a description's words, its article left off."""
    for i, word in enumerate(words):
        if i and word in _AFTER_HEAD:
            return words[i - 1]
    return words[-1] if words else ""


def _in_scene(paragraphs: list[Paragraph], at: int, head: str) -> bool:
    """Whether the narration before paragraph `at`'s speech, or in the `_SCENE_BACK`
    paragraphs before it in its chapter, says `head` ('The master was a fat, healthy man.')."""
    if not head:
        return False
    word = re.compile(rf"\b{re.escape(head)}\b", re.IGNORECASE)
    first = paragraphs[at]
    if word.search(first.text, 0, first.spans[0].start if first.spans else len(first.text)):
        return True
    for j in range(at - 1, max(-1, at - 1 - _SCENE_BACK), -1):
        q = paragraphs[j]
        if q.chapter != first.chapter:
            break
        if any(word.search(piece) for _, piece in narration(q)):
            return True
    return False


def _description(p: Paragraph, cast: Cast) -> tuple[int, list[str]] | None:
    """The person of its own a paragraph's description tag stands for, if it is one
    (`Cast.described`), and the tag's words."""
    if p.tag.kind != "noun" or not p.tag.name or p.tag.name not in cast.described:
        return None
    return cast.described[p.tag.name], p.tag.name.split()


def _described(p: Paragraph, cast: Cast) -> int | None:
    """The person of its own a paragraph's description tag stands for, if any."""
    description = _description(p, cast)
    return description[0] if description is not None else None


def _answers(
    speech: list[list[Paragraph]],
) -> tuple[list[int | None], list[str], list[int | None]]:
    """Per turn, the sieves' answer, how they found it, and the person a tag names."""
    said = [next((p.speaker for p in u if p.speaker is not None), None) for u in speech]
    how = [next((p.how for p in u if p.speaker is not None), "none") for u in speech]
    named = [s if h == "explicit" else None for s, h in zip(said, how, strict=True)]
    return said, how, named


def _tagged(
    speech: list[list[Paragraph]], named: Sequence[int | None], narrator: int | None
) -> list[int | None]:
    """Per turn, whom a tag gives it: the person it names, or the narrator for "I said"."""
    return [
        narrator
        if narrator is not None and any(p.tag.kind == "first_person" for p in unit)
        else person
        for unit, person in zip(speech, named, strict=True)
    ]


_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


class _Voices:
    """Each person's words in the turns a tag gives them (`given`): how like a turn's words
    are to theirs. A word is weighed by a person's own use of it against all tagged speech
    (Dirichlet smoothing: a person with few lines sounds like everyone). The rounds' own
    choices, added to a person's lines, scored no better left out (0.799 against 0.798), nor
    only those a round was at least 0.9 sure of (0.834 against 0.833)."""

    SMOOTHING = 200.0

    def __init__(self, speech: list[list[Paragraph]], given: Sequence[int | None]) -> None:
        self.words = [
            _WORD.findall(" ".join(s.text for p in unit for s in p.spans).lower())
            for unit in speech
        ]
        self.given = given
        self.own: dict[int, Counter[str]] = {}
        self.all: Counter[str] = Counter()
        for words, person in zip(self.words, given, strict=True):
            if person is not None:
                self.own.setdefault(person, Counter()).update(words)
                self.all.update(words)
        self.sizes = {person: sum(c.values()) for person, c in self.own.items()}
        self.total = sum(self.all.values())
        self.known: dict[tuple[int, int], float | None] = {}  # each round asks again

    def likeness(self, k: int, person: int) -> float | None:
        """The mean log-ratio, per word of turn `k`, of this person's speech to everyone's;
        None for someone no tag gives a line (beyond turn `k` itself)."""
        if (k, person) not in self.known:
            self.known[(k, person)] = self._likeness(k, person)
        return self.known[(k, person)]

    def _likeness(self, k: int, person: int) -> float | None:
        own = self.own.get(person)
        words = self.words[k]
        if own is None or not words or not self.total:
            return None
        # Turn k's own words leave the counts: a line does not vouch for itself.
        mine = Counter(words) if self.given[k] == person else Counter()
        size = self.sizes[person] - sum(mine.values())
        if size <= 0:
            return None
        vocabulary = len(self.all) + 1
        total = 0.0
        for word in words:
            everyone = (self.all[word] - mine[word] + 1) / (self.total + vocabulary)
            theirs = (own[word] - mine[word] + self.SMOOTHING * everyone) / (size + self.SMOOTHING)
            total += math.log(theirs / everyone)
        return total / len(words)


def _run_said(
    said: Sequence[int | None], sure: Sequence[float], run: Sequence[int], k: int
) -> dict[int, float]:
    """How many of the other turns of turn `k`'s exchange each person was given, each
    counted as sure as it was."""
    counts: dict[int, float] = {}
    for step in (-1, 1):
        j = k + step
        while 0 <= j < len(said) and run[j] == run[k]:
            person = said[j]
            if person is not None:
                counts[person] = counts.get(person, 0.0) + sure[j]
            j += step
    return counts


@dataclass(frozen=True)
class Model:
    """The ranker's scores: a linear part, and a small hidden layer (ReLU) through which
    features count together, which a sum of weights cannot say (a pronoun tag's gender
    matters most where turn parity is silent; being the last speaker means little in a
    two-person exchange)."""

    linear: np.ndarray  # (FEATURES,)
    hidden: np.ndarray  # (FEATURES, units)
    bias: np.ndarray  # (units,)
    out: np.ndarray  # (units,)

    @classmethod
    def linear_only(cls, w: Sequence[float] | np.ndarray) -> Model:
        return cls(np.asarray(w, dtype=float), np.zeros((len(w), 0)), np.zeros(0), np.zeros(0))

    def scores(self, features: np.ndarray) -> np.ndarray:
        """One score per row of `features` (a turn's candidates)."""
        inner = np.maximum(features @ self.hidden + self.bias, 0.0)
        return features @ self.linear + inner @ self.out


@cache
def weights() -> tuple[Model, ...]:
    """The shipped models, a round each; a feature they do not know counts for nothing."""
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    at = {name: i for i, name in enumerate(data["features"])}
    return tuple(model_of(r, at) for r in data["rounds"])


def model_of(data: dict, at: dict[str, int]) -> Model:
    """One round's model from its part of the file (`at`: the file's feature order)."""
    units = len(data["bias"])

    def row(values: Sequence, name: str, empty: float | np.ndarray) -> float | np.ndarray:
        return values[at[name]] if name in at else empty

    return Model(
        np.array([row(data["linear"], n, 0.0) for n in FEATURES], dtype=float),
        np.array([row(data["hidden"], n, np.zeros(units)) for n in FEATURES], dtype=float).reshape(
            len(FEATURES), units
        ),
        np.asarray(data["bias"], dtype=float),
        np.asarray(data["out"], dtype=float),
    )


@dataclass(frozen=True)
class Margins:
    """How far the model's first candidate must score above the sieves' answer to replace
    it (infinite: never)."""

    turn: float = math.inf  # an answer the turn-taking gave
    tagged: float = math.inf  # one a pronoun tag or a name just before gave
    # And this much more to give the turn to the first-person narrator: novels told in the
    # first person by a talker teach the model a salience that a quiet narrator (Watson in a
    # client's long story) does not have.
    narrator: float = 0.0


@cache
def margins() -> Margins:
    """The shipped margins (the sieves' answers stand where the file gives none)."""
    data = json.loads(WEIGHTS.read_text(encoding="utf-8")).get("margins", {})
    return Margins(**{k: float(v) for k, v in data.items()})


_AGREES = FEATURES.index("gender_agrees")
_NARRATOR = FEATURES.index("narrator")
_OWNER = FEATURES.index("kin_owner")
_SIEVE = [FEATURES.index(f"sieve_{kind}") for kind in ("pronoun", "nearby", "turn", "other")]


def choose(turn: Turn, model: Model, over: Margins = Margins()) -> int | None:
    """The candidate ranked first; for "she said" or "the woman said" only someone known to
    be a woman (no one rather than a guess of the wrong gender), and never the first-person
    narrator. Where the sieves gave the turn to someone, they keep it unless the first
    candidate scores a margin above them (`over`)."""
    return _choose(turn, model, over)[0]


def _choose(turn: Turn, model: Model, over: Margins) -> tuple[int | None, float]:
    """`choose`'s candidate and its share of the softmax over the turn's allowed scores."""
    scores = model.scores(turn.features)
    first = turn.paragraphs[0]
    if first.tag.kind in ("pronoun", "noun") and first.tag.gender is not None:
        scores = np.where(turn.features[:, _AGREES] > 0, scores, -np.inf)
    if first.tag.kind in ("pronoun", "noun"):
        # "said he", "replied our visitor": never the narrator, who says "I said"; "answered
        # Daisy's mamma": never Daisy.
        never = (turn.features[:, _NARRATOR] > 0) | (turn.features[:, _OWNER] > 0)
        scores = np.where(never, -np.inf, scores)
    if not turn.candidates or not np.isfinite(scores).any():
        return None, 0.0
    shares = np.exp(scores - scores.max())
    shares /= shares.sum()
    best = int(np.argmax(scores))
    sieve = np.flatnonzero(turn.features[:, _SIEVE].any(axis=1))
    if len(sieve) and any(p.how in SURE for p in turn.paragraphs):
        own = int(sieve[0])
        tagged = any(p.how in ("pronoun", "nearby") for p in turn.paragraphs)
        needed = over.tagged if tagged else over.turn
        if best != own and turn.features[best, _NARRATOR] > 0:
            needed += over.narrator
        if not scores[best] - scores[own] > needed:
            return turn.candidates[own], float(shares[own])
    return turn.candidates[best], float(shares[best])


def settled(turn: Turn) -> bool:
    """Whether a tag settles the turn: one naming the speaker, or "I said" of the
    first-person narrator."""
    return any(
        p.how in KEEP or (p.tag.kind == "first_person" and p.speaker is not None)
        for p in turn.paragraphs
    )


def rank_speakers(
    paragraphs: list[Paragraph],
    cast: Cast,
    narrator: int | None,
    models: Sequence[Model] | None = None,
    over: Margins | None = None,
) -> None:
    """Give every turn no tag names the candidate the models rank first (`ranked`), with the
    shipped models and margins unless given others (the trainer scores its own)."""
    if models is None:
        if not WEIGHTS.exists():
            return
        models = weights()
    if not models:
        return
    chosen = ranked(paragraphs, cast, narrator, models, over)
    for unit, person in zip(units(paragraphs), chosen, strict=True):
        if person is None:
            continue
        for p in unit:
            p.speaker, p.how = person, p.how if p.speaker == person else "turn"


def ranked(
    paragraphs: list[Paragraph],
    cast: Cast,
    narrator: int | None,
    models: Sequence[Model],
    over: Margins | None = None,
) -> list[int | None]:
    """Per speech turn, the candidate the last of the `models` ranks first: None for a turn a
    tag settles (or where it chose no one). A choice replaces the sieves' answer only by
    the margins `over` (the shipped ones unless given).

    In rounds, a model each: a round sees the speakers the one before chose for the turns
    around each turn (a run of untagged turns the first round gave all to the most salient
    person is seen to be one), and the sieves' answer for the turn itself: not its own
    earlier choice, which a model trained on it would learn to trust more than it should.

    Where a turn's tag describes someone of their own ("said the maid") and the first round
    chose them, the turn stays theirs: the later rounds, seeing who speaks around it, pull
    such turns to the people named there (left out, on the 22 novels of
    `scripts/train_speakers.py`: explicitly tagged quotations 8,914 → 8,920, all 24,512
    either way)."""
    found = _rounds(paragraphs, cast, narrator, models, over)
    if not found:
        return []

    first, last = found[0].chosen, found[-1].chosen
    return [
        own if own is not None and any(_described(p, cast) == own for p in unit) else later
        for unit, own, later in zip(units(paragraphs), first, last, strict=True)
    ]


def rounds(
    paragraphs: list[Paragraph],
    cast: Cast,
    narrator: int | None,
    models: Sequence[Model],
    over: Margins | None = None,
) -> Round | None:
    """`ranked`'s last round whole, with how sure it was of each choice (None for no
    models: the first round sees only the sieves)."""
    found = _rounds(paragraphs, cast, narrator, models, over)
    return found[-1] if found else None


def _rounds(
    paragraphs: list[Paragraph],
    cast: Cast,
    narrator: int | None,
    models: Sequence[Model],
    over: Margins | None = None,
) -> list[Round]:
    """Every round of the models in turn, each seeing the one before."""
    if over is None:
        over = margins() if WEIGHTS.exists() else Margins()
    # The tagged lines are the same in every round: their voices are made once.
    speech = units(paragraphs)
    voices = _Voices(speech, _tagged(speech, _answers(speech)[2], narrator))
    found: list[Round] = []
    for model in models:
        before = found[-1] if found else None
        picks = [
            (None, 1.0) if settled(turn) else _choose(turn, model, over)
            for turn in turns(paragraphs, cast, narrator, before, voices)
        ]
        found.append(Round([person for person, _ in picks], [share for _, share in picks]))
    return found
