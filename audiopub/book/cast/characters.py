"""The people of a book: each name the tags give, grouped with the other names the book calls
the same person by, and a gender where titles or pronouns show one.

Names group by their parts: "Sherlock Holmes", "Mr. Sherlock Holmes", "Mr. Holmes" and
"Holmes" are one person. A title keeps people apart: "Mr. Carew" and "Mrs. Carew" are two, and
a bare "Carew" goes to whichever of them the book names more often. A first name alone
("Anna") joins the one full name it begins ("Anna Carew"), which joins the one titled name of
its surname and a fitting gender ("Miss Carew").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from nicknames import NickNamer

from audiopub.book.cast.models import Gender
from audiopub.book.cast.tags import TITLES

__all__ = [
    "NOT_NAMES",
    "Cast",
    "Person",
    "build_cast",
    "first_name_gender",
    "first_name_votes",
    "opening_pronoun_gender",
    "pronoun_gender",
    "split_name",
]

_PRONOUNS: dict[str, Gender] = {
    "he": "male", "him": "male", "his": "male", "himself": "male",
    "she": "female", "her": "female", "hers": "female", "herself": "female",
    "il": "male", "elle": "female", "él": "male", "ella": "female", "er": "male",
}  # fmt: skip
_PRONOUN_AFTER = re.compile(r"\b(" + "|".join(_PRONOUNS) + r")\b", re.IGNORECASE)
# Words a sentence may start with before a name ("Then Holmes said"): never part of it. Nor
# a title of several people ("Mesdames Callendar and Lesley").
NOT_NAMES = frozenset(
    """then and but now so when presently here there yes no oh ah well at last still
    again suddenly soon after before while as if once just only even indeed perhaps
    next one that this at by with for where who which what how said says everybody
    everyone nobody somebody someone anybody all both each they we you it
    mesdames messrs messieurs""".split()
)


_ABBREVIATED = frozenset({"St.", "Jr.", "Sr.", "Mt."})  # their full stop is part of the name
# Titles that never stand alone for a person: "said Mr." is a broken tag, while "said the
# General", "the Professor" or "the King" name a character by their rank.
_HONORIFICS = frozenset(
    "mr mr. mrs mrs. miss ms ms. mister missus m. mme mme. mlle mlle. herr frau señor señora "
    "sir madam".split()
)


def split_name(name: str) -> tuple[str | None, list[str]]:
    """A name's title (lower case, no dot) and its other words: "Mrs. Carew" → ("mrs",
    ["Carew"])."""
    words = name.split()
    title = None
    if len(words) > 1 and words[0].lower() in TITLES:
        title = words[0].lower().rstrip(".")
        words = words[1:]
    return title, words


def clean_name(name: str, lowercase_words: Counter[str]) -> str | None:
    """A tag's name without the sentence words before it; None when nothing name-like is
    left. A word the book also writes in lower case is an ordinary word, not a name."""
    words = name.replace("’", "'").split()
    # A sentence's first words before the name ("Then", "Presently"); a word the book also
    # writes in lower case may still be part of a name ("Wild Dog", "the Woman"). An "-ly"
    # word is an adverb only if the book writes it in lower case too: "Dolly", "Emily" are not.
    while words and (
        words[0].lower() in NOT_NAMES
        or (words[0].lower().endswith("ly") and lowercase_words[words[0].lower()] > 0)
    ):
        words = words[1:]

    if words:
        # "Holmes's" and a possessive's mark go; a title keeps its full stop ("Mr.").
        keep = 1 if words[0].lower() in TITLES else 0
        words[keep:] = [w if w in _ABBREVIATED else w.rstrip(".,;:") for w in words[keep:]]
        words[-1] = words[-1].removesuffix("'s").rstrip("'")
        words = [w for w in words if w]
    if not words or (len(words) == 1 and (words[0].lower() in _HONORIFICS or len(words[0]) < 2)):
        return None
    if len(words) == 1 and words[0].lower() in TITLES and not words[0][:1].isupper():
        return None
    return " ".join(words)


@dataclass
class Person:
    name: str  # the fullest form the book uses most
    forms: Counter[str] = field(default_factory=Counter)
    gender: Gender | None = None


@dataclass
class Cast:
    people: list[Person]
    by_form: dict[str, int]  # every name form → index in `people`
    narrator: int | None = None  # the first-person narrator, once known
    # Description tags that stand for no one the book names ("the driver", "a stout
    # porter") → the person of its own each says, whom only the speaker ranker weighs
    # against the people named around (`mentions.described`).
    described: dict[str, int] = field(default_factory=dict)

    def resolve(self, name: str) -> int | None:
        """The person a name form means: the form itself, else its title with the surname
        ("Mr. Sherlock Holmes" → "Mr. Holmes"), else the name without its title, its surname
        or first name, else whoever the surname names most. A title's gender must fit: "Mrs.
        Carew" is never Mr. Carew."""
        if name in self.by_form:
            return self.by_form[name]
        title, words = split_name(name)
        if not words:
            return None
        wanted = TITLES.get(title) if title else None
        written_title = name.split()[0] if title else None

        def fitting(person: int) -> bool:
            return wanted is None or self.people[person].gender in (wanted, None)

        candidates = [
            f"{written_title} {words[-1]}" if written_title else None,
            " ".join(words),
            words[-1],
            words[0],
        ]
        for candidate in candidates:
            if candidate and candidate in self.by_form and fitting(self.by_form[candidate]):
                return self.by_form[candidate]
        # "Helen Stoner" for a book that otherwise says "Miss Stoner": the surname decides,
        # for the person named by it most.
        owners = Counter(
            {
                person: sum(self.people[person].forms.values())
                for form, person in self.by_form.items()
                if form.split()[-1] == words[-1] and form[:1].isupper() and fitting(person)
            }
        )
        return owners.most_common(1)[0][0] if owners else None


