"""The people a book names, and where: the forms of their names counted (speech tags, titled
and full names in narration, descriptions set beside a name, descriptions used as people of
their own) and grouped into a cast; then each paragraph's names in narration, the people its
speech calls by name and the one its speech introduces; and descriptions that stand for one
named person throughout the book ("the doctor").

The sieves (`attribution`) decide speakers from what is found here.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import combinations, pairwise

from audiopub.book.cast.characters import (
    NOT_NAMES,
    Cast,
    Person,
    build_cast,
    first_name_gender,
    first_name_votes,
    pronoun_gender,
)
from audiopub.book.cast.conversation import Paragraph, narration
from audiopub.book.cast.models import Gender
from audiopub.book.cast.tags import (
    NOUN_GENDERS,
    SETTING_APART,
    TITLES,
    after_title,
    names_a_role,
    noun_gender,
)
from audiopub.book.models import Book

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# A description used as a tag this often is a person of its own ("the artilleryman").
_NOMINAL_MIN = 3
# How often a first name and a surname that is also a noun must be written together.
_PLAIN_SURNAME_MIN = 3
# The last word of a place's name, never a surname: "the Indian Ocean", "Baker Street".
_PLACES = frozenset(
    "Ocean Sea River Street Road Avenue Square Station Channel Gulf Canal Mountains Islands".split()
)
# Speech that says who speaks: "My name is Helen Stoner", "I am Sherlock Holmes".
_INTRODUCTION = re.compile(
    r"(?:^|[.!?]\s)(?:[Mm]y name is|I am|I'm)\s+((?:(?:Mr|Mrs|Miss|Dr)\.?\s+)?[A-Z][\w'’-]+"
    r"(?:\s+[A-Z][\w'’-]+)*)"
)
# A question for the name of whom it is put to.
_ASKS_NAME = re.compile(
    r"\b(?:your name|who are you|what name)\b[^.!?]*\?|\bwho (?:is it|is there|'s there)\?", re.I
)
# A title and the name it goes with: "Mr. Holmes", "Lady Bertram", "Mr. van der Luyden".
TITLED_NAME = re.compile(
    # Only an abbreviation takes a full stop: "General. He went" ends a sentence.
    r"\b(?:(?:Mr|Mrs|Ms|Dr|Mme|Mlle)\.?|Miss|Lady|Lord|Sir|Madame|Mademoiselle|Monsieur|Herr"
    r"|Frau|Fräulein|Fraulein|Señor|Señora|Señorita|Don|Doña|Captain|Colonel"
    r"|Major|General|Admiral|Lieutenant|Sergeant|Inspector|Professor|Duke|Duchess|Marquis"
    r"|Earl)(?:\s(?:van|von|der|de|du)){0,2}"
    # The name ends at a possessive: "Mrs. Archer's Thanksgiving" is Mrs. Archer's.
    r"(?:\s(?:St\.|[A-Z](?:(?![’']s\b)[\w'’-])+)){1,3}"
)
# "Mr. and Mrs. Allen", "Mr and Mrs Musgrove": two people, a Mr. and a Mrs. of that name.
_COUPLE = re.compile(r"\b(Mr|Mrs)(\.?) and (Mrs|Mr)\.? ((?:St\. )?[A-Z][\w'’-]+)\b(?!\s[A-Z][a-z])")
_LONGER_NAME = re.compile(r"['’]?\s[A-Z][a-z]")
# What may come before a sentence's subject: its start, a conjunction, an article.
_SUBJECT_BEFORE = re.compile(
    r"(?:^|[.!?;:]\s+|\b(?:and|then|but|when|while|as)\s+)(?:the\s+)?\W*$", re.IGNORECASE
)
# A vocative inside speech: ", Watson," "my dear Watson." "Mr. Holmes?" at a clause's edge.
_VOCATIVE = re.compile(
    r"(?:^|[,;!?]\s|" + after_title(negated=True) + r"\.\s)"
    r"(?:(?:my|My)\s+(?:dear|good)\s+|(?:[Dd]ear|O|Oh)\s+)?"
    r"((?:(?:Mr|Mrs|Miss|Dr|Sir|Lady|Lord|Captain|Inspector)\.?\s+)?(?:St\.\s)?[A-Z][\w'’-]+"
    r"(?:\s+[A-Z][\w'’-]+)?)(?=[,.!?;]|$)"
)


def book_cast(paragraphs: list[Paragraph], lowercase: Counter[str]) -> Cast:
    """The people the book names, each with the forms of their name, from its speech tags and
    its narration (`lowercase`: `lowercase_words` of the book)."""
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
    mentions.update(_first_names(paragraphs, mentions, lowercase))
    mentions.update(_acting_first_names(paragraphs, mentions, lowercase))
    _count_narration_mentions(paragraphs, mentions)
    genders = _pronouns_after_names(paragraphs, mentions)
    for form, votes in first_name_votes(mentions, genders).items():
        genders.setdefault(form, Counter()).update(votes)
    cast = build_cast(mentions, genders, _renamings(paragraphs, mentions))
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
    _genders_as_subject(paragraphs, cast)
    _rank_and_place(paragraphs, cast)
    return cast


# A possessive or reflexive in the clause a name opens is most often its person's own:
# "Ronny shook his head", "Adela found herself alone". Not "her" as an object ("Ronny kissed
# her.", "gave her the book"): "her" counts before a word of what she has.
_OWN = re.compile(
    r"\b(his|himself|herself|her(?=\s+(?!(?:the|a|an|and|or|but|to|in|at|on|of|for|with|by"
    r"|from|that|up|down|out|away|back|again|so|as|if|when)\b)[a-z]))\b"
)
_CLAUSE_END = re.compile(r"[.!?;,:]|\b[A-Z][a-z]|\b(?:and|but|who|which|that|while|when)\b")
_OWN_GENDERS: dict[str, Gender] = {
    "his": "male", "himself": "male", "her": "female", "herself": "female"
}  # fmt: skip
# How many such possessives, and how many times more of one gender, give a person theirs.
_OWN_MIN = 3


def _genders_as_subject(paragraphs: list[Paragraph], cast: Cast) -> None:
    """A gender for the people the pronouns after their names left without one (the women
    and men around them take as many): the one of the possessives in the clauses their
    names open, where at least three say it, three to one."""
    unknown = {
        form: person
        for form, person in cast.by_form.items()
        if cast.people[person].gender is None and form[:1].isupper()
    }
    if not unknown:
        return
    pattern = _names_pattern(list(unknown))
    forms = {form.casefold(): form for form in unknown}
    votes: dict[int, Counter[Gender]] = {}
    for p in paragraphs:
        for _, piece in narration(p):
            for match in pattern.finditer(piece):
                form = _form_of(match.group(), forms)
                after = piece[match.end() : match.end() + 80]
                # The subject of a verb: "Ronny shook", not "to Ronny" nor "Ronny's".
                if form is None or not re.match(r"\s+[a-z]", after):
                    continue
                if not _SUBJECT_BEFORE.search(piece[: match.start()]):
                    continue
                end = _CLAUSE_END.search(after)
                clause = after[: end.start()] if end else after
                for word in _OWN.findall(clause):
                    votes.setdefault(unknown[form], Counter())[_OWN_GENDERS[word]] += 1
    for person, counts in votes.items():
        (top, count), *rest = counts.most_common()
        if count >= _OWN_MIN and count >= _OWN_MIN * (rest[0][1] if rest else 0):
            cast.people[person].gender = top


def _rank_and_place(paragraphs: list[Paragraph], cast: Cast) -> None:
    """A rank that speaks as a person of its own ("said the duchess") is the one the
    narration names in full in the chapters where it speaks ("the Duchess of Monmouth"):
    that name joins its forms, where its chapters hold most of the rank's speech."""
    for index, person in enumerate(list(cast.people)):
        words = person.name.split()
        if len(words) != 2 or words[0] != "the" or words[1] not in TITLES:
            continue
        spoken = Counter(p.chapter for p in paragraphs if p.spans and p.tag.name == person.name)
        full = re.compile(rf"\b{words[1].capitalize()} of [A-Z][\w'’-]+")
        places: dict[str, set[int]] = {}
        for p in paragraphs:
            if p.chapter in spoken:
                for _, piece in narration(p):
                    for match in full.finditer(piece):
                        places.setdefault(match.group(), set()).add(p.chapter)
        if not places:
            continue
        share = {name: sum(spoken[c] for c in chapters) for name, chapters in places.items()}
        name = max(share, key=lambda n: share[n])
        if 2 * share[name] >= spoken.total() and name not in cast.by_form:
            person.forms[name] += share[name]
            cast.by_form[name] = index


