"""The speaker ranker's own rules, on turns made by hand: the hidden layer counts features
together, the shipped file's features are matched by name, and a tag's gender or person
rules candidates out whatever the model scores (tests/test_cast_pdnc.py holds the shipped
weights to their figures on real novels)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from audiopub.book.cast.attribution import sieves
from audiopub.book.cast.characters import Cast, Person
from audiopub.book.cast.conversation import Paragraph, Tag
from audiopub.book.cast.quotes import Span
from audiopub.book.cast.ranker import (
    FEATURES,
    Model,
    Round,
    Turn,
    choose,
    model_of,
    ranked,
    turns,
)
from audiopub.book.models import Book, Chapter


def row(**values: float) -> np.ndarray:
    features = np.zeros(len(FEATURES))
    for name, value in values.items():
        features[FEATURES.index(name)] = value
    return features


def _sieved(paragraphs: list[str]) -> tuple[list[Paragraph], Cast, int | None]:
    """A one-chapter book of these paragraphs, through the sieves."""
    return sieves(Book("T", ("A",), "en", (Chapter(0, "One", ("One", *paragraphs)),)))


def test_the_hidden_layer_counts_two_features_together() -> None:
    # One unit that fires only when both features are on: each alone scores nothing.
    hidden = np.zeros((len(FEATURES), 1))
    hidden[FEATURES.index("said_minus_2"), 0] = 1.0
    hidden[FEATURES.index("run_even"), 0] = 1.0
    model = Model(np.zeros(len(FEATURES)), hidden, np.array([-1.0]), np.array([3.0]))
    features = np.stack(
        [row(said_minus_2=1), row(run_even=1), row(said_minus_2=1, run_even=1), row()]
    )
    assert model.scores(features).tolist() == [0.0, 0.0, 3.0, 0.0]


def test_a_linear_only_model_is_the_dot_product() -> None:
    w = np.arange(len(FEATURES), dtype=float)
    features = np.stack([row(back_1=1, narrator=2), row()])
    assert np.allclose(Model.linear_only(w).scores(features), features @ w)


def test_the_shipped_file_is_read_by_feature_name() -> None:
    # A file written for other features: its order differs, it knows one feature no longer
    # computed, and it lacks one: that one counts for nothing.
    names = ["narrator", "gone_feature", "back_1"]
    data = {
        "linear": [2.0, 9.0, 1.0],
        "hidden": [[0.5], [9.0], [0.25]],
        "bias": [0.0],
        "out": [1.0],
    }
    model = model_of(data, {name: i for i, name in enumerate(names)})
    assert model.linear[FEATURES.index("narrator")] == 2.0
    assert model.linear[FEATURES.index("back_1")] == 1.0
    assert model.linear.sum() == 3.0
    assert model.hidden[FEATURES.index("back_1"), 0] == 0.25
    assert model.scores(row(back_1=1)[None, :]).tolist() == [1.25]


def turn(tag: Tag, *rows: np.ndarray) -> Turn:
    text = '"Not I," said she.'
    paragraph = Paragraph(0, 0, text, [Span(0, 8, "Not I,")], tag)
    return Turn([paragraph], list(range(len(rows))), np.stack(rows))


def test_she_said_is_only_someone_known_to_be_a_woman() -> None:
    model = Model.linear_only(row(back_1=5.0))
    she = Tag("pronoun", None, "female")
    # The man named just before scores highest; the woman is the one the tag allows.
    man = row(back_1=1, gender_clashes=1)
    woman = row(gender_agrees=1)
    assert choose(turn(she, man, woman), model) == 1
    # No one known to be a woman: no one, rather than a guess of the wrong gender.
    assert choose(turn(she, man, row(back_1=1)), model) is None
    # "the woman said" as well.
    assert choose(turn(Tag("noun", "the woman", "female"), man, woman), model) == 1
    # An untagged turn takes the model's first.
    assert choose(turn(Tag(), man, woman), model) == 0


def test_a_third_person_tag_is_never_the_first_person_narrator() -> None:
    model = Model.linear_only(row(narrator=5.0))
    narrator, other = row(narrator=1), row(back_1=1)
    assert choose(turn(Tag("pronoun", None, None), narrator, other), model) == 1
    assert choose(turn(Tag("noun", "our visitor", None), narrator, other), model) == 1
    assert choose(turn(Tag(), narrator, other), model) == 0


def speech(lines: list[tuple[str, int | None]]) -> list[Paragraph]:
    """Paragraphs of one exchange, each all speech; a person gives the tag's speaker."""
    paragraphs = []
    for at, (text, speaker) in enumerate(lines):
        p = Paragraph(0, at, text, [Span(0, len(text), text.strip('"'))])
        if speaker is not None:
            p.speaker, p.how = speaker, "explicit"
        paragraphs.append(p)
    return paragraphs