# Titles that say what "Mr.", "Mrs." and "Miss" say, in the book's other languages: "Madame
# Pontellier" and "Mrs. Pontellier" are one woman.
_SAME_TITLE = {
    **dict.fromkeys("monsieur m herr señor senor signor signore".split(), "mr"),
    **dict.fromkeys("madame mme frau señora senora signora".split(), "mrs"),
    **dict.fromkeys(
        "mademoiselle mlle fräulein fraulein señorita senorita signorina".split(), "miss"
    ),
}
# A name and, in its hyphens, a lower-case word or more, then the name it stands for.
_EPITHET_NAME = re.compile(r"[A-Z][\w'’]*-(?:[a-z]+-)+([A-Z][\w'’]*)")
# Titles anyone may have, beside ranks (Admiral, Colonel) that name one holder.
_CIVIL = frozenset({"mr", "mrs", "miss", "ms", "mister", "madame", "monsieur", "mademoiselle"})
# Titles a first name keeps: the book calls Sir John Middleton "Sir John", not "John".
_HONOURS = frozenset({"sir", "lady", "lord", "dame"})
# Ranks a woman holds by marriage or birth.
_WOMEN_RANKS = frozenset({"countess", "duchess", "princess", "queen"})
# How many times more a rank's holder is named than the next, to be "the Admiral" alone.
_DOMINANT = 3


def _woman_title(
    first: str, others: list[str], daughters: set[str], mentions: Counter[str]
) -> str | None:
    """The title of a surname ("miss" or "mrs") a woman named in full holds where other women
    share her surname (`others`: their first names; `daughters`: the first names the book
    gives its "Miss"), or None where the book does not say.
    Where each other is a "Miss" by name ("Miss Kitty Hamilton"), she is the "Mrs." (Fannie
    Hamilton, the mother). Of two, a daughter is called by her first name, her mother by her
    title: the one whose first name alone the book uses far more is the "Miss" ("May", 165
    times, is Miss Welland; "Augusta", 4, her mother, would be Mrs. Welland)."""
    if all(other in daughters for other in others):
        return "mrs"
    if len(others) == 1:
        mine, theirs = mentions[first], mentions[others[0]]
        if mine >= _DOMINANT * max(theirs, 1):
            return "miss"
        if theirs >= _DOMINANT * max(mine, 1):
            return "mrs"
    return None