def lowercase_words(book: Book) -> Counter[str]:
    counts: Counter[str] = Counter()
    for chapter in book.chapters:
        for paragraph in chapter.paragraphs:
            counts.update(w for w in _WORD.findall(paragraph) if w[0].islower())
    return counts


def _names_pattern(forms: list[str]) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w.])(?:{_alternatives(forms)})(?![\w])", re.IGNORECASE)


def _alternatives(forms: list[str]) -> str:
    """The forms as one regular-expression alternation, the longest first."""
    return "|".join(sorted((re.escape(f) for f in forms), key=len, reverse=True))


def _form_of(match: str, forms: dict[str, str]) -> str | None:
    """A matched name back to its form; a name must keep its capital, a description may
    start a sentence ("The artilleryman")."""
    form = forms.get(match.casefold())
    if form is None:
        return None
    if form[:1].isupper() and match != form:
        return None
    return form


# A name the writer or a speaker corrects to another: "the Nawab Bahadur's, or I should say
# Mr. Zulfiqar's", "Sally, or rather Sarah".
_CORRECTION = (
    r"(?:['’]s)?[\s,;:—–-]*or\s+(?:rather|I should say|should I say|I mean)[\s,]+(?:to\s+)?"
)


def _renamings(paragraphs: list[Paragraph], mentions: Counter[str]) -> list[tuple[str, str]]:
    """Pairs of names the text says are one person's (`_CORRECTION`)."""
    names = [f for f in mentions if f[:1].isupper()]
    if not names:
        return []
    alternatives = _alternatives(names)
    pattern = re.compile(
        rf"(?<![\w.])(?P<one>{alternatives})(?![\w])"
        + _CORRECTION
        + rf"(?:the\s+)?(?P<other>{alternatives})(?![\w])"
    )
    forms = {f.casefold(): f for f in names}
    pairs = []
    for p in paragraphs:
        for match in pattern.finditer(p.text):
            one = _form_of(match.group("one"), forms)
            other = _form_of(match.group("other"), forms)
            if one is not None and other is not None and one != other:
                pairs.append((one, other))
    return pairs


