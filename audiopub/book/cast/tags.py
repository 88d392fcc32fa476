"""Speech tags: the narration beside a quotation that says who speaks ("said Holmes", "she
asked", "the doctor cried", "dit-il", "dijo Juan", "sagte er").

A tag is a speech verb with its subject next to it, either way round. The subject is a
pronoun, a name (with its title: "Mrs. Carew", "Señora Ruiz"), or a noun phrase ("the
doctor", "my companion"). Each language is a table: its speech verbs, its pronouns with their
genders and its articles; adding a language is adding a row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from audiopub.book.cast.models import Gender

__all__ = [
    "SETTING_APART",
    "Language",
    "Tag",
    "find_tag",
    "incise_at",
    "is_english",
    "language_table",
    "names_a_role",
]

SubjectKind = Literal["name", "pronoun", "first_person", "noun"]


@dataclass(frozen=True)
class Language:
    verbs: frozenset[str]  # lower case; several words allowed ("went on")
    pronouns: dict[str, Gender | None]  # third person, with gender where it has one
    first_person: frozenset[str]
    articles: frozenset[str]  # what starts a noun-phrase subject ("the doctor")
    adverb_suffix: str  # "quietly" in "he said quietly" / "he quietly said"
    # Name particles that stay lower case inside a name ("de", "van").
    particles: frozenset[str] = frozenset()
    # Any verb of the past tense: right after a quotation, "…," flashed Helen / "…," Mike
    # objected is a tag whatever the verb (inversion after speech is a tag's word order).
    past: str = "(?!)"


_EN_VERBS = """said says say asked asks cried cries answered answers replied replies remarked
remarks observed observes exclaimed exclaims shouted shouts whispered whispers muttered mutters
continued continues added adds returned returns began begins repeated repeats murmured murmurs
called calls yelled yells screamed screams growled growls snapped snaps sighed laughed
chuckled grumbled roared interrupted interposed demanded inquired enquired suggested
explained protested insisted declared responded retorted gasped sobbed groaned stammered
stammers ejaculated broke_in went_on put_in struck_in cut_in spoke murmured pleaded urged
whimpered wailed shrieked hissed breathed blurted agreed admitted answered thundered bellowed
squeaked panted sang sings quoth cries cry shouted said_he thought thinks resumed rejoined
pursued persisted remonstrated sneered entreated implored begged assented assured prompted
opined objected reassured intervened commented faltered ventured warned ordered commanded mused
reflected concluded conceded confessed hinted chimed_in joined_in broke_out cried_out called_out
argued corrected announced counselled counseled stormed hazarded volunteered croaked drawled
lisped simpered retorted observed asserted affirmed acknowledged apologised apologized
explained smiled grinned laughed_out echoed burst_out broke_off spoke_up kept_saying
was_saying questioned queried""".split()

_FR_VERBS = """dit dis dit-il répondit répond demanda demande s'écria écria cria crie reprit
reprend ajouta ajoute murmura murmure répliqua réplique fit fait continua continue poursuivit
poursuit interrompit hurla chuchota soupira observa remarqua déclara expliqua insista
protesta objecta lança souffla gémit balbutia bégaya rétorqua conclut affirma questionna
s'exclama exclama""".split()

_ES_VERBS = """dijo dice digo respondió responde preguntó pregunta exclamó exclama gritó grita
contestó contesta añadió añade murmuró murmura repuso replicó replica continuó prosiguió
interrumpió susurró suspiró explicó insistió declaró observó afirmó agregó balbuceó gimió
concluyó comentó""".split()

_DE_VERBS = """sagte sagt fragte fragt antwortete antwortet rief ruft erwiderte erwidert meinte
meint flüsterte flüstert murmelte murmelt entgegnete entgegnet schrie schreit fuhr_fort
seufzte erklärte bemerkte versetzte stammelte brüllte flehte fügte_hinzu""".split()


def _words(verbs: list[str]) -> frozenset[str]:
    return frozenset(v.replace("_", " ") for v in verbs)


