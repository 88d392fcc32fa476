"""What an EPUB's package says about the book beyond title, authors and language: its
description, year and series (what audiobook libraries such as Audiobookshelf file it by).

Series: an EPUB 3 `belongs-to-collection` whose `collection-type` is "series" or not given
(a "set", such as a publisher's list of classics, is not a series), else calibre's
`calibre:series` meta, which many EPUB 2 books carry. Year: the first four-digit year of the
publication `dc:date` (EPUB 2's `opf:event` tells conversion dates apart).
"""

from __future__ import annotations

import re

from lxml import html

from audiopub.book.epub.package import OPF_NS, Package
from audiopub.book.markup import clean_label
from audiopub.book.models import BookDetails

_YEAR = re.compile(r"\b(\d{4})\b")
MAX_DESCRIPTION_CHARS = 4000  # libraries show a paragraph or two; a hostile book may hold more


def book_details(package: Package) -> BookDetails:
    series, index = _series(package)
    return BookDetails(_description(package), _year(package), series, index)


def _description(package: Package) -> str | None:
    for value, _ in package.dc.get("description", []):
        # Descriptions are often HTML (escaped in the OPF): keep only their text.
        try:
            text = html.fromstring(value).text_content() if "<" in value else value
        except (ValueError, TypeError):  # lxml refuses empty or odd documents
            text = value
        text = " ".join(text.split())
        if text:
            return text[:MAX_DESCRIPTION_CHARS]
    return None


def _year(package: Package) -> str | None:
    dates = package.dc.get("date", [])
    events = [attrs.get(f"{{{OPF_NS}}}event", "") for _, attrs in dates]
    preferred = [value for (value, _), event in zip(dates, events) if event == "publication"]
    others = [value for (value, _), event in zip(dates, events) if not event]
    for value in preferred + others:
        found = _YEAR.search(value)
        if found:
            return found.group(1)
    return None


def _series(package: Package) -> tuple[str | None, str | None]:
    refined: dict[str, dict[str, str]] = {}
    for meta in package.metas:
        target = meta.get("refines", "")
        if target.startswith("#") and "property" in meta:
            refined.setdefault(target[1:], {})[meta["property"]] = meta["#text"].strip()
    for meta in package.metas:
        if meta.get("property") != "belongs-to-collection":
            continue
        about = refined.get(meta.get("id", ""), {})
        name = clean_label(meta["#text"])
        if name and about.get("collection-type", "series") == "series":
            return name, about.get("group-position") or None
    by_name = {meta.get("name"): meta.get("content", "") for meta in package.metas}
    name = clean_label(by_name.get("calibre:series") or "")
    return (name, by_name.get("calibre:series_index") or None) if name else (None, None)