def _count_narration_mentions(paragraphs: list[Paragraph], mentions: Counter[str]) -> None:
    """How often each speaker's name is also written in narration (makes "Holmes" more used
    than a once-named "Mr. Holmes")."""
    if not mentions:
        return
    forms = {f.casefold(): f for f in mentions}
    pattern = _names_pattern(list(mentions))
    extra: Counter[str] = Counter()
    for p in paragraphs:
        for _, piece in narration(p):
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
        for _, piece in narration(p):
            found.update(m.group().rstrip("'’") for m in TITLED_NAME.finditer(piece))
            for m in _COUPLE.finditer(piece):
                surname = m.group(4).removesuffix("'s").removesuffix("’s")
                found[f"{m.group(1)}{m.group(2)} {surname}"] += 1
        # Speech calling someone by a titled name ("Well, Mrs. St. Clair, …") names them too.
        for span in p.spans:
            for name in _vocatives(span.text):
                if TITLED_NAME.fullmatch(name):
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
    plain: Counter[str] = Counter()
    for p in paragraphs:
        for piece in (p.text,):  # speech too: "This is Bill Gorton," introduces him
            for match in _FULL_NAME.finditer(piece):
                first, last = match.groups()
                if first not in words and last not in words:
                    continue
                if first.lower() in TITLES or first.lower() in NOT_NAMES:
                    continue
                # "Mr. Hastings — Miss Howard" are two people; "Indian Ocean" is a place.
                if last.lower() in TITLES or last in _PLACES:
                    continue
                # An ordinary word starting a sentence, or a place ("Street"); a word the tags
                # already use as a name is one ("Bill" said, though the bill is paid).
                ordinary = [
                    w for w in (first, last) if lowercase[w.lower()] >= 3 and w not in spoken
                ]
                if not ordinary:
                    found[match.group()] += 1
                elif ordinary == [last] and first in spoken:
                    # A speaker's first name before a word that is also a noun: a surname
                    # where the book writes the two together often ("Harvey Stone").
                    plain[match.group()] += 1
    # Twice, or once where both words are names the book already uses ("Adela", "Miss
    # Quested": "Adela Quested"); a surname that is also a noun, three times.
    return Counter(
        {
            name: n
            for name, n in found.items()
            if n >= 2 or (name.split()[0] in firsts and name.split()[-1] in surnames)
        }
        | {name: n for name, n in plain.items() if n >= _PLAIN_SURNAME_MIN}
    )