LANGUAGES: dict[str, Language] = {
    "en": Language(
        _words(_EN_VERBS),
        {"he": "male", "she": "female", "they": None},
        frozenset({"i", "we"}),
        frozenset({"the", "my", "our", "his", "her", "their", "your", "a", "an", "this", "that"}),
        "ly",
        frozenset({"de", "van", "von", "der", "du", "le", "la", "st."}),
        r"[a-z]{2,}ed",
    ),
    "fr": Language(
        _words(_FR_VERBS),
        {"il": "male", "elle": "female", "ils": None, "elles": None, "on": None},
        frozenset({"je", "nous"}),
        frozenset({"le", "la", "l'", "les", "un", "une", "son", "sa", "mon", "ma", "notre"}),
        "ment",
        frozenset({"de", "du", "des", "d'", "la", "le"}),
    ),
    "es": Language(
        _words(_ES_VERBS),
        {"él": "male", "ella": "female", "ellos": None, "ellas": None},
        frozenset({"yo", "nosotros"}),
        frozenset({"el", "la", "los", "las", "un", "una", "su", "mi", "nuestro"}),
        "mente",
        frozenset({"de", "del", "la", "y"}),
    ),
    "de": Language(
        _words(_DE_VERBS),
        {"er": "male", "sie": "female"},
        frozenset({"ich", "wir"}),
        frozenset({"der", "die", "das", "ein", "eine", "sein", "seine", "ihr", "ihre", "mein"}),
        "lich",
        frozenset({"von", "van", "zu", "der"}),
    ),
}

# Titles before a name, with the gender they show (None: either).
TITLES: dict[str, Gender | None] = {
    "mr": "male", "mr.": "male", "mister": "male", "sir": "male", "lord": "male",
    "master": "male", "herr": "male", "monsieur": "male", "m.": "male", "señor": "male",
    "don": "male", "father": "male", "uncle": "male", "brother": "male", "king": "male",
    "prince": "male", "count": "male", "baron": "male", "colonel": "male", "col.": "male",
    "captain": "male", "capt.": "male", "general": "male", "major": "male", "inspector": None,
    "admiral": "male", "lieutenant": "male", "sergeant": "male", "duke": "male",
    "marquis": "male", "earl": "male", "duchess": "female",
    "dr.": None, "dr": None, "doctor": None, "professor": None, "prof.": None, "rev.": "male",
    "mrs": "female", "mrs.": "female", "miss": "female", "ms.": "female", "ms": "female",
    "lady": "female", "madam": "female", "madame": "female", "mme": "female",
    "mme.": "female", "mademoiselle": "female", "mlle": "female", "mlle.": "female",
    "frau": "female", "fräulein": "female", "señora": "female", "señorita": "female",
    "doña": "female", "aunt": "female", "begum": "female",
    # Where the book drops the accents, and in Italian.
    "senor": "male", "signor": "male", "signore": "male", "fraulein": "female",
    "senora": "female", "senorita": "female", "signora": "female", "signorina": "female",
    "sister": "female", "mother": "female",
    "queen": "female", "princess": "female", "countess": "female",
    # As dialogue in dialect writes them: "Mistah Frank", "Mis' Hamilton".
    "mistah": "male", "marse": "male", "massa": "male", "mis'": "female", "mis’": "female",
}  # fmt: skip


def _base_language(language: str | None) -> str:
    """A language tag's language, English where there is none ("en-GB", "en_GB": "en")."""
    return (language or "en").split("-")[0].split("_")[0].lower()


def is_english(language: str | None) -> bool:
    """Whether a book's language tag is English, or it has none ("en-GB", None)."""
    return _base_language(language) == "en"


def language_table(language: str | None) -> Language:
    """The table for a language tag ("en-GB" → English); English when unknown."""
    return LANGUAGES.get(_base_language(language), LANGUAGES["en"])


@dataclass(frozen=True)
class Tag:
    """A speech tag: who it names, what kind of subject, and where the subject stands."""

    subject: str  # as written: "Mrs. Carew", "he", "the doctor"
    kind: SubjectKind
    gender: Gender | None = None  # a pronoun's
    start: int = 0  # the subject's span in the text searched
    end: int = 0


# A capitalised word, or an initial ("J."); a full stop after a whole word ends the sentence.
_NAME_WORD = r"(?:St\.|[A-ZÀ-ÖØ-Þ]\.|[A-ZÀ-ÖØ-Þ][\w'’-]*)"


_APPOSITION = re.compile(r"[\w'’ -]{0,20}?,\s+(?:the\s+)?((?:[A-Z][\w'’-]*\s?){1,3})(?=[,.;!?]|$)")


# Capitalised words that open a clause but name no one: "Then she turned and said".
_CLAUSE_OPENERS = (
    r"(?:Then|When|But|And|So|As|While|After|Before|Now|Here|There|This|That|It|At|In|On|If"
    r"|Yet|Still|Presently|Suddenly|Meanwhile|Afterwards|To|For|With|From|By|Of|Upon|Into"
    r"|Without|Like|Once|Again|Perhaps|Indeed|Instead|Finally|These|Those|Thus|Hence|However"
    r"|Whereupon)"
)

_OPENER = re.compile(_CLAUSE_OPENERS + r"\b")

# Titles written short, whose full stop ends no sentence or clause ("Mrs. Musgrove", "Dr. Grant").
ABBREVIATED_TITLES = ("Mr", "Mrs", "Ms", "Dr", "St", "Col", "Mme", "Rev", "Capt", "Mlle", "Prof")