def test_a_turn_sounds_like_the_person_whose_tagged_lines_share_its_words() -> None:
    # Berry's tagged lines speak dialect, Maurice's do not; the untagged last turn does.
    cast = Cast([Person("Berry"), Person("Maurice")], {"Berry": 0, "Maurice": 1})
    lines = [
        ('"Dat\'s de way, honey, I reckon."', 0),
        ('"I do not think that is so, Hamilton."', 1),
        ("\"Lawd, dat gal o' mine, I reckon she's gone.\"", 0),
        ('"You have been with us a long time."', 1),
        ('"Wy, dat\'s de truf, honey."', None),
    ]
    paragraphs = speech(lines)
    last = turns(paragraphs, cast, None)[-1]
    like = dict(zip(last.candidates, last.features[:, FEATURES.index("sounds_like")], strict=True))
    most = last.features[:, FEATURES.index("sounds_most_like")]
    assert like[0] > 0 > like[1]
    assert most[last.candidates.index(0)] == 1 and most[last.candidates.index(1)] == 0
    # A tagged turn's own words do not vouch for its speaker: Maurice's first line alone.
    first = turns(paragraphs, cast, None)[1]
    assert first.features[first.candidates.index(1), FEATURES.index("sounds_like")] <= 0


def test_a_she_or_he_opening_the_narration_marks_whose_gesture_the_speech_comes_with() -> None:
    # The Age of Innocence: 'She shook her head. "No; just a message."' and '"Our boat?" She
    # frowned.' are hers, with no speech verb; a man's line is "he".
    cast = Cast(
        [Person("Ellen", gender="female"), Person("Newland", gender="male")],
        {"Ellen": 0, "Newland": 1},
    )
    texts = [
        '"He sent some one?" said Newland.',
        'She shook her head. "No; just a message."',
        '"Our boat?" She frowned.',
        '"Then you must come at once."',
    ]
    # Ellen is named in the narration before the talk.
    paragraphs = [Paragraph(0, 0, "Ellen sat down.", [], narration_names=[(0, 0, True)])]
    for at, text in enumerate(texts, start=1):
        start = text.index('"')
        end = text.index('"', start + 1) + 1
        paragraphs.append(Paragraph(0, at, text, [Span(start, end, text[start + 1 : end - 1])]))
    paragraphs[1].speaker, paragraphs[1].how = 1, "explicit"
    found = turns(paragraphs, cast, None)
    agrees, clashes = FEATURES.index("beat_agrees"), FEATURES.index("beat_clashes")
    for turn in found[1:3]:
        ellen, newland = turn.candidates.index(0), turn.candidates.index(1)
        assert turn.features[ellen, agrees] == 1 and turn.features[newland, clashes] == 1
    assert not found[3].features[:, [agrees, clashes]].any()  # no narration: no gesture


def test_whoever_spoke_in_the_scene_is_a_candidate_though_no_one_names_them() -> None:
    # Mansfield Park: Mrs. Grant answers her brother long after a tag last named her.
    cast = Cast([Person("Mrs. Grant"), Person("Henry")], {"Mrs. Grant": 0, "Henry": 1})
    paragraphs = []
    for at in range(16):
        text = f'"Line {at}."'
        paragraphs.append(Paragraph(0, at, text, [Span(0, len(text), text.strip('"'))]))
    paragraphs[0].speaker, paragraphs[0].how = 0, "explicit"
    last = turns(paragraphs, cast, None)[-1]
    assert 0 in last.candidates
    assert last.features[last.candidates.index(0), FEATURES.index("scene_speaker")] == 1