def _first_names(
    paragraphs: list[Paragraph], mentions: Counter[str], lowercase: Counter[str]
) -> Counter[str]:
    """The first name of a full name, written alone at least twice ("Newland Archer", then
    "Newland laughed."): the name a reader knows them by in the narration, which the tags may
    never use. Not where two full names share it ("John Dashwood", "John Willoughby"), where
    it is also the surname of a full name, nor an ordinary word ("Will")."""
    owners: dict[str, set[str]] = {}
    surnames: set[str] = set()  # of full names: "Archer" is no one's first name
    for form in mentions:
        words = form.split()
        if len(words) == 2 and words[0][:1].isupper() and words[0].lower() not in TITLES:
            surnames.add(words[1])
            # "the Newland Archers" are the family of Newland Archer.
            owners.setdefault(words[0], set()).add(words[1].removesuffix("s"))
    firsts = {
        first
        for first, lasts in owners.items()
        if len(lasts) == 1
        and first not in mentions
        and first not in surnames
        and first.lower() not in NOT_NAMES
        and lowercase[first.lower()] < 3
    }
    if not firsts:
        return Counter()
    # Alone: not followed by another capitalised word ("Newland Archer" is the full name).
    alone = re.compile(
        r"(?<![\w.])(" + "|".join(map(re.escape, sorted(firsts))) + r")\b(?!\s[A-Z])"
    )
    found = Counter(m.group(1) for p in paragraphs for m in alone.finditer(p.text))
    return Counter({first: n for first, n in found.items() if n >= 2})


# A first name opening a sentence, its verb after it: "Annie hesitated."
_ACTING = re.compile(r"(?:^|[.!?;:]\s+|\b(?:and|then|but)\s+)([A-Z][a-z]+)\s+(?=[a-z]{3,}\b)")
# How often: the maid who answers the bell three times is someone; a passer-by is not.
_ACTING_MIN = 3


def _acting_first_names(
    paragraphs: list[Paragraph], mentions: Counter[str], lowercase: Counter[str]
) -> Counter[str]:
    """First names of one gender the narration makes a sentence's subject several times
    ("Annie considered", "Annie hesitated") though no tag names them: people a pronoun or
    the turn-taking may mean. Not a word the book also writes in lower case ("Will"), nor
    one already part of a name."""
    known = {word for form in mentions for word in form.split()}
    found: Counter[str] = Counter()
    for p in paragraphs:
        for _, piece in narration(p):
            found.update(m.group(1) for m in _ACTING.finditer(piece))
    return Counter(
        {
            word: count
            for word, count in found.items()
            if count >= _ACTING_MIN
            and word not in known
            and word.lower() not in NOT_NAMES
            and not lowercase[word.lower()]
            and first_name_gender(word) is not None
        }
    )