def after_title(then: str = "", *, negated: bool = False) -> str:
    """A pattern for the place just after an abbreviated title and `then` (fixed width: "\\."),
    or with `negated`, for a place not there. One lookbehind per length of title, as a
    lookbehind must have one width."""
    lengths = sorted({len(title) for title in ABBREVIATED_TITLES})
    groups = ["|".join(title for title in ABBREVIATED_TITLES if len(title) == n) for n in lengths]
    if negated:
        return "".join(rf"(?<!\b(?:{group}){then})" for group in groups)
    return "(?:" + "|".join(rf"(?<=\b(?:{group}){then})" for group in groups) + ")"


# The possessive ending: "Margaret's", "Thomas'", and "Margaret s", where a text lost the
# apostrophe to a space.
POSSESSIVE = r"(?:['’]s?|\ss)"
# A person a name owns: "Daisy's mamma", "Margaret s young brother".
_OWNED = re.compile(rf"{POSSESSIVE}(\s+(?:[a-z][\w-]*\s+)?[a-z][\w-]*)\b")

# What follows a description and sets its bearer apart: "the gentleman in the white
# waistcoat", "the reader of the paper", "the man with the beard"; not how they speak ("in a
# low voice", "with the utmost gravity").
SETTING_APART = frozenset({"in", "of", "with"})
_POST_MODIFIER = re.compile(
    rf"\s+(?:{'|'.join(sorted(SETTING_APART))})\s+(?:the|a|an)\s+"
    r"((?:[a-z][\w-]*\s+){0,2}[A-Za-z][\w'’-]*)(?=\s*[,.;:!?])"
)
_MANNER = re.compile(
    r"(?:voice|voices|tone|tones|whisper|manner|way|breath|accent|undertone|hurry|rage|fury"
    r"|passion|surprise|air|look|laugh|smile|sigh|sort|kind|moment|minute|instant|time|turn"
    r"|chorus|fashion|style|low|loud|glance|nod|shrug|gesture|grin|frown|sob|start|groan"
    r"|[a-z]+(?:ness|ity|ment|ion|ance|ence|ure|ly|ing))$"
)

# Words that begin or end how someone speaks, never end who they are: a word of degree
# ("very", "rather", "enough"), and "again", "still", "not", "now", "aloud", "once".
_DEGREE = (
    "very|rather|quite|too|so|most|more|less|somewhat|almost|enough|still|again|not|never|now"
    "|aloud|once"
)

# Words ending in -ly that describe a person, not how they speak: "said a little ugly man".
_LY_ADJECTIVES = (
    "ugly|elderly|surly|burly|portly|stately|comely|homely|lovely|lonely|friendly"
    "|sickly|holy|silly|curly|manly|womanly|lively|ghostly|gentlemanly|worldly"
    "|motherly|fatherly|scholarly|unruly|unlovely|unfriendly|unsightly|saintly|grisly"
    "|wily|beastly|ungainly|courtly|sprightly|shapely|spindly|wobbly|gangly|smelly|chilly"
    "|lubberly|slovenly|cowardly|miserly"
)

_DEFINITE = ("the", "le", "la", "el", "der", "die", "das")
# Words that describe someone before their name without an article: "said poor Oliver".
_DESCRIBING = ("old", "young", "little", "poor", "good", "dear", "big")
# A capitalised word that still describes: "American", "Chinese", "Englishman".
_DEMONYM = re.compile(r"(?:an|ese|ish|man)$")

# Speaking as a purpose or a participle ends a clause that opened with its speaker (English).
_TO_SAY = "say|ask|answer|reply|inquire|enquire|exclaim|add|remark|observe|whisper|murmur"
_SAYING = "saying|asking|adding|answering|replying|exclaiming|murmuring|whispering|remarking"

# The nouns of a tag that names its speaker by possession: '"…" was Fanny's humble answer'.
_SAYINGS = (
    "answer|reply|retort|rejoinder|response|question|remark|comment|exclamation|cry|greeting"
    "|observation|inquiry|enquiry|protest|explanation|voice|assurance|reasoning|language|words"
    "|speech|salutation|apology|request|entreaty|suggestion|advice|declaration|ejaculation"
    "|whisper|reflection|conclusion|confession|sentiment|opinion|contribution"
)


# What is said, as the object of a verb of saying that looks like a tag ('She raised herself
# and repeated the sentence', 'answered the question'): no speaker.
_WORDS_SAID = re.compile(
    r"(?:the|a|an|this|that|these|those|his|her|their)\s+(?:[a-z-]+\s+)?"
    r"(?:sentence|sentences|phrase|phrases|word|words|question|questions|remark|remarks"
    r"|letter|note|name|speech|story)"
)