def build_cast(
    mentions: Counter[str],
    genders: dict[str, Counter[Gender]],
    renamed: Iterable[tuple[str, str]] = (),
) -> Cast:
    """Group name forms (with how often each is used as a speaker or mentioned) into people.
    `genders` holds, per form, the pronouns seen right after it; `renamed`, pairs of forms
    the text says are one person ("the Nawab Bahadur's, or I should say Mr. Zulfiqar's")."""
    parent: dict[str, str] = {form: form for form in mentions}

    def find(form: str) -> str:
        while parent[form] != form:
            parent[form] = parent[parent[form]]
            form = parent[form]
        return form

    # Each group's gender where a title or the pronouns after a form show it: a group of one
    # gender never takes in a form of the other ("Archer", he, is not Mrs. Archer).
    group_gender: dict[str, Gender | None] = {
        form: _gender([form], {form: split_name(form)}, genders) for form in mentions
    }

    def union(a: str, b: str) -> bool:
        """Join the groups of `a` and `b`, unless their genders differ (then False)."""
        ra, rb = find(a), find(b)
        ga, gb = group_gender[ra], group_gender[rb]
        if ra != rb and ga is not None and gb is not None and ga != gb:
            return False
        if ra != rb:
            group_gender[ra] = group_gender[rb] = ga or gb
            # The more-used form's group absorbs the other.
            if mentions[ra] >= mentions[rb]:
                parent[rb] = ra
            else:
                parent[ra] = rb
        return True

    parts = {form: split_name(form) for form in mentions}
    titled: dict[str, list[str]] = {}  # surname → titled forms ("Mr. Carew", "Mrs. Carew")
    full: dict[str, list[str]] = {}  # surname → untitled full names ("Anna Carew")
    for form, (title, words) in parts.items():
        if not words:
            continue
        if title:
            titled.setdefault(words[-1], []).append(form)
        elif len(words) > 1:
            full.setdefault(words[-1], []).append(form)

    # A full name and its nickname with one surname are one person ("Bill Sikes", "William
    # Sikes"; "Jim Vane", "James Vane"), where the nickname points at one full name only.
    for names in full.values():
        for name in names:
            first = parts[name][1][0]
            formal = [
                other
                for other in names
                if len(parts[other][1]) == len(parts[name][1])
                and _is_nickname(first, parts[other][1][0])
            ]
            if len(formal) == 1:
                union(formal[0], name)

    def title_key(form: str) -> str:
        title, words = parts[form]
        return f"{_SAME_TITLE.get(title or '', title)} {words[-1]}"

    # Titled forms of one title and surname are one person ("Mr. Holmes", "Mr. Sherlock
    # Holmes"), unless two first names share them ("Mr. John Cavendish", "Mr. Lawrence
    # Cavendish": brothers); a titled form with a first name joins that full name.
    for surname, forms in titled.items():
        # "Miss Julia Bertram", a younger daughter, is not the family's "Miss Bertram", nor
        # "Mr. Edmund Bertram", a younger son, its "Mr. Bertram": their titled forms join
        # their full names only.
        younger = _younger(surname, parts, "miss") | _younger(surname, parts, "mr")
        own_forms = [
            f for f in forms if not (parts[f][0] in ("miss", "mr") and parts[f][1][0] in younger)
        ]
        # The first names each title of the surname is given ("Mrs. Jack Welland": Jack).
        held: dict[str, set[str]] = {}
        for form in own_forms:
            if len(parts[form][1]) > 1:
                held.setdefault(title_key(form), set()).add(parts[form][1][0])
        # A nickname is the name it is short for: "Mr. Bill Sikes" and "Mr. William Sikes"
        # are one man, not brothers.
        for key, firsts in held.items():
            held[key] = {f for f in firsts if not any(_is_nickname(f, other) for other in firsts)}
        by_key: dict[str, str] = {}
        for form in forms:
            if _by_husband(parts[form], group_gender, find):
                continue
            key = title_key(form)
            if len(held.get(key, ())) < 2 and form in own_forms:
                if key in by_key:
                    union(by_key[key], form)
                else:
                    by_key[key] = form
            words = parts[form][1]
            if len(words) > 1 and " ".join(words) in parent:
                union(" ".join(words), form)
        # A full name with no titled form of its own joins the one title of its surname.
        # Of a fitting gender, where the first name shows one ("Adela" is a she: "Adela
        # Quested" is Miss Quested, not Mr. Quested), and not a title another first name
        # holds ("Mrs. Jack Welland" is not May Welland). With two first names of one
        # gender ("Charles Wilcox", "Paul Wilcox": sons), "Mr. Wilcox" is neither of them.
        keys = {title_key(f): f for f in own_forms}
        names = full.get(surname, [])

        def gender_of(name: str) -> Gender | None:
            # The full name's own, else its first name's ("May Welland" is a she where the
            # pronouns after "May" alone are the man's beside her).
            first = parts[name][1][0]
            own = group_gender[find(name)]
            if own is None and first in parent:
                own = group_gender[find(first)]
            return own

        for name in names:
            if any(" ".join(parts[f][1]) == name for f in forms):
                continue
            first = parts[name][1][0]
            own = gender_of(name)
            # Another of the gender leaves the titles to neither, unless the book shows which
            # woman holds which (`_woman_title`).
            # A younger daughter is no rival for "Miss Bertram": Maria Bertram, the other
            # sister named in full, is.
            rivals = [
                other
                for other in names
                if gender_of(other) == own
                and parts[other][1][0] not in (first, *younger)
                and find(other) != find(name)
            ]
            title = None
            if own == "female" and rivals:
                daughters = held.get(f"miss {surname}", set())
                title = _woman_title(first, [parts[r][1][0] for r in rivals], daughters, mentions)
            if own is not None and rivals and title is None:
                continue
            fitting = [
                f
                for key, f in keys.items()
                if (own is None or TITLES.get(parts[f][0] or "") in (own, None))
                and not (parts[f][0] in ("miss", "mr") and first in younger)
                and first in held.get(key, {first})
                and (title is None or parts[f][0] == title)
            ]
            # A woman's full name with both "Miss" and "Mrs." of her surname about is the
            # daughter's ("May Welland" is Miss Welland; Mrs. Welland is her mother).
            misses = [f for f in fitting if parts[f][0] == "miss"]
            if len(fitting) > 1 and own == "female" and len(misses) == 1:
                fitting = misses
            # A rank is its holder's own ("Admiral Crawford" is the uncle): "Henry Crawford"
            # is the one plain "Mr. Crawford".
            civil = [f for f in fitting if parts[f][0] in _CIVIL]
            if len(fitting) > 1 and len(civil) == 1:
                fitting = civil
            if len(fitting) == 1:
                union(fitting[0], name)
    # A woman's rank with her surname ("Countess Olenska") is the one woman of that surname
    # the book names otherwise ("Madame Olenska", "Ellen Olenska"): a man's rank may be a
    # relative's ("Admiral Crawford" is Henry Crawford's uncle), a woman's is her marriage's.
    for form, (title, words) in parts.items():
        if title not in _WOMEN_RANKS or not words:
            continue
        women = {
            find(other)
            for other, (other_title, other_words) in parts.items()
            if other != form
            and other_words[-1:] == words[-1:]
            and other_title not in _WOMEN_RANKS
            and group_gender[find(other)] == "female"
        }
        if len(women) == 1:
            union(women.pop(), form)
    # A rank alone ("the Professor", "the Colonel", "the count") is the one person the book
    # gives that title with a name ("Professor De Worms").
    for form, (title, words) in parts.items():
        if title or not words or words[-1].lower() not in TITLES:
            continue
        if len(words) != 1 and not (len(words) == 2 and words[0] == "the"):
            continue  # "the count" too, a description the tags use as a person
        rank = words[-1].lower().rstrip(".")
        holders: Counter[str] = Counter()
        first_form: dict[str, str] = {}
        for f, (t, w) in parts.items():
            if t == rank and w:
                holders[title_key(f)] += mentions[f]
                first_form.setdefault(title_key(f), f)
        # Or the one of them the book names far more ("the Admiral" is Admiral Croft, not
        # the Admiral Baldwin named once).
        ranked = holders.most_common(2)
        if ranked and (len(ranked) == 1 or ranked[0][1] >= _DOMINANT * ranked[1][1]):
            union(first_form[ranked[0][0]], form)
    # Single words: a surname or first name of a longer form, joined to the most used one.
    family: Counter[str] = Counter()  # surname → mentions of every form that ends with it
    for form, (_, words) in parts.items():
        if words:
            family[words[-1]] += mentions[form]
    for form, (title, words) in parts.items():
        if title or len(words) != 1 or words[0].lower() in TITLES:
            continue
        word = words[0]
        owners = [
            other
            for other, (_, other_words) in parts.items()
            if other != form
            and len(other_words) >= 1
            and word in (other_words[-1], other_words[0])
            and (len(other_words) > 1 or parts[other][0])
        ]
        # The most used that takes it: a group of the other gender refuses it ("Newland" is
        # not Mrs. Newland, his mother, even where she is named more). A first name that two
        # men's full names share is the one of the family the book names more: "Charles" is
        # Charles Musgrove, of the Musgroves, though his cousin Charles Hayter is named in
        # full more. Not a woman's: her two surnames are often her own and her husband's
        # ("May Welland", "May Archer").
        full_names = [o for o in owners if not parts[o][0] and parts[o][1][0] == word]
        # "John" alone is John Dashwood: not "Sir John", where the book names him in full,
        # nor "Mrs. John Dashwood", a title of the other gender than the first name's.
        if full_names:
            owners = [o for o in owners if parts[o][0] not in _HONOURS]
        own = first_name_gender(word)
        owners = [
            o
            for o in owners
            if own is None or parts[o][1][0] != word or TITLES.get(parts[o][0] or "") in (own, None)
        ]
        men = all(group_gender[find(o)] == "male" for o in full_names)
        if men and len({parts[o][1][-1] for o in full_names}) > 1:
            owners = full_names
            ranking = {o: family[parts[o][1][-1]] for o in owners}
        else:
            ranking = {o: mentions[o] for o in owners}
            # A surname alone is a man's, not a woman's: "Crawford" is Henry Crawford, though
            # his sister "Miss Crawford" is named more.
            if not full_names and any(
                parts[o][1][-1] == word and group_gender[find(o)] == "male" for o in owners
            ):
                owners = [o for o in owners if group_gender[find(o)] != "female"]
        for owner in sorted(owners, key=lambda o: (ranking[o], o), reverse=True):
            if union(owner, form):
                break
    # A name with an epithet in its hyphens ("Winnie-the-Pooh") is the one its last part
    # names ("Pooh"). Only with a lower-case word between: "Smith-Jones" is not Jones.
    for form in parts:
        epithet = _EPITHET_NAME.fullmatch(form)
        if epithet is not None and epithet.group(1) in parent:
            union(epithet.group(1), form)
    # A first name alone that no full name holds is the one full name whose first name is it
    # with a pet ending, or the other way round: "Kit" is Kitty Hamilton, "Tom" Tommy Bates.
    for form, (title, words) in parts.items():
        if title or len(words) != 1 or len(words[0]) < 3 or find(form) != form:
            continue
        if any(len(w) > 1 and form in (w[0], w[-1]) for _, w in parts.values()):
            continue
        pets = [
            f
            for f, (t, w) in parts.items()
            if not t and len(w) == 2 and _is_pet_form(form, w[0]) and find(f) != find(form)
        ]
        if len({find(f) for f in pets}) == 1:
            union(pets[0], form)
    # A title with a first name is the one full name it begins, where no one has it as a
    # surname: first the one with the same title ("Sir John" is Sir John Middleton, not John
    # Dashwood), else an untitled one ("Miss Sophy" is Sophy Jackson).
    surnames = {words[-1] for title, words in parts.values() if len(words) > 1}
    for form, (title, words) in parts.items():
        if not title or len(words) != 1 or words[0] in surnames:
            continue
        full_names = [
            f for f, (t, w) in parts.items() if t == title and len(w) == 2 and w[0] == words[0]
        ]
        if not full_names:
            full_names = [
                f for f, (t, w) in parts.items() if not t and len(w) == 2 and w[0] == words[0]
            ]
        if len(full_names) == 1:
            union(full_names[0], form)
    # A name the book writes once or twice one letter off a name it uses far more is that
    # name misspelt ("Mr. Browlow" for Mr. Brownlow, "Charly" for Charley), or its
    # possessive with the apostrophe lost ("Lady Middletons").
    alone = Counter(find(form) for form in mentions)
    for form, (title, words) in parts.items():
        if alone[find(form)] > 1:
            continue
        near = [
            other
            for other, (other_title, other_words) in parts.items()
            if other_title == title
            and mentions[other] >= _MISSPELT_RATIO * mentions[form]
            and _one_letter_off(words, other_words)
        ]
        if len({find(other) for other in near}) == 1:
            union(near[0], form)
    # Last, as the rest may have joined a form to another group already: the text's own word.
    for one, other in renamed:
        union(one, other)

    groups: dict[str, list[str]] = {}
    for form in mentions:
        groups.setdefault(find(form), []).append(form)
    people: list[Person] = []
    by_form: dict[str, int] = {}
    for forms in groups.values():
        counts = Counter({f: mentions[f] for f in forms})
        person = Person(_canonical(counts, parts), counts, _gender(forms, parts, genders))
        for form in forms:
            by_form[form] = len(people)
        people.append(person)
    return Cast(people, by_form)