def _appositions(
    paragraphs: list[Paragraph], mentions: Counter[str], nominals: Counter[str]
) -> dict[str, str]:
    """Descriptions the narration sets beside a name, closed by punctuation ("his uncle, Lord
    Fermor, a genial…", "Mr. Bumble, the beadle."): the description means that name. Not a
    phrase that merely runs into a name ("on their way to the magistrate, Mr. Bumble
    said"), a list ("Mr. Brittles, Mr. Giles, the tinker"), a possessive ("Rafi, the
    engineer's nephew"), nor a description that points back ("the other"). Where the book
    sets one description beside several names, the most frequent must be two in three."""
    usable = [n for n in nominals if _STANDS_ALONE.match(n) and not set(n.split()) & _NOT_SOMEONE]
    if not usable or not mentions:
        return {}
    names = _names_pattern(list(mentions)).pattern
    described = "|".join(re.escape(n) for n in sorted(usable, key=len, reverse=True))
    # The names keep their capitals ("the woman rose" names no Rose); the description may
    # open a sentence.
    after = re.compile(rf"(?i:\b({described})),\s+({names})(?=[,.;:!?)])")
    before = re.compile(
        rf"(?<!,\s)({names}),\s+(?i:({described}))(?=[,.;:!?)]|\s+(?:of|to|at|in|who)\b)"
    )
    seen: dict[str, Counter[str]] = {}
    for p in paragraphs:
        # Speech sets them beside names too ('"…one was to Mr. Wells, the lawyer, and…"'),
        # though a "his" or "my" there is the speaker's, and "the gentleman" whoever the
        # speaker means by it: only a "the" with what they do.
        pieces = [(t, False) for _, t in narration(p)] + [(s.text, True) for s in p.spans]
        for piece, speech in pieces:
            pairs = [(m.group(1), m.group(2)) for m in after.finditer(piece)]
            pairs += [(m.group(2), m.group(1)) for m in before.finditer(piece)]
            for nominal, name in pairs:
                if not speech or (nominal.lower().startswith("the ") and not noun_gender(nominal)):
                    seen.setdefault(nominal.lower(), Counter())[name] += 1
    found = {}
    for nominal, beside in seen.items():
        name, count = beside.most_common(1)[0]
        if 3 * count >= 2 * sum(beside.values()):
            found[nominal] = name
    return found


# Descriptions that point back to whoever was last named, never to one person.
_RELATIVE = frozenset("other former latter first second third one same elder younger older".split())
# Nor are these a person of their own: "the other" is whoever the exchange makes them,
# "the voice" anyone's.
_NOT_SOMEONE = _RELATIVE | {"voice"}
# A description that can stand for one person: "the beadle", "his uncle" (not "that he").
_STANDS_ALONE = re.compile(r"(?:the|his|her|my|our|their) [a-z]")


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
        head = nominal.split()[-1]
        if count >= _NOMINAL_MIN and head not in NOUN_GENDERS and head not in _NOT_SOMEONE:
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
        for _, piece in narration(p):
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


# A quotation inside speech ("'This is Mr. Jabez Wilson,' said my assistant"): others' words,
# so the names it calls are not the ones the speaker calls. An opening mark follows a space or
# the start, a closing one comes before a space or punctuation: "don't" and "boys'" are not.
_NESTED = re.compile(r"""(?:^|(?<=[\s(—-]))(['‘"“])(?=\S).*?(?<=\S)['’"”](?=[\s,.;:!?—-]|$)""")


# The end of a clause, and a "she" or "he" as a subject after it.
_CLAUSE_BREAK = re.compile(r"[,;:!?]\s|" + after_title(negated=True) + r"\.\s")
HE_OR_SHE = re.compile(r"\b(?:she|he)\b", re.IGNORECASE)


def _pronoun_before(narration: str) -> Gender | None:
    """The gender of a "she" or "he" in the clause that `narration` ends: whom a name after
    it cannot be ('She forgot about Adela', '"…," said he to Jim'). A pronoun in a clause of
    its own before the name may look ahead to it ('When she came in, Adela …'): not that."""
    clause = narration[_last_break(narration) :]
    match = HE_OR_SHE.search(clause)
    if match is None:
        return None
    return "female" if match.group().lower() == "she" else "male"


def _last_break(text: str) -> int:
    ends = [m.end() for m in _CLAUSE_BREAK.finditer(text)]
    return ends[-1] if ends else 0