# Whose voice "his voice" or "her voice" is, and what else of theirs may act for them.
_OWNER_GENDERS: dict[str, Gender] = {"his": "male", "her": "female"}
_PARTS = frozenset("voice tones hand hands eyes face lips head".split())


# What may follow a tag before the quotation it opens: a few words ("said to Ronny:"), or
# how it is said ("said, with the absolute simplicity of a child").
_TAG_REST = re.compile(
    r"[^.!?\"]{0,40}(?:[,:]|\.\.\.)?\s*|,?\s+(?:with|in|without)\s+[^.!?\"]{0,60}[,:]?\s*"
)
_CLAUSE_JOIN = re.compile(r"\b(?:and|but|while|whilst|whereupon)\s+$")
# A clause about the name before it, with "who" ("broken by Willoughby, who said"), not "whose".
_WHO = re.compile(r",\s+who\b")
# A name after a preposition is no subject ("a policeman on the Embankment spoke to him")
# unless a clause makes it one ("broken by Willoughby, who said").
_AFTER_PREPOSITION = re.compile(
    r"\b(?:on|in|at|of|to|from|by|into|upon|with|for|near|towards?)\s+(?:the\s+)?$"
)


@dataclass(frozen=True)
class _Patterns:
    inverted: re.Pattern[str]
    direct: re.Pattern[str]
    inverted_any: re.Pattern[str]
    direct_any: re.Pattern[str]
    # Before a quotation: 'Margaret checked herself and said,', 'Katharine, with flushed
    # cheeks, raised her head and said:' (the subject opens its clause).
    coordinated: re.Pattern[str]
    # '"…" was Lady Bertram's placid reply', '… was all that Fanny attempted to say',
    # '… broke explosively from Janey': after a quotation only.
    possessive: re.Pattern[str]
    # 'Cassandra s reply, "…"', 'in reply to Lady Bertram's calm inquiry of "…"': before one.
    owned_before: re.Pattern[str]
    # 'it was broken by Thorpe s saying very abruptly, "…"': before one, where no tag is.
    speaking_by: re.Pattern[str]
    # "in the clear voice of Mr. Wilcox": who a voice belongs to.
    voice_of: re.Pattern[str]
    table: Language


