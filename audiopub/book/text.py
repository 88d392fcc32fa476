"""Text cleaning for speech: one paragraph of book text in, one speakable line out.

`normalise_text` turns a paragraph as it comes out of an EPUB into plain text that TTS engines
read well (Piper speaks through espeak-ng, which pauses on commas and reads odd symbols aloud).
`split_sentences` cuts a paragraph into sentences for the chunker.

Both are pure functions. `normalise_text` is idempotent: cleaning clean text changes nothing.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["ABBREVIATIONS", "NUMBER_ABBREVIATIONS", "normalise_text", "split_sentences"]


# --- character level -------------------------------------------------------------------------

# Typographic quotes become ASCII: engines and espeak's lexicon know ' and " best, and an
# apostrophe must be ' for contractions ("don’t") to be pronounced as words. The primes ′ and ″
# are not quotes: they stay, so the spoken-form stage can read "6′" as "six feet".
_QUOTES = {
    **dict.fromkeys("‘’‚‛‵ʼ‹›`´", "'"),
    **dict.fromkeys("“”„‟‶‴«»〝〞〟", '"'),
}
# Characters NFKC would take apart but the spoken-form stage reads as words: vulgar fractions
# ("½" would become "1⁄2") and primes ("″" would become two "′").
_KEEP_FROM_NFKC = frozenset("′″½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅐⅛⅜⅝⅞⅑⅒↉")
_KEPT = re.compile(f"[{''.join(sorted(_KEEP_FROM_NFKC))}]")
# Hyphen look-alikes and the minus sign become "-", so "−5" is read as minus five and the dash
# rules below see one character. The fraction slash ("1⁄2") becomes "/".
_SYMBOLS = {
    **dict.fromkeys("\u2010\u2011\u2212", "-"),
    "\u2044": "/",
}
# Joiners that some scripts need between letters; every other format character goes.
_KEEP_FORMAT = {"\u200c", "\u200d"}  # zero-width non-joiner, zero-width joiner


class _CharMap(dict):
    """A `str.translate` table that classifies each new code point once, then caches it.

    Invisible characters (word joiners, zero-width spaces, soft hyphens, bidi marks: Unicode
    category Cf) are removed: they carry no sound and break word matching. Control characters
    (Cc) become spaces when Python counts them as whitespace (tabs, line breaks) so words stay
    apart, and are removed otherwise. Private-use and lone surrogate code points are removed:
    no engine can say them.
    """

    def __missing__(self, code_point: int) -> str | None:
        char = chr(code_point)
        category = unicodedata.category(char)
        if char in _QUOTES:
            result: str | None = _QUOTES[char]
        elif char in _SYMBOLS:
            result = _SYMBOLS[char]
        elif category == "Cf" and char not in _KEEP_FORMAT:
            result = ""
        elif category == "Cc":
            result = " " if char.isspace() else ""
        elif category in ("Co", "Cs"):
            result = ""
        else:
            result = char
        self[code_point] = result
        return result


_CHAR_MAP = _CharMap()


def _clean_characters(text: str) -> str:
    # Mapped before NFKC because NFKC turns "´" into a space plus a combining accent, and again
    # after because NFKC turns "″" into two primes.
    text = text.translate(_CHAR_MAP)
    # NFKC folds compatibility forms into plain ones: ligatures ("ﬁ" → "fi"), full-width
    # letters, NBSP and thin spaces (→ " "), "…" (→ "..."). It composes accented letters, so
    # "é" stays "é".
    text = _nfkc(text)
    return text.translate(_CHAR_MAP)


def _nfkc(text: str) -> str:
    """NFKC, except for the characters in `_KEEP_FROM_NFKC`, which stay as they are."""
    if not _KEPT.search(text):
        return unicodedata.normalize("NFKC", text)
    pieces = _KEPT.split(text)
    kept = _KEPT.findall(text)
    out = [unicodedata.normalize("NFKC", pieces[0])]
    for char, piece in zip(kept, pieces[1:]):
        out += [char, unicodedata.normalize("NFKC", piece)]
    return "".join(out)


# --- marks that are not meant to be read ------------------------------------------------------

# "[1]", "[12]": footnote references left behind when the link was flattened to text.
# The space before them goes too, so "word [1]." becomes "word.".
# A match only starts where a run of spaces starts, so a long run is scanned once, not once
# from each of its positions.
_FOOTNOTE_MARKER = re.compile(r"(?<!\s)\s*\[\d{1,3}\]")
# Reference marks ("word*", "word†") and scene-break ornaments ("* * *", "⁂"): espeak would
# read them as "asterisk" or "dagger".
_REFERENCE_MARKS = re.compile(r"[*†‡⁂]")


def _remove_reference_marks(text: str) -> str:
    text = _REFERENCE_MARKS.sub("", text)
    if "[" not in text:  # no marker: not scanned for one, from every position
        return text
    # Repeat because removing "[1]" from "[[1]2]" leaves a new marker. Real text needs one or
    # two passes; deeper nesting (only hostile input has it) goes to a single linear scan.
    for _ in range(4):
        text, count = _FOOTNOTE_MARKER.subn("", text)
        if not count:
            return text
    return _remove_nested_markers(text)


def _remove_nested_markers(text: str) -> str:
    """What repeating `_FOOTNOTE_MARKER.subn` until nothing changes gives, in one pass: the
    output so far never holds a marker, so a new one can only end at the "]" just added."""
    out: list[str] = []
    for char in text:
        out.append(char)
        if char != "]":
            continue
        digits = 0
        while digits < 4 and len(out) >= digits + 2 and out[-2 - digits].isdecimal():
            digits += 1
        if 1 <= digits <= 3 and len(out) >= digits + 2 and out[-2 - digits] == "[":
            del out[-2 - digits :]
            while out and out[-1].isspace():
                out.pop()
    return "".join(out)


# --- dashes -----------------------------------------------------------------------------------

_DASHES = "\u2012\u2013\u2014\u2015\u2e3a\u2e3b"  # figure, en, em, bar, two-em, three-em
_SENTENCE_PUNCTUATION = ".,;:!?"

# A numeric range: "1914–1918", "pp. 12 – 14" is read "1914 to 1918". Only en and figure
# dashes, which typesetters use for ranges; "555-1234" keeps its hyphen.
_NUMBER_RANGE = re.compile(r"(?<=\d) ?[\u2012\u2013] ?(?=\d)")

# A dash used as a break: any run holding a real dash or "--" (Project Gutenberg's em dash),
# or a hyphen standing alone between spaces ("word - word"), with the spaces around it.
# Hyphens inside words ("well-known") are not breaks.
_DASH_RUN = rf"[-{_DASHES}]*(?:[{_DASHES}]|--)[-{_DASHES}]*"
_LONE_HYPHEN = r"(?<!\S)-(?!\S)"
_DASH_PART = rf"(?:{_DASH_RUN}|{_LONE_HYPHEN})"
_DASH_BREAK = re.compile(rf"\s*{_DASH_PART}(?:\s*{_DASH_PART})*\s*")
# Both patterns need a dash or hyphen; a paragraph without one (most) is not scanned by them,
# which try their alternatives at every position.
_ANY_DASH = re.compile(rf"[-{_DASHES}]")


def _opens_quote(text: str, i: int) -> bool:
    """Is text[i] a straight quote that opens a quotation (it follows a space or the start)?"""
    return text[i] in "\"'" and (i == 0 or text[i - 1].isspace() or text[i - 1] in "([{")


def _closes_quote(text: str, i: int) -> bool:
    """Is text[i] a straight quote that closes a quotation (a space, punctuation or end next)?"""
    if text[i] not in "\"'":
        return False
    return i + 1 == len(text) or text[i + 1].isspace() or text[i + 1] in _SENTENCE_PUNCTUATION


def _replace_dash(match: re.Match[str]) -> str:
    text, start, end = match.string, match.start(), match.end()
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    at_end = not after or _closes_quote(text, end)
    if not before or _opens_quote(text, start - 1):
        # A leading dash ("—Yes, he said." dialogue dash, "— Mark Twain") says nothing.
        return ""
    if before in _SENTENCE_PUNCTUATION:
        # The punctuation already makes the pause: ",—I" → ", I".
        return "" if at_end or after in _SENTENCE_PUNCTUATION else " "
    if at_end:
        # Broken-off speech ("But I—”) trails off; "..." gives the engine a trailing pause.
        return "..."
    if after in _SENTENCE_PUNCTUATION:
        return ""
    # A break between words. espeak pauses on a comma, and reads a bare dash badly or not at
    # all, so "he—“I think" becomes "he, "I think".
    return ", "


def _replace_dashes(text: str) -> str:
    if not _ANY_DASH.search(text):
        return text
    text = _NUMBER_RANGE.sub(" to ", text)
    return _DASH_BREAK.sub(_replace_dash, text)


# --- ellipses ---------------------------------------------------------------------------------

# ". . ." and longer dot runs become "...": one spelling the engines pause on, never read as
# "dot dot dot". (NFKC has already turned "…" into "...".)
_ELLIPSIS = re.compile(r"\.(?:\s*\.){2,}")


def normalise_text(text: str) -> str:
    """Clean one paragraph for speech; return "" when nothing speakable is left.

    The result is a single line with single spaces and no leading or trailing space, and
    `normalise_text(normalise_text(x)) == normalise_text(x)`.
    """
    text = _clean_characters(text)
    text = _remove_reference_marks(text)
    # Whitespace is collapsed before the dash rules too: their patterns scan a run of spaces
    # from every position in it, which takes quadratic time on a long run.
    text = " ".join(text.split())
    text = _replace_dashes(text)
    text = _ELLIPSIS.sub("...", text)
    # Removals can put a combining accent next to its letter again; compose it.
    text = _nfkc(text)
    # All whitespace (line breaks, NBSP, thin spaces...) becomes one space: a paragraph is
    # one line, and runs of spaces mean nothing to a speaker.
    text = " ".join(text.split())
    # Punctuation and ornaments alone ("* * *", "—", "...") are not speech.
    if not any(char.isalnum() for char in text):
        return ""
    return text


# --- sentences --------------------------------------------------------------------------------

# Abbreviations whose full stop never ends a sentence: titles come before a name, and "e.g."
# / "i.e." before more of the same sentence. Compared in lower case, without the last dot.
# "etc." is deliberately absent: it often does end a sentence, and the lower-case rule below
# already keeps "etc. and so on" together.
ABBREVIATIONS = frozenset(
    {
        "mr", "mrs", "ms", "messrs", "mme", "mlle", "dr", "st", "jr", "sr", "prof", "rev",
        "hon", "gen", "col", "capt", "lt", "sgt", "cpl", "maj", "gov", "sen", "rep", "fr",
        "mt", "ft", "e.g", "i.e", "cf", "viz", "vs", "approx",
    }
)  # fmt: skip
# Abbreviations that are also ordinary words ("He said no."): only an abbreviation when a
# number follows ("No. 5", "vol. 2", "p. 17").
NUMBER_ABBREVIATIONS = frozenset({"no", "nos", "vol", "vols", "p", "pp", "fig", "ch", "chap"})

# Where a sentence may end: terminal punctuation, any closing quotes or brackets, then a space.
# Requiring the space keeps decimals ("3.14") and "e.g.," whole.
_SENTENCE_END = re.compile(r"""[.!?…]+[)\]"'’”»]*(?=\s)""")
_OPENERS = "\"'‘“«([{"


