"""The text lines of a PDF's pages, with where they sit: run as a script by `formats.pdf`, in a
process of its own that is stopped past the time and memory limits (pdfminer.six is pure
Python, and a hostile PDF can make it work for hours or fill memory).

    python pdf_pages.py BOOK.pdf MAX_PAGES MAX_MEMORY_BYTES  →  JSON on stdout

Only the standard library and pdfminer.six are imported: this file runs without Audiopub on
the path. Exit status 0 with the pages; 2 with {"error": …} for a PDF refused on purpose.
"""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any


def main(path: str, max_pages: int) -> int:
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams, LTChar, LTFigure, LTImage, LTTextBox, LTTextLine
    from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import PDFException

    with open(path, "rb") as file:
        try:
            document = PDFDocument(PDFParser(file))
        except (PDFPasswordIncorrect, PDFEncryptionError):
            return _refuse("encrypted")
        except PDFException as exc:
            return _refuse("damaged", str(exc))
        pages = []
        for page in PDFPage.create_pages(document):
            pages.append(page)
            if len(pages) > max_pages:
                return _refuse("pages", str(max_pages))
        numbers = {page.pageid: i for i, page in enumerate(pages)}
        resources = PDFResourceManager()
        device = PDFPageAggregator(resources, laparams=LAParams())
        interpreter = PDFPageInterpreter(resources, device)
        out = []
        for page in pages:
            interpreter.process_page(page)
            layout = device.get_result()
            lines: list[list[Any]] = []
            images = 0
            stack = list(layout)
            while stack:
                item = stack.pop()
                if isinstance(item, LTTextBox):
                    stack.extend(item)
                elif isinstance(item, LTTextLine):
                    text = item.get_text().strip()
                    sizes = [c.size for c in item if isinstance(c, LTChar)]
                    if text:
                        size = statistics.median(sizes) if sizes else item.height
                        lines.append([item.x0, item.y0, item.x1, item.y1, text, size])
                elif isinstance(item, (LTImage, LTFigure)):
                    images += 1
            out.append(
                {"width": layout.width, "height": layout.height, "lines": lines, "images": images}
            )
        json.dump(
            {"pages": out, "outline": _outline(document, numbers), **_info(document)},
            sys.stdout,
        )
    return 0


def _outline(document: Any, numbers: dict[Any, int]) -> list[list[Any]]:
    from pdfminer.pdfdocument import PDFNoOutlines
    from pdfminer.pdftypes import PDFException, resolve1
    from pdfminer.psparser import PSLiteral

    entries: list[list[Any]] = []
    try:
        for level, title, dest, action, _ in document.get_outlines():
            if dest is None and action is not None:
                action = resolve1(action)
                dest = action.get("D") if isinstance(action, dict) else None
            dest = resolve1(dest)
            if isinstance(dest, (str, bytes, PSLiteral)):
                name = dest.name if isinstance(dest, PSLiteral) else dest
                dest = resolve1(document.get_dest(name))
            if isinstance(dest, dict):
                dest = resolve1(dest.get("D"))
            page = None
            if isinstance(dest, list) and dest:
                target = dest[0]
                page = numbers.get(getattr(target, "objid", None))
            entries.append([level, _decode(title), page])
    except (PDFNoOutlines, PDFException, KeyError, TypeError, ValueError):
        pass
    return entries


def _info(document: Any) -> dict[str, str]:
    from pdfminer.pdftypes import resolve1

    found = {}
    for info in document.info[:1]:
        for key in ("Title", "Author"):
            value = resolve1(info.get(key))
            if value:
                found[key.lower()] = _decode(value)
    return found


def _decode(value: Any) -> str:
    from pdfminer.utils import decode_text

    if isinstance(value, bytes):
        if value.startswith((b"\xfe\xff", b"\xff\xfe")):
            return value.decode("utf-16", "replace")
        return decode_text(value)
    return str(value)


def _refuse(why: str, detail: str = "") -> int:
    json.dump({"error": why, "detail": detail[:300]}, sys.stdout)
    return 2


def _limit_memory(limit: int) -> None:
    """Past `limit` bytes of address space, allocations fail (MemoryError): set here, in the
    process itself, rather than by the parent between fork and exec (not safe with threads)."""
    try:
        import resource
    except ImportError:  # Windows: the time limit still holds
        return
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


if __name__ == "__main__":
    _limit_memory(int(sys.argv[3]))
    try:
        sys.exit(main(sys.argv[1], int(sys.argv[2])))
    except MemoryError:
        sys.exit(_refuse("memory"))
    except (ImportError, OSError) as exc:  # a library that could not be mapped into memory
        out_of_memory = "map" in str(exc) or "allocate" in str(exc)
        sys.exit(_refuse("memory" if out_of_memory else "damaged", str(exc)))
    except RecursionError:
        sys.exit(_refuse("damaged", "its objects nest too deeply"))
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many kinds on a damaged file
        sys.exit(_refuse("damaged", f"{type(exc).__name__}: {exc}"))
