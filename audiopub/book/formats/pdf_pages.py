"""The text lines of a PDF's pages, with where they sit: run as a script by `formats.pdf`, in a
process of its own (pdfminer.six is pure Python, and a hostile PDF can make it work for hours
or fill memory).

    python pdf_pages.py BOOK.pdf MAX_PAGES MAX_MEMORY_BYTES MAX_CPU_SECONDS PARENT_PID
        →  JSON on stdout

Its limits hold in this process itself, whatever happens to the one that started it: the
kernel stops it past MAX_CPU_SECONDS of CPU and refuses memory past MAX_MEMORY_BYTES; it ends
with its parent (a parent-death signal on Linux, a watch thread elsewhere) and as soon as the
book's file is gone (an upload whose tab closed). References that lead to each other in a
circle are refused at once rather than followed until a limit stops them.

Only the standard library and pdfminer.six are imported: this file runs without Audiopub on
the path. pdfminer.six is imported inside the functions that read the book, once the limits
hold: importing it (cryptography's native library among others) counts against them too. Exit
status 0 with the pages; 2 with {"error": …} for a PDF refused on purpose; 3 when the book's
file went away while it was read.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import statistics
import sys
import threading
import time
from typing import Any

# A reference to a reference is followed this many times at most: real files chain one or two.
MAX_REFERENCE_CHAIN = 32
WATCH_EVERY_S = 0.25  # how often the watch thread looks for the parent and the book's file
FILE_GONE = 3  # the exit status when the book's file went away
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when the thread that started it ends


class ReferenceLoop(Exception):
    """Objects that refer to each other in a circle ("6 0 R" is "7 0 R", which is "6 0 R")."""


def main(path: str, max_pages: int) -> int:
    from pdfminer.converter import PDFPageAggregator  # under the limits: see the top
    from pdfminer.layout import (  # under the limits: see the top
        LAParams,
        LTChar,
        LTFigure,
        LTImage,
        LTTextBox,
        LTTextLine,
    )
    from pdfminer.pdfdocument import (  # under the limits: see the top
        PDFDocument,
        PDFEncryptionError,
        PDFPasswordIncorrect,
    )
    from pdfminer.pdfinterp import (  # under the limits: see the top
        PDFPageInterpreter,
        PDFResourceManager,
    )
    from pdfminer.pdfpage import PDFPage  # under the limits: see the top
    from pdfminer.pdfparser import PDFParser  # under the limits: see the top
    from pdfminer.pdftypes import PDFException  # under the limits: see the top

    _guard_reference_loops()
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
    from pdfminer.pdfdocument import PDFNoOutlines  # under the limits: see the top
    from pdfminer.pdftypes import PDFException, resolve1  # under the limits: see the top
    from pdfminer.psparser import PSLiteral  # under the limits: see the top

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
    except (PDFNoOutlines, PDFException, KeyError, TypeError, ValueError, RecursionError):
        pass  # an outline that is damaged, or whose entries follow each other in a circle
    return entries


def _info(document: Any) -> dict[str, str]:
    from pdfminer.pdftypes import resolve1  # under the limits: see the top

    found = {}
    for info in document.info[:1]:
        for key in ("Title", "Author"):
            value = resolve1(info.get(key))
            if value:
                found[key.lower()] = _decode(value)
    return found


def _decode(value: Any) -> str:
    from pdfminer.utils import decode_text  # under the limits: see the top

    if isinstance(value, bytes):
        if value.startswith((b"\xfe\xff", b"\xff\xfe")):
            return value.decode("utf-16", "replace")
        return decode_text(value)
    return str(value)


def _refuse(why: str, detail: str = "") -> int:
    json.dump({"error": why, "detail": detail[:300]}, sys.stdout)
    return 2


def _guard_reference_loops() -> None:
    """pdfminer's `resolve1` and `resolve_all` follow a reference to a reference until they
    reach a value: on a circle of references (a page's /Length as "6 0 R", object 6 being
    "7 0 R" and object 7 "6 0 R") they never return. Every pdfminer module's copy of the two
    is replaced by one that gives up after `MAX_REFERENCE_CHAIN` references."""
    import pdfminer.pdftypes as types  # under the limits: see the top
    from pdfminer.pdftypes import PDFObjRef  # under the limits: see the top

    def resolve1(x: object, default: object = None) -> Any:
        for _ in range(MAX_REFERENCE_CHAIN):
            if not isinstance(x, PDFObjRef):
                return x
            x = x.resolve(default=default)
        if isinstance(x, PDFObjRef):
            raise ReferenceLoop(f"object {x.objid}")
        return x

    def resolve_all(x: object, default: object = None) -> Any:
        x = resolve1(x, default)
        if isinstance(x, list):
            return [resolve_all(v, default) for v in x]
        if isinstance(x, dict):
            for key, value in x.items():
                x[key] = resolve_all(value, default)
        return x

    originals = {types.resolve1: resolve1, types.resolve_all: resolve_all}
    for name, module in list(sys.modules.items()):
        if name == "pdfminer" or name.startswith("pdfminer."):
            for attribute in ("resolve1", "resolve_all"):
                found = getattr(module, attribute, None)
                if found in originals:
                    setattr(module, attribute, originals[found])


def _limit(memory_bytes: int, cpu_seconds: int) -> None:
    """Past `memory_bytes` of address space allocations fail (MemoryError); past `cpu_seconds`
    of CPU the kernel stops this process (SIGXCPU). Set here, in the process itself, rather
    than by the parent between fork and exec (not safe with threads), so they hold even when
    the parent is gone."""
    try:
        import resource  # POSIX only
    except ImportError:  # Windows: the parent's time limit still holds
        return
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGXCPU would otherwise dump core


def _end_with(parent_pid: int, path: str) -> None:
    """End this process with the one that started it, and once the book's file is gone."""
    if sys.platform == "linux":
        # The kernel kills this process when the thread that started it ends.
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent ended before the signal was asked for
        os._exit(1)

    def watch() -> None:
        while True:
            if os.getppid() != parent_pid:
                os._exit(1)
            if not os.path.exists(path):
                os._exit(FILE_GONE)
            time.sleep(WATCH_EVERY_S)

    threading.Thread(target=watch, daemon=True, name="pdf-pages-watch").start()


if __name__ == "__main__":
    _limit(int(sys.argv[3]), int(sys.argv[4]))
    _end_with(int(sys.argv[5]), sys.argv[1])
    try:
        sys.exit(main(sys.argv[1], int(sys.argv[2])))
    except ReferenceLoop as exc:
        sys.exit(_refuse("damaged", f"its objects refer to each other in a circle ({exc})"))
    except MemoryError:
        sys.exit(_refuse("memory"))
    except (ImportError, OSError) as exc:  # a library that could not be mapped into memory
        out_of_memory = "map" in str(exc) or "allocate" in str(exc)
        sys.exit(_refuse("memory" if out_of_memory else "damaged", str(exc)))
    except RecursionError:
        sys.exit(_refuse("damaged", "its objects nest too deeply"))
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many kinds on a damaged file
        sys.exit(_refuse("damaged", f"{type(exc).__name__}: {exc}"))
