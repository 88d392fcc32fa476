"""XHTML 1.1 as HTML5 has it: what an EPUB 2 page may use that an EPUB 3 page may not.

XHTML 1.1 keeps a few presentational elements and its Tables module's attributes, all valid
in an EPUB 2 book and errors in an EPUB 3 one (EPUBCheck's RSC-005). Alignment and widths
become CSS in the element's `style`; what CSS has no simple word for (a table's summary,
cellpadding, rules) is dropped, as browsers mostly ignore it; `big`, `tt` and `acronym`
become the elements HTML5 has for them.
"""

from __future__ import annotations

from typing import Final

from lxml import etree

from audiopub.book.markup import local_name

_TABLE_PARTS: Final = frozenset("table caption col colgroup thead tbody tfoot tr td th".split())
_AS_CSS: Final = {
    "align": "text-align",
    "valign": "vertical-align",
    "width": "width",
    "height": "height",
}
_DROPPED: Final = frozenset(
    "summary cellpadding cellspacing frame rules border char charoff axis abbr".split()
)
_CSS_VALUES: Final = frozenset("left right center justify top middle bottom baseline".split())
_RENAMED: Final = {
    "big": ("span", "font-size: larger"),
    "tt": ("span", "font-family: monospace"),
    "acronym": ("abbr", ""),
}


def make_html5(root: etree._Element) -> None:
    """Rewrite, in place, the page's XHTML 1.1 elements and attributes that HTML5 dropped."""
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        name = local_name(el)
        namespace = el.tag[: -len(name)]
        if name in _RENAMED:
            new, css = _RENAMED[name]
            el.tag = namespace + new
            if css:
                _add_style(el, css)
        elif name in _TABLE_PARTS:
            for attr in [a for a in el.attrib if a in _AS_CSS or a in _DROPPED]:
                value = (el.get(attr) or "").strip()
                if _kept(name, attr, value):
                    continue
                del el.attrib[attr]
                if attr in ("width", "height") and value.isdigit():
                    value += "px"
                if attr in _AS_CSS and (value.lower() in _CSS_VALUES or value[:1].isdigit()):
                    _add_style(el, f"{_AS_CSS[attr]}: {value.lower()}")


def _kept(name: str, attr: str, value: str) -> bool:
    """HTML5 keeps `border` on a table as "" or "1", and `abbr` on a header cell."""
    return (
        (name, attr) == ("table", "border") and value in ("", "1") or (name, attr) == ("th", "abbr")
    )


def _add_style(el: etree._Element, declaration: str) -> None:
    style = (el.get("style") or "").strip().rstrip(";")
    el.set("style", f"{style}; {declaration}" if style else declaration)
