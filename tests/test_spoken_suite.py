"""Audiopub's spoken forms on an outside suite (scripts/spoken_suite.py): the development half
of NeMo's normalisation cases in shared/spoken-dev. Each language's share read right may not
fall below its floor, and every judgement (an accepted alternative, an exclusion) names a case
of the suite, an accepted reading being what Audiopub still says."""

from __future__ import annotations

import pytest
from script_modules import script

# The share right per language on the development half, a little under what it is today.
FLOORS = {"en": 0.97, "de": 0.98, "fr": 0.98, "es": 0.94}

suite = script("spoken_suite")
pytestmark = pytest.mark.skipif(
    not suite.DEFAULT_FOLDER.is_dir(), reason=f"no suite in {suite.DEFAULT_FOLDER}"
)


@pytest.fixture(scope="module")
def outcomes() -> list:  # type: ignore[type-arg]
    return suite.outcomes(suite.DEFAULT_FOLDER)  # type: ignore[no-any-return]


@pytest.mark.parametrize("language", suite.LANGUAGES)
def test_the_share_read_right_holds(outcomes: list, language: str) -> None:  # type: ignore[type-arg]
    mine = [o for o in outcomes if o.case.language == language]
    assert len(mine) >= 50
    assert suite.share(mine) >= FLOORS[language], suite.report(mine, failures=True)


@pytest.mark.parametrize("language", suite.LANGUAGES)
def test_every_judgement_is_of_a_case_and_still_holds(
    outcomes: list,  # type: ignore[type-arg]
    language: str,
) -> None:
    written = {o.case.written: o for o in outcomes if o.case.language == language}
    for judgement in suite.read_judgements(language).values():
        assert judgement.written in written, f"not a case of the suite: {judgement.written!r}"
        assert judgement.reason.strip(), f"no reason given for {judgement.written!r}"
        if judgement.verdict == "accept":
            outcome = written[judgement.written]
            assert outcome.right, (
                f"{judgement.written!r} is now read {outcome.reading!r}, not the accepted "
                f"{judgement.reading!r}"
            )


def test_the_comparison_sets_aside_only_what_is_not_heard() -> None:
    assert suite.comparable("Twenty-one, ONE hundred and five.", "en") == (
        "twenty one one hundred five"
    )
    # German compounds are one word however the suite spaces them, but "und" is still heard.
    assert suite.comparable("ein hundert und fünf", "de") == suite.comparable(
        "einhundertundfünf", "de"
    )
    assert suite.comparable("hundert und fünf", "de") != suite.comparable("hundertfünf", "de")
    assert suite.comparable("two dollars", "en") != suite.comparable("two pounds", "en")