@lru_cache(maxsize=8)
def _patterns(language: str | None) -> _Patterns:
    table = language_table(language)
    verbs = "|".join(sorted((re.escape(v) for v in table.verbs), key=len, reverse=True))
    # A title written short takes a full stop ("Mr.", "M."); after a whole word one ends the
    # sentence: 'answered Mademoiselle. The two had seated themselves' names no "The".
    short = {t.rstrip(".") for t in TITLES if t.endswith(".")}
    titles = "|".join(
        [rf"{re.escape(t)}\.?" for t in sorted(short, key=len, reverse=True)]
        + [re.escape(t) for t in sorted(set(TITLES) - short, key=len, reverse=True)]
    )
    particles = "|".join(re.escape(p) for p in table.particles) or "(?!)"
    # After a title a name may open with its particles: "Mr. van der Luyden".
    title = rf"(?:(?i:(?:{titles}))\s+(?:(?:{particles})\s+){{0,2}})?"
    name = rf"{title}{_NAME_WORD}(?:\s+(?:(?:{particles})\s+){{0,2}}{_NAME_WORD}){{0,3}}"
    pronouns = "|".join(re.escape(p) for p in [*table.pronouns, *table.first_person])
    articles = "|".join(re.escape(a) for a in table.articles)
    # A description: its article and up to three words, none of them a conjunction ("his
    # wild foot and said" is no speaker), a preposition, an adverb or a participle: all of
    # "the old gentleman", none of "in a low voice" or "smiling".
    joining = (
        "and|or|but|then|in|with|at|to|of|as|by|who|from|for|on|upon|after|when|while|that|which"
        "|was|were|is|are|had|has|have"
        "|et|y|und"
    )
    # Adverbs and participles end in -ly or -ing ("dining-car" and "pleasure-loving" describe).
    adverbial = rf"(?!(?:{_LY_ADJECTIVES})\b)[\w'’]+(?:ly|ing)(?![\w'’-])"
    word = rf"(?!(?:{joining}|{articles})\b)(?!{adverbial})[\w'’-]+"
    # A capitalised word ends a description: in "After a short pause Sir Thomas added" the
    # speaker is Sir Thomas. A word of degree never does: it opens how they speak ("said the
    # policeman very sincerely", "said the doctor again"), though it may describe them ("the
    # very old man").
    # A participle right after the article describes too: "asked a grinning countryman".
    participle = r"(?:[a-z]+ing\s+)?"
    noun = (
        rf"(?:{articles})\s+{participle}(?:(?-i:(?![A-ZÀ-ÖØ-Þ])){word}\s+){{0,3}}"
        rf"(?!(?:{_DEGREE})\b){word}"
    )
    definite = "|".join(re.escape(a) for a in _DEFINITE)
    # A name after words that describe its bearer: "the gentle Mrs. Thorpe", "old Horace
    # Talbot" (lower case: "the young man" is a description).
    describing = "|".join(_DESCRIBING)
    described = (
        rf"(?:(?i:{definite})\s+(?:(?![A-Z]){word}\s+){{1,3}}|(?:{describing})\s+)"
        rf"(?!(?:{pronouns})\b)(?=[A-ZÀ-ÖØ-Þ]){name}"
    )
    subject = (
        rf"(?<![\w'’])(?P<subject>(?i:{pronouns})\b|{name}|(?i:{definite})\s+{name}"
        rf"|{described}|(?i:{noun}))"
    )
    adverb = rf"(?:\w+{table.adverb_suffix}\s+)?"
    # Between a subject and its verb, a clause about them: "Mr. Wilcox, who was in front,
    # said", "Miss Steele, who seemed disposed for conversation, and who now said".
    # Or a participle or a phrase: "Edmund, looking around, said", "Mary, after a pause,
    # said"; or "who" alone: "broken by Willoughby, who said".
    # Up to three of them: "Miss Crawford, looking … at Mrs. Norris, and then at Fanny, whose
    # tears were beginning to shew themselves, immediately said". A title's full stop ends
    # none ("Miss Crawford, who had been eyeing Dr. Grant and Edmund, now observed").
    clause = rf"(?:[^,.!?\"“”]|{after_title()}\.){{0,70}}"
    aside = (
        r"(?:(?:,\s+(?:(?:who|whose|the|a|an|his|her|my|with|in|after|at|for|without|when"
        r"|while|as|though|on|before|and\s+then)\b"
        rf"|[a-z]+(?:ing|ed)\b){clause}|,\s+[a-z]+(?:\s+[a-z]+){{0,2}}){{1,3}},"
        # Or "who" and a clause of lower-case words up to the verb: 'Isabella, who in a
        # voice of cold resentment said,'.
        r"(?:\s+and\s+who)?|,\s+who(?:\s+[a-z][\w'’-]*){0,8}?(?=\s))?"
        r"(?:\s+(?:now|then|at last|at length|presently|only|also|still|again|had))?"
    )
    # Words describing a name that follows the verb: "said dour Major Callendar", "sighed
    # pleasure-loving Miss Derek".
    lower = rf"(?!(?:{pronouns}|{articles}|{joining})\b)(?!{adverbial})[a-z][\w'’-]*"
    epithet = rf"(?:(?:{lower}\s+){{1,2}}(?=[A-ZÀ-ÖØ-Þ]))?"
    # "said Holmes", "said he", "dit-il", "répondit le docteur"
    inverted = re.compile(rf"(?i:(?P<verb>{verbs}))(?:-t)?(?:\s+|-){adverb}{epithet}{subject}")
    # "Holmes said", "she asked", "the doctor cried", "I observed"
    direct = re.compile(rf"{subject}{aside}\s+{adverb}(?i:(?P<verb>{verbs}))\b")
    # Right after a quotation any past-tense verb makes a tag: '"…" flashed Helen', and
    # '"…" Mike objected.' where the verb ends the clause or an adverb or phrase follows.
    any_verb = rf"(?P<verb>(?i:{verbs})|{table.past})"
    inverted_any = re.compile(rf"{any_verb}(?:\s+|-){adverb}{epithet}{subject}")
    # The verb may take an object or "again" first: '"…" Cassandra asked him, not from…',
    # '"…" Mrs. Archer sighed again.', '"…" I asked Bill and Robert.', '"…" Mike told her.'
    direct_any = re.compile(
        rf"{subject}{aside}\s+{adverb}(?:{any_verb}|told|bade)"
        r"(?:\s+(?:him|her|them|me|us|himself|herself|themselves|myself|again|aloud|back|up"
        r"|out|off|down|on|forth"
        # What is said: '"…" Aziz repeated the order'.
        r"|(?:the|his|her|this|that)\s+(?:question|questions|words?|order|remark|phrase|name)"
        rf"|{name}(?:\s+and\s+{name})?))?"
        # How it is said may follow, with a word of degree first: "Alice replied very politely".
        # Or an aside in brackets: '"…," Mr. Jackson continued (and Archer saw …), "…"'.
        r"(?=\s*[,.;:!?—–(-]|\s+(?:in|to|with|at|as|by|from|for|after|without|over|across"
        r"|through|behind|towards?|upon|\w+ly"
        r"|(?:very|rather|quite|too|so|most|somewhat|half)\s+\w+ly)\b)"
    )
    possessive = re.compile(
        # "Margaret s": an apostrophe some texts lose to a space.
        rf"(?:was|came)\s+(?:(?P<owner>{name}|{noun}){POSSESSIVE}\s+(?:[\w-]+\s+){{0,2}}"
        rf"(?:{_SAYINGS})\b"
        rf"|all\s+(?:that\s+)?(?P<sayer>{name})\s+(?:\w+\s+){{0,3}}?(?:say|said|answer)\b)"
        # '"…" from Mr. Wilcox, who thought the episode amusing'
        rf"|(?:(?:broke|burst|came)\s+(?:\w+\s+){{0,2}}?)?from\s+(?P<from>(?:the\s+)?{name})"
        # '"…" he heard Katharine say.'
        rf"|(?:[\w.]+\s+){{1,3}}?heard\s+(?P<heard>{name})\s+"
        r"(?:say|ask|answer|reply|exclaim|cry|call|mutter|murmur|whisper|add)\b"
    )
    # The owner opens a clause or follows "to", "of": not a verb ("echoed Miss Tilney s
    # concluding words" are someone else's).
    owned_before = re.compile(
        # Not the full stop of a title: "Mrs. Inglethorp's rose in reply" is Mrs. Inglethorp.
        r"(?:^|(?<=[.;:!?,]\s)"
        + after_title(r"\.\s", negated=True)
        + r"|(?<=\b(?:and|but)\s)|(?<=\bthen\s)|(?<=\b(?:to|of)\s))"
        rf"(?P<subject>{name}){POSSESSIVE}\s+(?:[\w-]+\s+){{0,2}}(?:{_SAYINGS})"
        r"(?:\s+(?:was|of))?[,:]?\s*$"
    )
    # 'broken by Thorpe's saying very abruptly, "…"': the speaking the quotation is, owned by
    # the agent of the clause ("by", "with"); how it was said may follow, not a full stop.
    speaking_by = re.compile(
        rf"(?:(?<=\bby\s)|(?<=\bwith\s))(?P<subject>{name}){POSSESSIVE}\s+(?:{_SAYING})\b"
        r"[^.!?\"“”]{0,60}$"
    )
    voice_of = re.compile(rf"\s+of\s+(?P<name>{name})")
    opens = "|".join(
        rf"(?<=\b{w}\s)"
        for word in ("and", "but", "then", "when", "while", "so", "that", "which")
        for w in (word, word.capitalize())
    )
    not_after_title = after_title(r"\.\s", negated=True)
    coordinated = re.compile(
        rf"(?:^|(?<=[.!?;:,]\s){not_after_title}|(?<=[.!?;:]\s\s)|{opens})"
        rf"(?!{_CLAUSE_OPENERS}\b){subject}{aside}"
        rf"(?:\s+(?=[a-z])(?!(?:and|but|{pronouns})\b)[\w'’-]+,?){{1,10}}"
        rf"(?:\s+(?:and|but)\s+(?:then\s+)?{adverb}(?i:(?P<verb>{verbs}))"
        # '… raised a troubled brow from her needlework to ask:', '… turned away, saying'
        rf"|\s+to\s+(?:{_TO_SAY})|,?\s+(?:and\s+)?(?:{_SAYING}))\b"
    )
    return _Patterns(
        inverted,
        direct,
        inverted_any,
        direct_any,
        coordinated,
        possessive,
        owned_before,
        speaking_by,
        voice_of,
        table,
    )


