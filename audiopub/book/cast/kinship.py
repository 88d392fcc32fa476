"""Tags that name a speaker by kin: "said her mother", "his wife interposed". The speaker is
a relation of someone else in the scene, so the nearest woman, as a plain "she said" would
take, is often the wrong one: the daughter herself.

A relation is told by the name the family shares (Elinor Dashwood's mother is Mrs. Dashwood)
and by the titles the book gives them (a mother or wife is no "Miss", a sister or daughter
no "Mrs."). The speaker ranker weighs both (`ranker.FEATURES`).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

from audiopub.book.cast.characters import Cast, split_name
from audiopub.book.cast.models import Gender
from audiopub.book.cast.tags import NOUN_GENDERS, POSSESSIVE

# English kin words, each with the gender its noun gives.
KIN: dict[str, Gender] = {
    word: NOUN_GENDERS[word]
    for word in "mother wife aunt sister daughter niece mamma "
    "father husband uncle brother son nephew papa".split()
}
# Women kin who are married, or are (most often) not yet.
_MARRIED = frozenset({"mother", "wife", "aunt", "mamma"})
_UNMARRIED = frozenset({"sister", "daughter", "niece"})
_WIFE_TITLES = frozenset({"mrs", "lady", "madame", "mme", "frau", "señora", "signora"})
_GIRL_TITLES = frozenset(
    {"miss", "mademoiselle", "mlle", "fräulein", "fraulein", "señorita", "signorina"}
)

# "her mother", "his younger brother", "their aunt", "my wife", "Daisy's mamma" (also "Daisy s
# mamma": the apostrophe lost): one describing word at most.
_KIN_TAG = re.compile(
    rf"(?:his|her|their|my|(?P<owner>[\w.'’-]+(?:\s[\w'’-]+)*?){POSSESSIVE})"
    rf"\s+(?:[a-z-]+\s+)?(?P<kin>{'|'.join(KIN)})",
    re.IGNORECASE,
)
_POSSESSIVES = frozenset({"his", "her", "their", "my"})  # no one's name


@dataclass(frozen=True)
class Kin:
    word: str  # "mother"
    gender: Gender  # the kin's own
    # Whose kin, where a name says it: "Daisy" in "Daisy's mamma" (a tag's description is
    # kept in lower case: capitalised again here).
    owner: str | None = None


def kin_tag(subject: str | None) -> Kin | None:
    """The kinship a description tag names, or None: "her mother" → mother."""
    match = _KIN_TAG.fullmatch(subject.strip()) if subject else None
    if match is None:
        return None
    word, owner = match.group("kin").lower(), match.group("owner")
    if owner is not None and owner.lower() in _POSSESSIVES:
        owner = None
    return Kin(word, KIN[word], string.capwords(owner) if owner else None)


def family_names(cast: Cast, person: int) -> set[str]:
    """The last words of a person's names with a title or of two words or more."""
    names = set()
    for form in cast.people[person].forms:
        title, words = split_name(form)
        if words and (title or len(words) > 1) and words[-1][:1].isupper():
            names.add(words[-1])
    return names


def titled_as(cast: Cast, person: int, kin: Kin) -> bool:
    """Whether the titles the book gives a person fit the kin: a mother who is only ever
    "Miss", a sister who is "Mrs.", do not."""
    titles = {title for form in cast.people[person].forms if (title := split_name(form)[0])}
    if kin.word in _MARRIED:
        return not (titles & _GIRL_TITLES and not titles & _WIFE_TITLES)
    if kin.word in _UNMARRIED:
        return not titles & _WIFE_TITLES
    return True