def find_names(paragraphs: list[Paragraph], cast: Cast, lowercase: Counter[str]) -> None:
    """Each paragraph's people named in narration, those its speech names, those its speech
    calls by name, and the one its speech says it is."""
    forms = {f.casefold(): f for f in cast.by_form}
    pattern = _names_pattern(list(cast.by_form)) if forms else None
    for p in paragraphs:
        if pattern is not None:
            for offset, piece in narration(p):
                for match in pattern.finditer(piece):
                    form = _form_of(match.group(), forms)
                    if form is None or _LONGER_NAME.match(piece, match.end()):
                        continue  # "Baker Street" is not Mr. Baker
                    before, at = piece[: match.start()], offset + match.start()
                    subject = _SUBJECT_BEFORE.search(before) is not None
                    p.narration_names.append((at, cast.by_form[form], subject))
                    pronoun = _pronoun_before(before)
                    if pronoun is not None:
                        p.after_pronoun[at] = pronoun
            p.narration_names.sort()
        for span in p.spans:
            own = _NESTED.sub(lambda m: " " * len(m.group()), span.text)
            if pattern is not None:
                for match in pattern.finditer(own):
                    form = _form_of(match.group(), forms)
                    if form is not None and not _LONGER_NAME.match(own, match.end()):
                        p.speech_names.append(cast.by_form[form])
            for name in _vocatives(own):
                if lowercase[name.split()[-1].lower()] >= 3 or name.lower() in TITLES:
                    continue  # an ordinary word starting a clause, or a title alone
                p.vocative_names.append(name)
                person = cast.resolve(name)
                if person is not None:
                    p.vocatives.append(person)
            introduced = _INTRODUCTION.search(span.text)
            if introduced is not None and p.introduces is None:
                p.introduces = cast.resolve(introduced.group(1))
    for question, p in pairwise(paragraphs):
        # A name alone, answering "May I know your name?" or "Who are you?": '"Mrs. Moore."'
        if p.introduces is None and p.spans and question.spans and question.chapter == p.chapter:
            alone = p.spans[0].text.strip(" .!,;:—–-")
            if alone in cast.by_form and _ASKS_NAME.search(question.spans[-1].text):
                p.introduces = cast.by_form[alone]


# How many paragraphs either side of a tag make its company, how often a description must
# tag speech to be judged, and how consistently one person must keep it company.
_COMPANY = 4
_DESCRIBED_MIN = 3
_COMPANY_SHARE = 0.45
_COMPANY_LIFT = 2.0


# Descriptions of the young, and the titles of grown-ups.
_YOUNG = frozenset({"girl", "boy", "lad", "child"})
_GROWN = frozenset({"mrs", "mrs.", "mr", "mr.", "lady", "sir", "madame", "monsieur"})


def _grown(forms: Counter[str]) -> bool:
    """Whether most of a person's mentions give them a grown-up's title ("Mrs. Moore")."""
    titled = sum(n for form, n in forms.items() if form.split()[0].lower() in _GROWN)
    return titled * 2 > sum(forms.values())


def descriptions(paragraphs: list[Paragraph], cast: Cast) -> dict[str, int]:
    """Descriptions that stand for one named person throughout the book ("the doctor" for Mr.
    Losberne, "the old gentleman" for Mr. Brownlow): the person named around most of the
    description's tags, far more often than around speech in general. The one it talks
    to (the speaker of the turn next to it, or a description of them) is not it."""
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
        # "the doctor", not "a voice" (anyone), "his father" (whose father depends on "his")
        # or "the other man"; nor one set apart as no named person is ("the gentleman in
        # the white waistcoat").
        if (
            p.tag.kind == "noun"
            and words[0] == "the"
            and not set(words) & _RELATIVE
            and not set(words[1:]) & SETTING_APART
        ):
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
        chapters: dict[int, set[int]] = {}  # person → the chapters they keep it company in
        for at in ats:
            # Nor the one it calls by name: '"Toby," said the boy'.
            near = company(at) - {own} - set(paragraphs[at].vocatives)
            seen.update(near)
            for person in near:
                chapters.setdefault(person, set()).add(paragraphs[at].chapter)
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
            # Throughout the book: the jailer of one trial, named beside a boy spoken of
            # there, and the jailer of another chapter are no one the book names.
            if len(chapters[person]) < 2:
                continue
            if gender is not None and cast.people[person].gender != gender:
                continue
            if description.split()[-1] in _YOUNG and _grown(cast.people[person].forms):
                continue  # "the girl" is no Mrs. Moore
            best = person
            break
        if best is not None:
            found[description] = best
    return _apart(found, uses, paragraphs)


def _apart(
    found: dict[str, int], uses: dict[str, list[int]], paragraphs: list[Paragraph]
) -> dict[str, int]:
    """Two descriptions given one person that tag turns next to each other are two people
    talking ("the croupier" answering "the old lady"): the one used more keeps the person."""
    kept = dict(found)
    for first, second in combinations(sorted(found, key=lambda d: -len(uses[d])), 2):
        if found[first] != found[second] or first not in kept:
            continue
        steps = (-2, -1, 1, 2)
        near = {(paragraphs[at].chapter, at + step) for at in uses[first] for step in steps}
        if any((paragraphs[at].chapter, at) in near for at in uses[second]):
            kept.pop(second, None)
    return kept


