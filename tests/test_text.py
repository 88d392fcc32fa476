"""Tests for audiopub.book.text: cleaning paragraphs for speech and splitting sentences."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audiopub.book.text import normalise_text, split_sentences

# --- normalise_text: one test per rule --------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("“Well,” said he, “I think so.”", '"Well," said he, "I think so."'),
        ("‘Tis the season, ’tis true.", "'Tis the season, 'tis true."),
        ("“Don’t,” she said.", '"Don\'t," she said.'),
        ("„Ja“, sagte er.", '"Ja", sagte er.'),
        ("«Bonjour», dit-il.", '"Bonjour", dit-il.'),
        ("A board 6′ long and 2' wide.", "A board 6′ long and 2' wide."),  # only quotes change
    ],
)
def test_curly_quotes_become_ascii(raw: str, clean: str) -> None:
    assert normalise_text(raw) == clean


@pytest.mark.parametrize(
    "raw",
    [
        "A board 6′ long and 2″ wide.",  # primes: feet and inches, minutes and seconds
        "51° 30′ 15″ N.",
        "½ ⅓ ⅔ ¼ ¾ ⅕ ⅖ ⅗ ⅘ ⅙ ⅚ ⅐ ⅛ ⅜ ⅝ ⅞ ⅑ ⅒",  # vulgar fractions: not "1/2"
        "2½ miles, 3¾ pounds",
    ],
)
def test_characters_read_as_words_later_survive(raw: str) -> None:
    # The spoken-form stage turns these into words; NFKC would have split them up.
    assert normalise_text(raw) == raw


def test_fraction_slash_becomes_slash() -> None:
    assert normalise_text("1\u20442 a cup") == "1/2 a cup"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        # Standard Ebooks style: an em dash glued between words.
        ("“Well,” said he—“I think so.”", '"Well," said he, "I think so."'),
        ("The house—old, grey, silent—stood alone.", "The house, old, grey, silent, stood alone."),
        # Spaced dashes, and Project Gutenberg's "--".
        ("It was -- I think -- late.", "It was, I think, late."),
        ("It was--I think--late.", "It was, I think, late."),
        ("A spaced – en dash.", "A spaced, en dash."),
        ("A lone - hyphen.", "A lone, hyphen."),
        # A dash next to punctuation: the punctuation already pauses.
        ("He stopped,—and then went on.", "He stopped, and then went on."),
        ("Mr. D——, of the village", "Mr. D, of the village"),
        # Broken-off speech trails off.
        ("“But I—” she stopped.", '"But I..." she stopped.'),
        ("And then—", "And then..."),
        ("And then -", "And then..."),
        # A leading dash (dialogue dash, attribution) is dropped.
        ("—Yes, he said.", "Yes, he said."),
        ("— Mark Twain", "Mark Twain"),
    ],
)
def test_dash_used_as_a_break(raw: str, clean: str) -> None:
    assert normalise_text(raw) == clean


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("The war of 1914–1918 changed everything.", "The war of 1914 to 1918 changed everything."),
        ("See pages 12 – 14.", "See pages 12 to 14."),
        ("Call 555-1234 now.", "Call 555-1234 now."),  # a hyphen is not a range
    ],
)
def test_number_ranges_are_read_as_to(raw: str, clean: str) -> None:
    assert normalise_text(raw) == clean


@pytest.mark.parametrize(
    "raw",
    ["well-known", "a well‐known man", "a well‑known man"],  # ASCII, U+2010, U+2011
)
def test_hyphens_in_words_stay(raw: str) -> None:
    assert normalise_text(raw).replace("a ", "").replace(" man", "") == "well-known"


def test_minus_sign_becomes_hyphen() -> None:
    assert normalise_text("It was −5 degrees.") == "It was -5 degrees."


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("I wonder… perhaps.", "I wonder... perhaps."),
        ("I wonder . . . perhaps.", "I wonder ... perhaps."),
        ("And so. . . .", "And so..."),
        ("Wait....", "Wait..."),
        ("Two dots.. stay", "Two dots.. stay"),
    ],
)
def test_ellipses(raw: str, clean: str) -> None:
    assert normalise_text(raw) == clean


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Mr.\u00a0Holmes", "Mr. Holmes"),  # no-break space
        ("10\u2009000 men", "10 000 men"),  # thin space
        ("a\u202fb", "a b"),  # narrow no-break space
        ("  line one\nline two\r\n\tend  ", "line one line two end"),
        ("two\u2028lines", "two lines"),  # line separator
    ],
)
def test_whitespace_collapses(raw: str, clean: str) -> None:
    assert normalise_text(raw) == clean


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Mr.\u2060Holmes\u2060 said", "Mr.Holmes said"),  # word joiner
        ("zero\u200bwidth", "zerowidth"),  # zero-width space
        ("extra\u00adordinary", "extraordinary"),  # soft hyphen
        ("\ufeffBOM at the start", "BOM at the start"),
        ("left\u200eto\u200fright", "lefttoright"),  # bidi marks
        ("bell\x07 and\x00 null\x9b", "bell and null"),  # C0 and C1 controls
        ("private\ue000 use", "private use"),
    ],
)
def test_invisible_and_control_characters_go(raw: str, clean: str) -> None:
    assert normalise_text(raw) == clean


def test_zero_width_joiners_that_scripts_need_stay() -> None:
    assert normalise_text("می\u200cخواهم") == "می\u200cخواهم"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("ﬁne ﬂour", "fine flour"),  # ligatures
        ("ＡＢＣ １２３", "ABC 123"),  # full-width forms
        ("café naïve Øresund Dvořák", "café naïve Øresund Dvořák"),  # accents stay
        ("cafe\u0301", "café"),  # decomposed accent is composed
        ("cafe[1]\u0301", "café"),  # ...also when a removed mark stood between them
    ],
)
def test_nfkc(raw: str, clean: str) -> None:
    assert normalise_text(raw) == clean


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("As Darwin observed[1], species change.", "As Darwin observed, species change."),
        ("It was true [12].", "It was true."),
        ("It was true.[3] Then", "It was true. Then"),
        ("The word* was new.", "The word was new."),
        ("An odd word† indeed‡.", "An odd word indeed."),
        ("In 1066 [sic] they came.", "In 1066 [sic] they came."),  # not a number: kept
    ],
)
def test_footnote_and_reference_marks_go(raw: str, clean: str) -> None:
    assert normalise_text(raw) == clean


@pytest.mark.parametrize("raw", ["", "   ", "* * *", "⁂", "—", ". . .", "\u2060", "[1]"])
def test_nothing_speakable_gives_empty(raw: str) -> None:
    assert normalise_text(raw) == ""


def test_real_paragraph() -> None:
    raw = (
        "“You have been in Afghanistan, I perceive.”\n"
        "  “How on earth did you know that?” I asked in astonishment.[2] "
        "Mr.\u00a0Sherlock Holmes—for it was he—smiled . . . and said nothing."
    )
    assert normalise_text(raw) == (
        '"You have been in Afghanistan, I perceive." '
        '"How on earth did you know that?" I asked in astonishment. '
        "Mr. Sherlock Holmes, for it was he, smiled ... and said nothing."
    )


# --- normalise_text: properties ---------------------------------------------------------------

# Characters the rules care about, so random text exercises them often.
_TRICKY = st.sampled_from(
    list("ab Zé-—–‒―⸺.,;:!?'\"“”‘’«»[]12*†…′″½¾´ \u00a0\u2009\u2060\u200b\u00ad\u0301\t\n()")
)
_ANY_TEXT = st.one_of(st.text(), st.text(_TRICKY), st.text(_TRICKY, min_size=20))


@settings(max_examples=300, deadline=None)
@given(_ANY_TEXT)
def test_normalise_is_idempotent(raw: str) -> None:
    once = normalise_text(raw)
    assert normalise_text(once) == once


@settings(max_examples=300, deadline=None)
@given(_ANY_TEXT)
def test_normalised_text_is_one_tidy_line(raw: str) -> None:
    clean = normalise_text(raw)
    assert clean == clean.strip()
    assert "  " not in clean
    assert clean == " ".join(clean.split())  # no newline, tab or odd space left
    assert clean == "" or any(char.isalnum() for char in clean)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text("abcdefghijklmnopqrstuvwxyzéø", min_size=1), min_size=1))
def test_plain_words_pass_through(words: list[str]) -> None:
    text = " ".join(words)
    assert normalise_text(text) == text


# --- split_sentences --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        ('"Stop." He said nothing.', ['"Stop."', "He said nothing."]),
        ("“Stop.” He said nothing.", ["“Stop.”", "He said nothing."]),
        ('"Stop!" he cried.', ['"Stop!" he cried.']),
        ("Mr. Holmes and Mrs. Hudson met Dr. Watson.", None),
        ("They lived on St. James Street.", None),
        ("A book by J. R. R. Tolkien was read.", None),
        ("Pi is 3.14 or so. Then more.", ["Pi is 3.14 or so.", "Then more."]),
        ("Fruit, e.g. Apples, i.e. Red ones.", None),
        ("Bring pens, paper, etc. and ink.", None),
        ("Bring pens, paper, etc. Then go.", ["Bring pens, paper, etc.", "Then go."]),
        ("See No. 5 for details.", None),
        ("He said no. Then he left.", ["He said no.", "Then he left."]),
        ("I wonder... Perhaps not.", ["I wonder...", "Perhaps not."]),
        ("I wonder... perhaps not.", None),
        ("He went (as always.) Then home.", ["He went (as always.)", "Then home."]),
        ('It ended. "Why?" she asked.', ["It ended.", '"Why?" she asked.']),
        ("", []),
        ("   ", []),
    ],
)
def test_split_sentences(text: str, sentences: list[str] | None) -> None:
    # None: the text is one sentence.
    expected = [text] if sentences is None else sentences
    assert split_sentences(text) == expected


_SENTENCE_CHARS = st.sampled_from(list("aZ .!?'\"”“)(3…,") + ["Mr.", "J.", "e.g.", "No. 5"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_SENTENCE_CHARS).map("".join))
def test_split_sentences_loses_nothing(raw: str) -> None:
    # On single-spaced text (as normalise_text gives) the sentences join back exactly.
    text = " ".join(raw.split())
    sentences = split_sentences(text)
    assert " ".join(sentences) == text
    assert all(sentence and sentence == sentence.strip() for sentence in sentences)
    # On any text, the words are kept: the splitter only cuts at whitespace.
    assert [word for sentence in split_sentences(raw) for word in sentence.split()] == raw.split()
