"""An XML part of a zipped document (Word, OpenDocument, FB2 in a zip), read within limits.

The archive is opened with the EPUB's checks (`epub.archive.EpubArchive`: entry count, declared and
real unpacked sizes, compression ratios), the part is capped at `OFFICE_MAX_DOCUMENT_BYTES`,
and parsed by `safe_xml` (no entities, no DTD, no network).
"""

from __future__ import annotations

from lxml import etree

from audiopub import settings
from audiopub.book.epub.archive import EpubArchive, human_size, printable
from audiopub.book.safe_xml import parse_markup
from audiopub.errors import BadBook, DamagedEntry

__all__ = ["read_part"]


def read_part(
    archive: EpubArchive, part: str, notes: list[str], required: bool = True
) -> etree._Element | None:
    """The parsed part; None for a missing or unreadable part that is not `required` (with a
    note if it is there but can't be read); `BadBook` for a required one."""
    what = f"{archive.book}: {printable(part)}"
    if part not in archive:
        if required:
            raise BadBook(f"{what} is missing: the file is damaged or not {archive.kind}")
        return None
    limit = settings.OFFICE_MAX_DOCUMENT_BYTES
    try:
        size = archive.size(part)
        if size > limit:
            raise BadBook(
                f"{what} is {human_size(size)}, over the {human_size(limit)} limit for the "
                "text of a book"
            )
        data = archive.read(part)
    except DamagedEntry as exc:
        if required:
            raise
        notes.append(f"{printable(part)} can't be unpacked ({exc.reason}); it was left out.")
        return None
    problems: list[str] = []
    root = parse_markup(data, deep=True, problems=problems)
    for problem in problems:
        notes.append(f"{printable(part)}: {problem}; its text from there on was left out.")
    if root is None:
        if required:
            raise BadBook(f"{what} could not be parsed: the file is damaged")
        notes.append(f"{printable(part)} could not be parsed; it was left out.")
    return root