def test_a_he_or_she_opening_a_sentence_brings_in_the_one_it_stands_for() -> None:
    # A Passage to India: Fielding is named two paragraphs before the talk, then only "He".
    cast = Cast(
        [Person("Fielding", gender="male"), Person("Adela", gender="female")],
        {"Fielding": 0, "Adela": 1},
    )
    first = "The official who did his duty best was Mr. Fielding. Adela had gone out."
    second = "He found the younger of them alone. She was looking at the hills."
    third = 'He gave her his information. "Will you come?"'
    paragraphs = [
        Paragraph(0, 0, first, [], narration_names=[(39, 0, False), (53, 1, True)]),
        Paragraph(0, 1, second, []),
        Paragraph(0, 2, third, [Span(29, 46, "Will you come?")]),
    ]
    (turn,) = turns(paragraphs, cast, None)
    here, previous = (
        FEATURES.index("pronoun_subject_here"),
        FEATURES.index("pronoun_subject_previous"),
    )
    fielding, adela = turn.candidates.index(0), turn.candidates.index(1)
    assert turn.features[fielding, here] == 1 and turn.features[adela, here] == 0
    assert turn.features[fielding, previous] == turn.features[adela, previous] == 1
    # A "He" that no man named before can stand for brings in no one.
    alone = [
        Paragraph(0, 0, "Adela sat down.", [], narration_names=[(0, 1, True)]),
        Paragraph(0, 1, third, [Span(29, 46, "Will you come?")]),
    ]
    (turn,) = turns(alone, cast, None)
    assert turn.candidates == [1] and not turn.features[:, [here, previous]].any()


def test_a_description_no_name_owns_is_a_candidate_with_what_its_tag_says() -> None:
    paragraphs = [
        '"To the station," said Margaret.',
        '"Right you are, miss," said the driver.',
        '"How far is it?" asked a stout porter.',
        '"Who is it?" said the old man.',
        '"Nobody," said the other.',
        "The cloud of smoke drifted over the platform.",
        '"Gone," said the cloud.',
    ]
    found, cast, _ = _sieved(paragraphs)
    driver, porter, old_man, other, cloud = turns(found, cast, None)[1:6]

    def described(turn: Turn, name: str) -> np.ndarray:
        person = cast.described[name]
        return turn.features[turn.candidates.index(person)]

    f = FEATURES.index
    assert described(driver, "the driver")[f("described")] == 1
    assert described(driver, "the driver")[f("described_indefinite")] == 0
    assert described(porter, "a stout porter")[f("described_indefinite")] == 1
    assert described(porter, "a stout porter")[f("described_epithet")] == 1
    # A driver and a porter are people; a cloud is not, though the narration brought it in.
    assert described(driver, "the driver")[f("described_role")] == 1
    assert described(porter, "a stout porter")[f("described_role")] == 1
    assert described(cloud, "the cloud")[f("described_role")] == 0
    assert described(cloud, "the cloud")[f("described_scene")] == 1
    assert described(driver, "the driver")[f("described_scene")] == 0
    # Only the turn its tag gives speech to brings a description in; "the old man" (most
    # often someone named) and "the other" bring in no one.
    assert cast.described["the driver"] not in old_man.candidates
    assert "the old man" not in cast.described
    assert not old_man.features[:, f("described")].any()
    assert not other.features[:, f("described")].any()


def test_a_tag_s_own_description_chosen_by_the_first_round_stays_theirs() -> None:
    # The first round gives "said the driver" to the driver; a later round that would give
    # every turn to whoever is named nearby does not take it from them, and a turn with no
    # description takes the later round's choice.
    paragraphs = [
        '"Good morning," said Margaret.',
        "Margaret looked out of the window.",
        '"To the station," said the driver.',
        '"How far is it?"',
    ]
    found, cast, _ = _sieved(paragraphs)
    driver, margaret = cast.described["the driver"], cast.by_form["Margaret"]
    first = Model.linear_only(row(described=5.0))
    later = Model.linear_only(row(back_1=5.0, back_2=5.0))
    # The first turn is settled by its tag: no choice.
    assert ranked(found, cast, None, [later]) == [None, margaret, margaret]
    assert ranked(found, cast, None, [first, later]) == [None, driver, margaret]


