"""Whole numbers written in a document's markup: outline levels, counts of spaces.

A document says what it likes in an attribute, so its numbers are read by one function here,
never by `int()` on the value: `str.isdigit()` accepts "²" and "٣", which `int()` refuses or
reads, and a value of thousands of digits is over Python's limit for converting text to an
int. Only ASCII digits count; a number past the caller's `maximum` reads as the maximum, found
from its length alone, so no value is ever converted whole.
"""

from __future__ import annotations

__all__ = ["whole_number"]

_ASCII_DIGITS = frozenset("0123456789")
# XML Schema's whitespace around an integer: the value is the same without it.
_XML_SPACE = " \t\r\n"


def whole_number(value: str | None, maximum: int) -> int | None:
    """The whole number `value` writes in ASCII digits ("3", " 03 "), at most `maximum`; None
    when it is absent or not such a number ("", "-1", "²", "1.5"): the caller treats it as
    absent."""
    digits = (value or "").strip(_XML_SPACE)
    if not digits or not _ASCII_DIGITS.issuperset(digits):
        return None
    significant = digits.lstrip("0") or "0"
    if len(significant) > len(str(maximum)):
        return maximum
    return min(int(significant), maximum)