# Nouns that show a gender when a tag says "the woman cried" or "said the old gentleman".
NOUN_GENDERS: dict[str, Gender] = {
    **dict.fromkeys(
        "woman lady girl mother wife sister aunt daughter widow maid queen princess "
        "governess mistress nurse mamma niece femme dame fille mère señora mujer niña madre frau "
        "mädchen mutter".split(),
        "female",
    ),
    **dict.fromkeys(
        "man gentleman boy father husband brother uncle son nephew papa king prince fellow lad "
        "homme garçon père monsieur hombre señor niño padre herr mann junge vater".split(),
        "male",
    ),
}


# Words for people by what they do: a description of a thing ("The door opened", "the
# announcement") is no one to speak.
_ROLES = frozenset(
    "clerk surgeon physician doctor nurse judge cook maid servant guard lawyer butler landlord"
    " porter waiter driver officer detective priest soldier sailor constable footman messenger"
    " attendant magistrate editor visitor inspector professor proprietor conductor actor"
    " author tutor governor jailer jailor courier painter subaltern guide witness pauper"
    " tinker chauffeur beadle matron valet apprentice deputy secretary warder turnkey sexton"
    " vicar curate rector barber tailor grocer butcher baker carpenter gardener labourer"
    " laborer farmer peasant shepherd sentry sentinel traveller traveler stranger passenger"
    " prisoner lieutenant sergeant corporal usher spectator bystander neighbour neighbor".split()
)
_ROLE_SUFFIX = re.compile(r"(?<=[a-z]{3})(?:ist|ian)$|(?:master|keeper|maker|smith)$")