# How many times more a name must be used than one a letter off it, to be what it misspells.
_MISSPELT_RATIO = 10


def _one_letter_off(words: list[str], others: list[str]) -> bool:
    """Whether two names differ in one word only, by a letter more or less after its first
    ("Browlow", "Brownlow"), the shorter of four letters at least."""
    if len(words) != len(others):
        return False
    differ = [(a, b) for a, b in zip(words, others, strict=True) if a != b]
    if len(differ) != 1:
        return False
    short, long = sorted(differ[0], key=len)
    if len(long) != len(short) + 1 or len(short) < 4:
        return False
    return any(long[:i] + long[i + 1 :] == short for i in range(1, len(long)))


def _younger(
    surname: str, parts: Mapping[str, tuple[str | None, list[str]]], title: str
) -> set[str]:
    """The first names of a family's younger daughters ("miss") or sons ("mr"): where the
    book speaks of several ("the Miss Bertrams", "the two Mr. Bertrams"), the eldest is
    "Miss Bertram" or "Mr. Bertram" and a younger one "Miss Julia Bertram" or "Mr. Edmund
    Bertram"; where no daughter is named so in full, "Miss Marianne" (the eldest may be
    called by her first name too: "Miss Maria" is Maria Bertram)."""
    if (title, [surname + "s"]) not in parts.values():
        return set()
    titled = [words for t, words in parts.values() if t == title]
    named = {words[0] for words in titled if len(words) == 2 and words[1] == surname}
    if named or title != "miss":
        return named
    return {words[0] for words in titled if len(words) == 1 and words[0] != surname}