# What follows a possible sentence end: spaces, opening quotes or brackets, then a character.
_NEXT_CHAR = re.compile(rf"\s*[{re.escape(_OPENERS)}]*(.?)", re.DOTALL)


def _word_before(text: str, end: int) -> str:
    """The last word of text[:end] ("" if a space ends it), without opening quotes. Scans only
    that word, so checking every match of a long paragraph stays linear."""
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return text[start:end].lstrip(_OPENERS)


def _ends_sentence(text: str, match: re.Match[str]) -> bool:
    following = _NEXT_CHAR.match(text, match.end())
    next_char = following.group(1) if following else ""
    # '"Stop!" he said' and "wait... what": a lower-case word goes on the same sentence.
    if not next_char or next_char.islower():
        return False
    if match.group() != ".":
        return True  # "?", "!", "...", and '."' (closing quote after the stop) end sentences
    word = _word_before(text, match.start())
    if word.lower() in ABBREVIATIONS:
        return False  # "Mr. Holmes"
    if len(word) == 1 and word.isupper():
        return False  # an initial: "J. R. R. Tolkien"
    if word.lower() in NUMBER_ABBREVIATIONS and next_char.isdigit():
        return False  # "No. 5"
    return True


def split_sentences(text: str) -> list[str]:
    """Split a paragraph into sentences, each stripped; "" gives [].

    Nothing is lost: `" ".join(split_sentences(t)) == " ".join(t.split())` when `t` has
    single spaces (as normalised text does); the splitter only cuts at whitespace.
    """
    sentences = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if _ends_sentence(text, match):
            sentences.append(text[start : match.end()].strip())
            start = match.end()
    sentences.append(text[start:].strip())
    return [sentence for sentence in sentences if sentence]