def names_a_role(word: str) -> bool:
    """Whether a noun is a word for someone by what they do ("the driver", "the violinist",
    "the book-stall keeper"), not for a thing."""
    word = word.lower()
    return word in _ROLES or bool(_ROLE_SUFFIX.search(word))


def noun_gender(phrase: str) -> Gender | None:
    """The gender a noun phrase's head shows ("the old gentleman" → male); nouns ending in
    "-man" are men ("the artilleryman")."""
    words = phrase.lower().split()
    if not words:
        return None
    head = words[-1]
    if head in NOUN_GENDERS:
        return NOUN_GENDERS[head]
    if head in TITLES and len(words) > 1:  # "the general", "the countess"
        return TITLES[head]
    if head.endswith("woman"):
        return "female"
    if head.endswith("man") and len(head) > 4:
        return "male"
    return None


def _classify(subject: str, table: Language) -> tuple[str, SubjectKind, Gender | None]:
    low = subject.lower()
    if low in table.first_person:
        return subject, "first_person", None
    if low in table.pronouns:
        return subject, "pronoun", table.pronouns[low]
    words = subject.split()
    first = words[0].lower()
    # "the gentle Mrs. Thorpe", "poor Oliver": the name the describing words lead to.
    lead = next((i for i, w in enumerate(words) if w[:1].isupper()), len(words))
    # Not "the count. He", "her moods Helen had", nor "the young American" (a description
    # with a capital).
    name = words[lead:]
    described = (
        all(w.replace("-", "").isalpha() for w in words[1:lead])
        and all(w[:1].isupper() for w in name)
        and not (len(name) == 1 and _DEMONYM.search(name[0]))
    )
    if (
        0 < lead < len(words)
        and described
        and words[lead].lower() not in (*table.pronouns, *table.first_person)
        and (first in _DEFINITE or first in _DESCRIBING)
    ):
        return " ".join(words[lead:]), "name", None
    if first in table.articles or first.rstrip("'’") in table.articles:
        rest = words[1:]
        # "the Elephant's Child", "the Crocodile": a capitalised noun is a name.
        if rest and all(w[:1].isupper() for w in rest) and first in {"the", "le", "la", "el"}:
            return " ".join(rest), "name", None
        return subject, "noun", noun_gender(subject)
    return subject, "name", None