def _by_husband(
    part: tuple[str | None, list[str]],
    group_gender: dict[str, Gender | None],
    find: Callable[[str], str],
) -> bool:
    """A wife named by her husband's name ("Mrs. Charles Wilcox", where Charles Wilcox is a
    man of the book): his son's wife, say, not the plain "Mrs. Wilcox"."""
    title, words = part
    husband = " ".join(words)
    return (
        title == "mrs"
        and len(words) > 1
        and husband in group_gender
        and group_gender[find(husband)] == "male"
    )


def _canonical(counts: Counter[str], parts: dict[str, tuple[str | None, list[str]]]) -> str:
    """The untitled full name used most, else the titled one, else the single word."""

    def rank(form: str) -> tuple[int, int, int]:
        title, words = parts[form]
        kind = 2 if (len(words) > 1 and not title) else 1 if title else 0
        return kind, counts[form], -len(form)

    return max(counts, key=rank)


def _gender(
    forms: Iterable[str],
    parts: dict[str, tuple[str | None, list[str]]],
    genders: dict[str, Counter[Gender]],
) -> Gender | None:
    votes: Counter[Gender] = Counter()
    for form in forms:
        title = parts[form][0]
        if title is not None:
            titled = TITLES.get(title) or TITLES.get(title + ".")
            if titled is not None:
                votes[titled] += 100
        votes.update(genders.get(form, Counter()))
    if not votes:
        return None
    (top, count), *rest = votes.most_common()
    other = rest[0][1] if rest else 0
    if count >= 2 and count >= 2 * other:
        return top
    return None