# A description tag holding one of these is a misread clause, not someone: "the crisis she
# had", "a moment's pause he".
_NOT_DESCRIBING = frozenset(
    "he she it they i we you had was were is has moment moments time pause while".split()
)
# Nor one that is only how much ("she said a little", "said a few").
_HOW_MUCH = frozenset("little few bit lot trifle".split())


def _described_key(tag_name: str) -> str | None:
    """A description tag's words after its article ("the little girl" and "a little girl" are
    one key), where it could be someone of their own: not "his mother" (whose depends on
    "his"), nor "the other" or "a voice"."""
    words = tag_name.split()
    if len(words) < 2 or words[0] not in ("the", "a", "an"):
        return None
    rest = [w.strip("'’") for w in words[1:]]
    if set(rest) & (_NOT_SOMEONE | _NOT_DESCRIBING) or any(w.endswith("'s") for w in rest):
        return None
    if len(rest) == 1 and rest[0] in _HOW_MUCH:
        return None
    return " ".join(rest)


# Words for anyone of a gender, not for what they do.
_ANYONE = frozenset("man woman gentleman gentlewoman nobleman noblewoman".split())


def _gendered_role(key: str) -> bool:
    """Whether a description with a gender says what its person does ("maid", "nurse",
    "policeman"), not only who they are ("the man", "the lady")."""
    head = key.split()[-1]
    if head in _ANYONE:
        return False
    return names_a_role(head) or (head.endswith(("man", "woman")) and len(head) > 5)


def described(paragraphs: list[Paragraph], cast: Cast) -> None:
    """Each description a tag gives speech to that is no name form of the cast ("said the
    driver", "asked a stout porter") becomes a person of its own, and `cast.described` maps
    each tag that says it to them ("a stout porter" and "the stout porter" are one): one the
    ranker may choose over the people named around, when the book never names who speaks.
    It gets no lines unless chosen. Not one whose noun shows a gender, unless it says what
    they do ("the maid", "the policeman") or a tag brings them in as someone new (below):
    "the man" or "the girl" is most often someone named
    (left out, on the 22 novels of `scripts/train_speakers.py`, those cost 1.9 points of
    the quotations a description tags; later, with a feature of their own for the ranker to
    weigh them by, one scorer scored 0.836 of all quotations against 0.843 without them)."""
    tags: dict[str, list[tuple[int, str]]] = {}  # key → (chapter, tag) per use
    for p in paragraphs:
        if p.tag.kind != "noun" or not p.tag.name or p.tag.name in cast.by_form:
            continue
        key = _described_key(p.tag.name)
        if key is not None:
            tags.setdefault(key, []).append((p.chapter, p.tag.name))
    # But one a tag brings in as someone new, set apart by what it says of them ("said a
    # little ugly hump-backed man", "asked a grinning countryman"; not "a man"), is someone
    # of their own whatever the noun, and so is what later tags call them by its last words
    # ("the hump-backed man"), where those are all in its chapters: another chapter's "old
    # man" is anyone's.
    new = {
        key: {chapter for chapter, tag in said if tag.split()[0] in ("a", "an")}
        for key, said in tags.items()
        if len(key.split()) > 1
    }
    new = {key: chapters for key, chapters in new.items() if chapters}
    for key in [k for k in tags if k not in new and len(k.split()) > 1]:
        longer = [other for other in new if other.endswith(f" {key}")]
        if len(longer) != 1:
            continue
        if all(chapter in new[longer[0]] for chapter, _ in tags[key]):
            tags[longer[0]] += tags.pop(key)
    for key, uses in tags.items():
        gender = noun_gender(key)
        if gender is not None and key not in new and not _gendered_role(key):
            continue
        said = [tag for _, tag in uses]
        name = f"the {key}"  # "a stout porter" is then "the stout porter"
        for tag in said:
            cast.described[tag] = len(cast.people)
        # Its names are the tags as written ("a stout porter" among them), once per use.
        cast.people.append(Person(name, Counter(said), gender))