def find_tag(
    text: str, language: str | None, where: Literal["after", "before"] = "after"
) -> Tag | None:
    """The speech tag in narration next to a quotation. `after`: the narration that follows
    one (the tag comes first in it: ', said Holmes, rising'); `before`: the narration before
    one (the tag ends it: 'Holmes said, ' or 'He turned to me and asked:')."""
    patterns = _patterns(language)
    inverted, direct, table = patterns.inverted, patterns.direct, patterns.table
    if where == "after":
        head = text[:80]
        stripped = head.lstrip(" ,;:-—–")
        owned = patterns.possessive.match(stripped)
        if owned is not None:
            group = next(g for g in ("owner", "sayer", "from", "heard") if owned.group(g))
            start = len(head) - len(stripped) + owned.start(group)
            # '"…" was his mother's only reply': the owner may be a description.
            subject, kind, gender = _classify(owned.group(group), table)
            return Tag(subject, kind, gender, start, start + len(owned.group(group)))
        candidates = []
        for pattern in (patterns.inverted_any, patterns.direct_any):
            match = pattern.match(head.lstrip(" ,;:-—–"), 0)
            if match is not None:
                candidates.append((match, len(head) - len(head.lstrip(" ,;:-—–"))))
        if not candidates:
            return None
        match, offset = min(candidates, key=lambda c: c[0].end())
    else:
        tail = text[-240:]  # room for clauses between subject and verb
        offset = len(text) - len(tail)
        owned = patterns.owned_before.search(tail)
        if owned is not None:
            owner, start = owned.group("subject"), offset + owned.start("subject")
            return Tag(owner, "name", None, start, start + len(owner))
        match = None
        for pattern in (direct, inverted, patterns.coordinated):
            for found in pattern.finditer(tail):
                rest = tail[found.end() :]
                # The first tag of the sentence that runs into the quotation: in "Bird
                # said, with a mournful cry," the cry is no second speaker.
                if (
                    _TAG_REST.fullmatch(rest)
                    and (
                        not _AFTER_PREPOSITION.search(tail, 0, found.start("subject"))
                        or _WHO.match(tail, found.end("subject"))
                    )
                    and (match is None or found.start() < match.start())
                ):
                    match = found
        if match is None:
            speaking = patterns.speaking_by.search(tail)
            if speaking is None:
                return None
            owner, start = speaking.group("subject"), offset + speaking.start("subject")
            return Tag(owner, "name", None, start, start + len(owner))
        # A clause of its own after "and", "but" or "while", naming its own subject, is the
        # one that speaks: "Christopher Robin whispered to Rabbit, and Rabbit said", '"…,"
        # murmured Margaret, while Helen said,' (not "…, and he said").
        for found in direct.finditer(tail, match.end()):
            if (
                _CLAUSE_JOIN.search(tail, match.end(), found.start())
                and found.group("subject").lower() not in table.pronouns
                and _TAG_REST.fullmatch(tail[found.end() :])
            ):
                match = found
    written = match.group("subject")
    start = offset + match.start("subject")
    opener = _OPENER.match(written)
    if opener is not None and written[opener.end() + 1 : opener.end() + 2].isupper():
        # "Meanwhile Hamidullah had said": the adverb opening the sentence is no name.
        start += opener.end() + 1
        written = written[opener.end() + 1 :]
    elif opener is not None and opener.end() == len(written):
        return None  # 'Thus occupied, she did not see him': the adverb is all there is
    if _WORDS_SAID.fullmatch(written):
        return None  # 'She repeated the sentence': what is said, not who says it
    words = written.split(" ")
    # A name's own particles are no break in it ("Mrs. van der Luyden, who").
    last_lower = max(
        (
            i
            for i, w in enumerate(words)
            if w[:1].islower() and not (w in table.particles and 0 < i < len(words) - 1)
        ),
        default=len(words),
    )
    if last_lower < len(words) - 1 and text.startswith(", who", start + len(written)):
        # "This comforted Hamidullah, who remarked": the clause is about the name before it.
        name = " ".join(words[last_lower + 1 :])
        start += len(written) - len(name)
        written = name
    subject, kind, gender = _classify(written, table)
    if kind == "name":
        owner = re.sub(r"['’]s?$", "", written)
        owned = _OWNED.match(text, start + len(owner))
        if owned is not None and owned.group(1).split()[-1].lower() in NOUN_GENDERS:
            # "answered Daisy's mamma": the one she belongs to is not the speaker.
            written = owner + owned.group()
            return Tag(written, "noun", noun_gender(written), start, start + len(written))
    if kind == "noun" and where == "after":
        # "said the gentleman in the white waistcoat": what sets them apart is theirs.
        modifier = _POST_MODIFIER.match(text, start + len(written))
        if modifier is not None and not _MANNER.search(modifier.group(1)):
            written += modifier.group()
            subject = written  # the gender stays the head noun's ("gentleman")
    if kind == "noun":
        # "said his hairy uncle, the Baboon": the apposition names the speaker.
        apposition = _APPOSITION.match(text, start + len(written))
        if apposition is not None:
            return Tag(apposition.group(1), "name", None, start, offset + apposition.end())
        # "cut in the clear voice of Mr. Wilcox": the voice's owner speaks.
        lowered = written.lower().split()
        if lowered[-1] in ("voice", "tones"):
            owner = patterns.voice_of.match(text, start + len(written))
            if owner is not None:
                return Tag(
                    owner.group("name"),
                    "name",
                    None,
                    offset + owner.start("name"),
                    offset + owner.end(),
                )
        # "Her voice lingered over it", "His hand went out": he or she speaks.
        if lowered[-1] in _PARTS and is_english(language) and lowered[0] in _OWNER_GENDERS:
            end = start + len(lowered[0])
            owner_gender = _OWNER_GENDERS[lowered[0]]
            return Tag(written[: len(lowered[0])], "pronoun", owner_gender, start, end)
    return Tag(subject, kind, gender, start, start + len(written))


def incise_at(text: str, start: int, language: str | None) -> tuple[int, int] | None:
    """In dash dialogue, a tag inside the speech after a comma (", dit-il, ", ", dijo Juan."):
    where the speech stops and where it may start again (after the tag's clause)."""
    inverted = _patterns(language).inverted
    for comma in re.finditer(r"[,!?]\s+", text[start:]):
        at = start + comma.end()
        match = inverted.match(text, at)
        if match is not None:
            end = re.search(r"[,.;]\s|[.;]$|$", text[match.end() :])
            resume = match.end() + (end.end() if end else 0)
            return start + comma.start() + 1, resume
    return None