@cache
def _nicknames() -> NickNamer:
    return NickNamer()


def _is_pet_form(one: str, other: str) -> bool:
    """Whether one first name is the other with a pet ending ("Kit", "Kitty"; "Ann",
    "Annie"; "Tom", "Tommy"), either way round."""
    short, long = sorted((one, other), key=len)
    return re.fullmatch(rf"{re.escape(short)}{re.escape(short[-1])}?(?:y|ie|ey)", long) is not None


def _is_nickname(short: str, name: str) -> bool:
    """Whether a first name is a nickname of another ("Bill" of "William", "Jim" of
    "James"), by the hand-curated English list of the `nicknames` package, which spells a
    pet name in "-ie" only ("Charley" is its "Charlie")."""
    short, name = short.lower(), name.lower()
    spellings = {short, short[:-2] + "ie"} if short.endswith("ey") else {short}
    return short != name and any(name in _nicknames().canonicals_of(s) for s in spellings)


# First names of one gender (`scripts/make_first_names.py`, from the Names Corpus).
_FIRST_NAMES = Path(__file__).with_name("first_names.txt")
# How many pronouns a first name's gender counts for at least: more than the stray ones after
# a name (the first pronoun after "Hattie" is often the man beside her), less than a title.
_FIRST_NAME_VOTES = 10