def test_a_neighbour_counts_as_much_as_the_round_before_was_sure_of_it() -> None:
    cast = Cast([Person("Ann"), Person("Bob")], {"Ann": 0, "Bob": 1})
    paragraphs = speech([('"Come in."', 0), ('"Thank you."', None), ('"Sit down."', None)])
    # The round before gave the second turn to Bob, unsure; a tag settles the first.
    before = Round([None, 1, 0], [1.0, 0.4, 0.9])
    last = turns(paragraphs, cast, None, before)[-1]
    ann, bob = last.candidates.index(0), last.candidates.index(1)
    assert last.features[bob, FEATURES.index("said_minus_1")] == 0.4
    assert last.features[ann, FEATURES.index("said_minus_2")] == 1.0
    # And so do the exchange's shares: Bob's one unsure turn against Ann's settled one.
    assert last.features[bob, FEATURES.index("run_share")] == 0.4 / 1.4


def test_a_kin_tag_weighs_the_titles_and_the_family_name() -> None:
    # Sense and Sensibility: '"Like him!" replied her mother' is Mrs. Dashwood's, not the
    # daughter just named; "said her sister" is a Miss Dashwood's.
    cast = Cast(
        [
            Person("Elinor Dashwood", Counter({"Elinor Dashwood": 2, "Miss Dashwood": 1})),
            Person("Mrs. Dashwood", Counter({"Mrs. Dashwood": 3})),
            Person("Mrs. Jennings", Counter({"Mrs. Jennings": 2})),
        ],
        {"Elinor Dashwood": 0, "Miss Dashwood": 0, "Mrs. Dashwood": 1, "Mrs. Jennings": 2},
    )
    for person in cast.people:
        person.gender = "female"

    def features(tag: str) -> dict[int, tuple[float, float]]:
        text = f'"I think you will like him," said Elinor. "Like him!" replied {tag}.'
        paragraphs = [
            Paragraph(
                0,
                0,
                "Elinor, Mrs. Dashwood and Mrs. Jennings sat.",
                [],
                narration_names=[(0, 0, True), (8, 1, True), (26, 2, True)],
            ),
            Paragraph(0, 1, text, [Span(0, 29, "I think you will like him,")]),
            Paragraph(
                0,
                2,
                f'"Like him!" replied {tag}.',
                [Span(0, 11, "Like him!")],
                tag=Tag("noun", tag, "female"),
            ),
        ]
        paragraphs[1].speaker, paragraphs[1].how = 0, "explicit"
        turn = turns(paragraphs, cast, None)[-1]
        titled, family = FEATURES.index("kin_titled"), FEATURES.index("kin_family")
        return {
            person: (turn.features[i, titled], turn.features[i, family])
            for i, person in enumerate(turn.candidates)
        }

    mother = features("her mother")
    assert mother[1] == (1, 1)  # Mrs. Dashwood: a wife's title and Elinor's family name
    assert mother[0] == (0, 0)  # only ever "Miss"
    assert mother[2] == (1, 0)  # a wife's title, no Dashwood
    sister = features("her sister")
    assert sister[0] == (1, 1) and sister[1] == (0, 0)
    # A description that names no kin leaves both at nothing.
    assert not any(any(v) for v in features("the lady").values())


def test_a_name_after_a_pronoun_in_its_clause_is_marked_as_not_that_pronoun() -> None:
    # A Passage to India: 'She forgot about Adela in her surprise. "…" she repeated.'
    cast = Cast(
        [Person("Adela", gender="female"), Person("Mrs. Moore", gender="female")],
        {"Adela": 0, "Mrs. Moore": 1},
    )
    text = 'She forgot about Adela in her surprise. "A side-issue?" she repeated.'
    paragraphs = [
        Paragraph(
            0, 0, "Mrs. Moore and Adela sat.", [], narration_names=[(0, 1, True), (15, 0, True)]
        ),
        Paragraph(
            0,
            1,
            text,
            [Span(40, 55, "A side-issue?")],
            tag=Tag("pronoun", None, "female"),
            narration_names=[(17, 0, False)],
            after_pronoun={17: "female"},
        ),
    ]
    (turn,) = turns(paragraphs, cast, None)
    bound = FEATURES.index("pronoun_bound")
    assert turn.features[turn.candidates.index(0), bound] == 1
    assert turn.features[turn.candidates.index(1), bound] == 0
    # 'He forgot about Adela. "…" she repeated.': the "he" is someone else.
    paragraphs[1].after_pronoun = {17: "male"}
    (turn,) = turns(paragraphs, cast, None)
    assert not turn.features[:, bound].any()
