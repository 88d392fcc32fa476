"""The words of an SVG picture: fixed-layout books set their prose in SVG `<text>` elements.

A page of a fixed-layout book (a picture book, a comic, a poster) is often an `<svg>` holding
the page's image and, over it, the text: `<text>` elements placed by x/y, each line a `<text>`
or a `<tspan>` of one. Here they are read in document order (the order the book was written in)
and joined back into paragraphs:

- a `<tspan>` with a `y` of its own starts a new line; one placed with only an `x` on the same
  line is a word placed on its own, joined with a space (a `dx` only nudges letters: no space);
- lines are joined with a space, except after a hyphen that ends a line ("peut-" + "être");
- each `<text>` holding several lines is a paragraph; where every `<text>` holds one line (one
  element per line), a new paragraph starts where the gap to the next line is clearly larger
  than the page's usual line spacing.

`<title>`, `<desc>` and `<defs>` (a description for screen readers, templates) are not read:
they are not the page's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from audiopub.book.markup import clean_label, local_name

__all__ = ["svg_paragraphs"]

_NOT_PAGE_TEXT = frozenset({"title", "desc", "defs", "metadata", "script", "style"})
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
# A gap between lines this many times the page's usual line step starts a paragraph.
_PARAGRAPH_GAP = 1.4


@dataclass
class _Line:
    text: str
    y: float | None
    group: int  # which <text> element it belongs to


def _first_number(value: str | None) -> float | None:
    """The first coordinate of an attribute ("120", "120 134 150", "12.5px")."""
    match = _NUMBER.match(value or "")
    return float(match.group(1)) if match else None


class _Lines:
    """Collects the lines of the `<text>` elements of one picture."""

    def __init__(self) -> None:
        self.lines: list[_Line] = []
        self._open: list[str] = []
        self._y: float | None = None
        self._group = -1

    def text_element(self, el: etree._Element) -> None:
        self._end_line()
        self._group += 1
        self._y = _first_number(el.get("y"))
        self._fragment(el.text)
        # Its children in document order, without recursion (hostile markup nests deeply):
        # an element is taken in, then its children, then its tail.
        stack: list[tuple[etree._Element, bool]] = [(child, False) for child in reversed(el)]
        while stack:
            child, done = stack.pop()
            if done:
                self._fragment(child.tail)
                continue
            stack.append((child, True))
            if self._enter(child):
                stack.extend((inner, False) for inner in reversed(child))
        self._end_line()

    def _enter(self, el: etree._Element) -> bool:
        """Take in a child of a <text>; whether its own children are read."""
        name = local_name(el)
        if name not in ("tspan", "a", "textPath"):
            return False  # <title>, <desc>, comments: not the page's text
        y = _first_number(el.get("y"))
        if y is not None and y != self._y:
            self._end_line()
            self._y = y
        elif el.get("x") is not None and self._open and not self._open[-1][-1:].isspace():
            self._open.append(" ")  # a word placed on its own on the same line
        self._fragment(el.text)
        return True

    def _fragment(self, text: str | None) -> None:
        if text:
            self._open.append(text)

    def _end_line(self) -> None:
        text = clean_label("".join(self._open))
        if text:
            self.lines.append(_Line(text, self._y, self._group))
        self._open = []


def svg_paragraphs(svg: etree._Element) -> list[str]:
    """The paragraphs the `<text>` elements under `svg` hold, in document order."""
    lines = _Lines()
    stack = [svg]
    while stack:  # document order, without recursion (pages may nest deeply)
        el = stack.pop()
        name = local_name(el)
        if name in _NOT_PAGE_TEXT:
            continue
        if name == "text":
            lines.text_element(el)
            continue
        stack.extend(reversed([child for child in el if isinstance(child.tag, str)]))
    return _paragraphs(lines.lines)


def _paragraphs(lines: list[_Line]) -> list[str]:
    if not lines:
        return []
    one_line_each = len({line.group for line in lines}) == len(lines)
    steps = [
        b.y - a.y
        for a, b in zip(lines, lines[1:])
        if a.y is not None and b.y is not None and b.y > a.y
    ]
    usual = min(steps) if steps else None
    paragraphs: list[list[str]] = [[lines[0].text]]
    for before, line in zip(lines, lines[1:]):
        if line.group == before.group:
            new = False
        elif not one_line_each or usual is None or before.y is None or line.y is None:
            new = True
        else:  # one <text> per line: a larger gap (or a step back up the page) starts one
            step = line.y - before.y
            new = step <= 0 or step > _PARAGRAPH_GAP * usual
        if new:
            paragraphs.append([line.text])
        else:
            paragraphs[-1].append(line.text)
    return [_join(parts) for parts in paragraphs]


def _join(lines: list[str]) -> str:
    """Lines read on with a space; a line ending in a hyphen runs on into the next word."""
    out = lines[0]
    for line in lines[1:]:
        out += line if out.endswith("-") else f" {line}"
    return out