@cache
def _first_names() -> dict[str, Gender]:
    genders: dict[str, Gender] = {}
    for line in _FIRST_NAMES.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, gender = line.split("\t")
            genders[name] = "male" if gender == "male" else "female"
    return genders


def first_name_gender(word: str) -> Gender | None:
    """The gender of a first name of one gender ("Annie"); None for any other word."""
    return _first_names().get(word)


def first_name_votes(
    forms: Iterable[str], pronouns: Mapping[str, Counter[Gender]] | None = None
) -> dict[str, Counter[Gender]]:
    """The gender votes of the name forms that start with a first name of one gender ("May
    Welland", "May"): not a titled form, nor a single word that is another form's surname
    ("Stone" of "Harvey Stone", "Allen" of "Mrs. Allen"). Given the `pronouns` seen after
    each form, the first name outvotes them, unless they say the other gender three to one
    ("Berry Hamilton" is a man though "Berry" is mostly a woman's name): "Henry", with as
    many "she" as "he" after it beside the women he talks to, stays a man."""
    parts = {form: split_name(form) for form in forms}
    surnames = {words[-1] for title, words in parts.values() if words and (title or len(words) > 1)}
    votes: dict[str, Counter[Gender]] = {}
    for form, (title, words) in parts.items():
        if title or not words or (len(words) == 1 and words[0] in surnames):
            continue
        gender = first_name_gender(words[0])
        if gender is None:
            continue
        seen = (pronouns or {}).get(form, Counter())
        against = sum(count for other, count in seen.items() if other != gender)
        if against >= 3 and against >= 3 * seen[gender]:
            continue
        votes[form] = Counter({gender: max(_FIRST_NAME_VOTES, 2 * against)})
    return votes


# The pronouns that open a sentence about their person ("She shook her head."): subject and
# possessive forms.
_OPENING = re.compile(r"\W*(he|his|she|her|il|elle|él|ella|er)\b", re.IGNORECASE)


def opening_pronoun_gender(text: str) -> Gender | None:
    """The gender of a pronoun opening `text`, after any punctuation ("—She frowned.")."""
    match = _OPENING.match(text)
    return _PRONOUNS[match.group(1).lower()] if match else None


def pronoun_gender(text: str) -> Gender | None:
    """The gender of the first third-person pronoun in `text` (narration after a name)."""
    match = _PRONOUN_AFTER.search(text)
    if match is None:
        return None
    return _PRONOUNS[match.group(1).lower()]
