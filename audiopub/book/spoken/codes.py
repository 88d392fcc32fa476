"""Digits that are not a quantity: phone numbers, ISBNs, e-mail addresses, web addresses,
version strings and reference codes. Their digits are read one by one (or a short code number
as a number, "B-52" → "B fifty-two"), never as one large number ("555-1234" is not "five
hundred and fifty-five minus one thousand…").

The rules are the same in every language; each language gives the words for its digits and
for "at", "dot" and the like. They run before any other number rule, and what they write has
no digits left for those rules to read again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from audiopub.book.spoken.common import Rule


@dataclass(frozen=True)
class CodeWords:
    """One language's words for reading codes."""

    digits: Callable[[str], str]  # "401" → "four oh one"
    cardinal: Callable[[int], str]
    at: str  # e-mail "@"
    dot: str
    slash: str
    point: str  # between the parts of a version ("2.3.1")
    version: str  # "v2.3"
    plus: str  # "+44"


_PHONE = re.compile(
    r"(?<![\w.,/+-])(?:"
    r"\+\d{1,3}(?:[\s.-]?\(?\d{1,4}\)?)(?:[\s.-]\d{2,4}){1,4}"  # +1 555 123 4567, +44 (0)20 …
    r"|\(\d{2,5}\)\s?\d{3,4}[\s.-]\d{3,4}"  # (555) 123-4567
    r"|(?:1[.-])?\d{3}[.-]\d{3}[.-]\d{4}"  # 555-123-4567, 1-800-555-0199
    r"|0\d{2,4}[\s-]\d{3,4}[\s-]\d{3,4}"  # 020 7946 0958
    r"|\d{3}-\d{4}"  # 555-1234
    r")(?![\w-]|[.,]\d)"
)
_ISBN = re.compile(r"\b(ISBN(?:-1[03])?:?\s*)((?:\d[\s-]?){9,12}[\dX])\b")
_EMAIL = re.compile(r"(?<![\w.@])[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"')\]]+[^\s<>\"')\].,;:!?]")
# "v2.3", "v.2", "version 2.3.1", "2.3.1" (three parts or more).
_VERSION = re.compile(r"(?<![\w.])(?:(v|V)\.?\s?(\d+(?:\.\d+)*)|(\d+\.\d+(?:\.\d+)+))(?![\w]|\.\d)")
# "401(k)", "501(c)(3)": a code with its sub-clauses.
_CLAUSE = re.compile(r"(?<![\w.])(\d{1,4})((?:\([a-z0-9]{1,3}\))+)")
# "CP-42", "B-52", "AK-47", "M25"-style codes with a hyphen: letters, then the number.
_LETTER_CODE = re.compile(r"\b([A-Z]{1,5})-(\d{1,6})\b(?![.,]\d)")


def code_rules(words: CodeWords) -> list[Rule]:
    """The rules, in the order they must run, for one language."""

    def spelled(text: str) -> str:
        """Digits in a code one by one; letters and marks stay for the engine to spell."""
        text = re.sub(r"\d+", lambda m: f" {words.digits(m.group())} ", text)
        return re.sub(r"\s+", " ", text).strip()

    def say_groups(match: re.Match[str]) -> str:
        written = match.group()
        groups = re.findall(r"\d+", written)
        if re.fullmatch(r"\d{3}-\d{4}", written) and written[2] == "0" and written[-1] == "0":
            return written  # "200-1000" is a range of round numbers, not a phone number
        lead = f"{words.plus} " if written.startswith("+") else ""
        return lead + ", ".join(words.digits(group) for group in groups)

    def say_isbn(match: re.Match[str]) -> str:
        return match.group(1) + spelled(match.group(2).replace("-", " "))

    def say_email(match: re.Match[str]) -> str:
        text = match.group().replace("@", f" {words.at} ").replace(".", f" {words.dot} ")
        return spelled(text)

    def say_url(match: re.Match[str]) -> str:
        text = re.sub(r"^https?://", "", match.group())
        text = text.replace(".", f" {words.dot} ").replace("/", f" {words.slash} ")
        return spelled(text)

    def say_version(match: re.Match[str]) -> str:
        mark, numbered, bare = match.groups()
        parts = (numbered or bare).split(".")
        if bare and all(len(part) == 3 for part in parts[1:]):
            return match.group()  # "1.250.000": a number with its thousands grouped
        if bare and re.fullmatch(r"\d{1,2}\.\d{1,2}\.\d{2,4}", bare):
            return match.group()  # "25.12.2020": a date
        joiner = words.dot if bare and len(parts) == 4 else words.point  # an IP address
        spoken = f" {joiner} ".join(_part(part) for part in parts)
        before = match.string[: match.start()].rstrip().rsplit(" ", 1)[-1]
        if not mark or before.lower() == words.version.lower():
            return spoken  # "version v2.3" says "version" once
        return f"{words.version} {spoken}"

    def _part(part: str) -> str:
        return (
            words.digits(part)
            if part.startswith("0") and len(part) > 1
            else words.cardinal(int(part))
        )

    def say_clause(match: re.Match[str]) -> str:
        number, clauses = match.groups()
        parts = [words.digits(number) if len(number) > 2 else words.cardinal(int(number))]
        for clause in re.findall(r"\(([a-z0-9]+)\)", clauses):
            parts.append(words.digits(clause) if clause.isdigit() else clause)
        return "-".join(part.replace(" ", "-") for part in parts)

    def say_letter_code(match: re.Match[str]) -> str:
        letters, digits = match.groups()
        if len(digits) <= 2 or (len(digits) == 3 and digits[0] != "0" and digits[1:] == "00"):
            return f"{letters} {words.cardinal(int(digits))}"
        return f"{letters} {words.digits(digits)}"

    return [
        (_URL, say_url),
        (_EMAIL, say_email),
        (_ISBN, say_isbn),
        (_PHONE, say_groups),
        (_CLAUSE, say_clause),
        (_VERSION, say_version),
        (_LETTER_CODE, say_letter_code),
    ]


# What sends a chunk through the rules although it has no digit: a web or e-mail address.
TRIGGER = r"@|\bwww\.|https?://"
