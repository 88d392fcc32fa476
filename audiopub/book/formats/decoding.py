"""Bytes to text, as the standards decode them, for the formats read as text (.txt, .md).

In order: a byte-order mark (UTF-8, UTF-16, UTF-32) says the encoding; else UTF-8 if the
whole file is UTF-8; else, for a file whose lines are mostly UTF-8 with some in an older
encoding (a file pasted together from two sources), each line as what it is; else
Windows-1252, which extends Latin-1 (older Project Gutenberg files). UTF-16 without a mark is
told by its zero bytes, which fall on every other byte.

Control characters other than newline and tab (BEL, ESC, SUB, the DOS end-of-file mark, NUL,
the non-characters U+FFFE and U+FFFF) are dropped, and said in a note: no voice can say them
and no XML may hold them.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

__all__ = [
    "DecodedText",
    "bom_encoding",
    "decode_text",
    "drop_control_characters",
    "looks_like_text",
    "sniffing_text",
]

_BOMS = (  # UTF-32's marks first: UTF-32 LE's starts with UTF-16 LE's
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
FALLBACK = "cp1252"
# What XML 1.0 refuses and no voice says: C0 controls but tab, newline and carriage return;
# DEL and the C1 controls; surrogates (a lone one, decoded with "surrogatepass" or "replace",
# never reaches here but is listed for safety); U+FFFE and U+FFFF.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
# A file is text when at most this share of its first bytes are control bytes.
MAX_CONTROL_SHARE = 0.1
_CONTROL_BYTES = frozenset(range(0x20)) - {0x09, 0x0A, 0x0C, 0x0D, 0x1A, 0x1B}


@dataclass
class DecodedText:
    text: str
    encoding: str  # what it was read as: "utf-8", "utf-16-le", "cp1252", "utf-8 and cp1252"…
    notes: list[str] = field(default_factory=list)


def bom_encoding(data: bytes) -> str | None:
    """The encoding a byte-order mark at the start of `data` names, or None."""
    return next((name for bom, name in _BOMS if data.startswith(bom)), None)


def _utf16_without_bom(head: bytes) -> str | None:
    """UTF-16 with no mark: text in Latin script has a zero byte in every other place."""
    if len(head) < 8:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) >= 0.9 * len(odd) and even.count(0) <= 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) >= 0.9 * len(even) and odd.count(0) <= 0.1 * len(odd):
        return "utf-16-be"
    return None


def looks_like_text(head: bytes) -> bool:
    """Whether a file starting with `head` is text in an encoding `decode_text` reads (a
    stray NUL or control character is dropped later; a binary file is mostly such bytes)."""
    if bom_encoding(head) or _utf16_without_bom(head):
        return True
    controls = sum(byte in _CONTROL_BYTES for byte in head)
    return controls <= MAX_CONTROL_SHARE * max(len(head), 1)


def sniffing_text(head: bytes) -> bytes:
    """The first bytes of a file as UTF-8, where it is in UTF-16 or UTF-32, so that markers
    such as "<html" can be looked for in it; other files' bytes as they are."""
    encoding = bom_encoding(head) or _utf16_without_bom(head)
    if encoding is None or encoding == "utf-8":
        return head
    return head.decode(encoding, "ignore").encode("utf-8")


def decode_text(data: bytes) -> DecodedText:
    """The text of `data`, with control characters dropped (see the module's docstring)."""
    encoding = bom_encoding(data) or _utf16_without_bom(data[:4096])
    if encoding is not None:
        start = len(codecs.BOM_UTF8) if encoding == "utf-8" else 0
        body = data[start:] if start else data
        # The mark is decoded too ("utf-16-le" keeps it as U+FEFF) and taken off here.
        decoded = DecodedText(body.decode(encoding, "replace").lstrip("\ufeff"), encoding)
    else:
        decoded = _utf8_or_older(data)
    decoded.text, dropped = drop_control_characters(decoded.text)
    if dropped:
        decoded.notes.append(
            f"{dropped:,} control character{'s' if dropped > 1 else ''} (such as NUL, BEL, "
            "ESC or the end-of-file mark) could not be read aloud and "
            f"{'were' if dropped > 1 else 'was'} left out."
        )
    return decoded


def _utf8_or_older(data: bytes) -> DecodedText:
    try:
        return DecodedText(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    lines = data.split(b"\n")
    decoded: list[str] = []
    utf8 = 0
    for line in lines:
        try:
            decoded.append(line.decode("utf-8"))
            utf8 += any(byte >= 0x80 for byte in line)  # lines that are UTF-8 beyond ASCII
        except UnicodeDecodeError:
            decoded.append(line.decode(FALLBACK, "replace"))
    if not utf8:  # nothing but ASCII is UTF-8: the file is in the older encoding throughout
        return DecodedText(data.decode(FALLBACK, "replace"), FALLBACK)
    return DecodedText(
        "\n".join(decoded),
        f"utf-8 and {FALLBACK}",
        [
            "Its lines are in two encodings (UTF-8, and Windows-1252 or Latin-1): each line "
            "was read in its own."
        ],
    )


def drop_control_characters(text: str) -> tuple[str, int]:
    """`text` without the characters no voice says and no XML holds; and how many went."""
    cleaned, count = _CONTROL.subn("", text)
    return cleaned, count
