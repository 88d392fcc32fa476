"""What every reader takes from a parsed page: an element's name and a label's text.

Books come as XHTML, HTML, NCX, OPF, FB2, OpenDocument and Word XML, each in its own
namespace (or none, in recovered HTML); readers compare elements by their local name. Titles,
TOC labels and metadata values are shown and spoken as one clean line.
"""

from __future__ import annotations

from lxml import etree

__all__ = ["clean_label", "local_name"]


def local_name(el: etree._Element) -> str:
    """ "p" for {http://www.w3.org/1999/xhtml}p; "" for comments and processing instructions."""
    tag = el.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


# Word joiners, soft hyphens, zero-width spaces, BOMs (and a reversed one, U+FFFE) carry no
# sound or meaning for us; nor do control characters (an HTML parser keeps them), but those
# `str.split` takes for spaces.
_INVISIBLE = {0x2060: None, 0x00AD: None, 0x200B: None, 0xFEFF: None, 0xFFFE: None} | {
    code: None for code in [*range(0x20), *range(0x7F, 0xA0)] if not chr(code).isspace()
}


def clean_label(text: str) -> str:
    """One line of text: invisible characters gone, whitespace (NBSP too) collapsed."""
    return " ".join(text.translate(_INVISIBLE).split())
