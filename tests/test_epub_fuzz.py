"""Fuzzing the EPUB reader (issue #6): mutated EPUBs give a `Book` or Audiopub's own error, fast.

Seeds are a real book (Just So Stories, 138 kB) and two small generated ones. Each input is one
seed with one kind of mutation:

- raw bytes of the whole zip: flips, insertions, deletions, truncation. Most of these stop at
  the zip layer, which is the point of testing that layer;
- fields of the zip's headers (sizes, flags, methods, offsets, counts) set to lying values;
- the bytes of one entry (weighted towards container.xml, the OPF, XHTML, nav and NCX), mutated
  with bytes and XML/EPUB tokens (entities, DOCTYPEs, hrefs out of the book, deep nesting…),
  then zipped again: these reach the XML parsers and the reader behind them;
- the archive's structure: entries dropped, renamed (`../x`, `/x`), reordered, recompressed,
  turned into symbolic links, or duplicated.

Every input must finish within `PER_INPUT_SECONDS`, and anything it raises must be an
`AudiopubError`. A book that comes out is also chunked and script-checked. The run is
reproducible (fixed seed, no example database) and sized to take ~20 s; set
AUDIOPUB_FUZZ_EXAMPLES to run more, AUDIOPUB_FUZZ_SEED for other inputs.
"""

from __future__ import annotations

import io
import os
import re
import stat
import struct
import time
import warnings
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from epub_factory import build_epub, tiny_png
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from test_epub_hostile import PNG, book_files, encryption, write_zip

from audiopub.book import text as text_module
from audiopub.book.chunks.chunking import chunk_paragraphs
from audiopub.book.epub.reader import read_epub
from audiopub.book.scripts import check_speakable
from audiopub.errors import AudiopubError

DATA = Path(__file__).parent / "data" / "epubs"
PER_INPUT_SECONDS = 5.0
EXAMPLES = int(os.environ.get("AUDIOPUB_FUZZ_EXAMPLES", "600"))
SEED = int(os.environ.get("AUDIOPUB_FUZZ_SEED", "20251122"))

TOKENS = [
    b"<",
    b">",
    b"&",
    b"&amp;",
    b"&nbsp;",
    b"&#0;",
    b"&#1;",
    b"&#x10FFFF;",
    b"&#xD800;",
    b"&#99999999999;",
    b"&undefined;",
    b"]]>",
    b"<![CDATA[",
    b"<!--",
    b"-->",
    b"<?pi x?>",
    b'<!DOCTYPE html [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    b"&x;",
    (
        b'<!DOCTYPE lol [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
    ),
    b"&c;",
    b'<!DOCTYPE html SYSTEM "http://127.0.0.1:9/x.dtd">',
    b'<!ENTITY % p SYSTEM "file:///">%p;',
    b'<?xml version="1.0" encoding="utf-16"?>',
    b'<?xml version="1.0" encoding="bogus"?>',
    b'<?xml version="1.1"?>',
    b"\x00",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"\xc3\x28",
    b"\xed\xa0\x80",
    b'href="../../../../etc/passwd"',
    b'href="/etc/passwd"',
    b'href="#"',
    b'href=""',
    b'href="%2e%2e/%2e%2e/x"',
    b'href="data:image/png;base64,!!!"',
    b'href="http://x/"',
    b'full-path=""',
    b'full-path="/"',
    b'full-path="../x.opf"',
    b' id="x"',
    b' idref="x"',
    b'<item id="x" href="x.xhtml" media-type="application/xhtml+xml"/>',
    b'<itemref idref="x"/>',
    b'<item href="" />',
    b"<itemref/>",
    b' linear="no"',
    b' properties="nav"',
    b' properties="cover-image"',
    b'<meta name="cover" content="x"/>',
    b"<dc:title/>",
    b'<dc:creator opf:role="aut"/>',
    b'<meta refines="#" property="role"/>',
    b'<nav epub:type="toc"><ol><li><a href="',
    b"<ol><li>",
    b"</li></ol>",
    b"<navPoint>",
    b"<content src=",
    b"<hgroup>",
    b"<pre>\n\n",
    b"<br/>" * 5,
    b'<a href="#n">1</a>',
    b'<section epub:type="toc">',
    b"<div>" * 300,
    b"</div>" * 3,
    b"<p>" * 50,
    b"*** START OF THE PROJECT GUTENBERG EBOOK",
    b"*** END OF THE PROJECT GUTENBERG EBOOK",
    "\u202e\u200f\u0301\ufeff\U0001f600\U0001d400\u3000".encode(),
    "كتاب 中文 ".encode(),
    b"x" * 70_000,
    b" " * 5000,
    b"-" * 5000,
    b"[" * 2000 + b"1" + b"]" * 2000,
    b"." * 3000,
    b'xmlns=""',
    b'xmlns:epub="bad"',
    b'xmlns="http://www.idpf.org/2007/opf"',
]
# Fields of the zip's records: (offset, struct format). Lying values here reach zipfile's and
# the archive's size, flag and offset handling, which random byte flips rarely hit.
LOCAL_FIELDS = [(6, "<H"), (8, "<H"), (14, "<L"), (18, "<L"), (22, "<L"), (26, "<H"), (28, "<H")]
CENTRAL_FIELDS = [
    (8, "<H"),
    (10, "<H"),
    (16, "<L"),
    (20, "<L"),
    (24, "<L"),
    (28, "<H"),
    (30, "<H"),
    (32, "<H"),
    (38, "<L"),
    (42, "<L"),
]
END_FIELDS = [(8, "<H"), (10, "<H"), (12, "<L"), (16, "<L"), (20, "<H")]
SIGNATURES = {b"PK\x03\x04": LOCAL_FIELDS, b"PK\x01\x02": CENTRAL_FIELDS, b"PK\x05\x06": END_FIELDS}
VALUES = [
    0,
    1,
    2,
    8,
    12,
    14,
    99,
    0x7F,
    0xFF,
    0x800,
    0x801,
    0xFFFF,
    0x10000,
    0x7FFFFFFF,
    0xFFFFFFFF,
    1 << 20,
    1 << 30,
]
KINDS = ["bytes", "headers", "member", "member", "member", "structure"]
STRUCTURE_OPS = [
    "drop",
    "rename_up",
    "rename_abs",
    "rename_case",
    "to_folder",
    "reorder",
    "stored",
    "bzip2",
    "symlink",
    "duplicate",
    "empty",
]


def _zip_entries(data: bytes) -> list[tuple[zipfile.ZipInfo, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return [(info, zf.read(info)) for info in zf.infolist()]


def _rezip(entries: list[tuple[zipfile.ZipInfo, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name": on purpose
        for info, data in entries:
            zf.writestr(info, data)
    return out.getvalue()


def _seeds(folder: Path) -> dict[str, bytes]:
    seeds = {"just-so": (DATA / "pg2781-just-so-stories.epub").read_bytes()}
    factory = build_epub(
        folder / "factory.epub",
        [("One", ["Hello there.", "Second line."]), ("Two", ["More text here."])],
        cover=tiny_png(),
    )
    seeds["factory"] = factory.read_bytes()
    nav = (
        '<nav xmlns:epub="http://www.idpf.org/2007/ops" epub:type="toc"><ol>'
        '<li><a href="c1.xhtml">One</a></li><li><a href="c2.xhtml#x">Two</a>'
        '<ol><li><a href="c2.xhtml#y">II.</a></li></ol></li></ol></nav>'
    )
    files = book_files(
        {
            "c1.xhtml": "<h1>One</h1><p>Text with a note<a href='#n'>1</a>.</p>",
            "c2.xhtml": "<h2 id='x'>Two</h2><p>More.</p><h3 id='y'>II.</h3><p>Last.</p>",
            "nav.xhtml": nav,
        },
        extra={"cover.png": PNG, "font.otf": b"OTTO\x00obfuscated"},
    )
    files["OEBPS/content.opf"] = (
        str(files["OEBPS/content.opf"])
        .replace('href="nav.xhtml"', 'href="nav.xhtml" properties="nav"')
        .replace('href="cover.png"', 'href="cover.png" properties="cover-image"')
    )
    files["META-INF/encryption.xml"] = encryption(
        ("OEBPS/font.otf", "http://www.idpf.org/2008/embedding")
    )
    seeds["hand-made"] = write_zip(folder / "hand.epub", files).read_bytes()
    return seeds


def _mutate_bytes(data: bytes, draw: st.DataObject, tokens: bool) -> bytes:
    out = bytearray(data)
    for _ in range(draw.draw(st.integers(1, 6), label="ops")):
        op = draw.draw(
            st.sampled_from(
                ["flip", "insert", "delete", "truncate", "token"]
                if tokens
                else ["flip", "insert", "delete", "truncate"]
            )
        )
        at = draw.draw(st.integers(0, max(len(out), 1) * 4)) % (len(out) + 1)
        if op == "flip" and at < len(out):
            out[at] ^= 1 << draw.draw(st.integers(0, 7))
        elif op == "insert":
            out[at:at] = draw.draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del out[at : at + draw.draw(st.integers(1, 64))]
        elif op == "truncate":
            del out[at:]
        elif op == "token":
            token = draw.draw(st.sampled_from(TOKENS))
            width = draw.draw(st.sampled_from([0, 0, 1, 4, 32]))
            out[at : at + width] = token
    return bytes(out)


def _mutate_member(entries: list[tuple[zipfile.ZipInfo, bytes]], draw: st.DataObject) -> None:
    # Mostly the XML behind the package files (the OPF, XHTML, nav and NCX); now and then the
    # OCF files, or any entry.
    xml = [
        i
        for i, (info, _) in enumerate(entries)
        if info.filename.lower().endswith((".xml", ".opf", ".xhtml", ".html", ".ncx", ".svg"))
    ]
    content = [i for i in xml if not entries[i][0].filename.startswith("META-INF/")]
    roll = draw.draw(st.integers(0, 9))
    pool = (
        content if content and roll < 7 else xml if xml and roll < 9 else list(range(len(entries)))
    )
    index = draw.draw(st.sampled_from(pool))
    info, data = entries[index]
    entries[index] = (info, _mutate_bytes(data, draw, tokens=True))


def _mutate_structure(entries: list[tuple[zipfile.ZipInfo, bytes]], draw: st.DataObject) -> None:
    op = draw.draw(st.sampled_from(STRUCTURE_OPS))
    index = draw.draw(st.integers(0, len(entries) - 1))
    info, data = entries[index]
    new = zipfile.ZipInfo(info.filename, info.date_time)
    new.compress_type = info.compress_type
    if op == "drop":
        del entries[index]
        return
    if op == "rename_up":
        new.filename = "../" + info.filename
    elif op == "rename_abs":
        new.filename = "/" + info.filename
    elif op == "rename_case":
        new.filename = info.filename.swapcase()
    elif op == "to_folder":
        new.filename = info.filename + "/"
    elif op == "reorder":
        entries.insert(draw.draw(st.integers(0, len(entries) - 1)), entries.pop(index))
        return
    elif op == "stored":
        new.compress_type = zipfile.ZIP_STORED
    elif op == "bzip2":
        new.compress_type = zipfile.ZIP_BZIP2
    elif op == "symlink":
        new.create_system = 3
        new.external_attr = (stat.S_IFLNK | 0o777) << 16
        data = b"/etc/passwd"
    elif op == "duplicate":
        entries.append((new, data[: len(data) // 2]))
        return
    elif op == "empty":
        data = b""
    entries[index] = (new, data)


def _mutate_headers(data: bytes, draw: st.DataObject) -> bytes:
    out = bytearray(data)
    records = [
        (at, fields)
        for signature, fields in SIGNATURES.items()
        for at in _find_all(data, signature)
    ]
    for _ in range(draw.draw(st.integers(1, 3), label="fields")):
        at, fields = draw.draw(st.sampled_from(records))
        offset, fmt = draw.draw(st.sampled_from(fields))
        if at + offset + struct.calcsize(fmt) > len(out):
            continue
        value = draw.draw(st.sampled_from(VALUES) | st.integers(0, 0xFFFFFFFF))
        old = struct.unpack_from(fmt, out, at + offset)[0]
        value = draw.draw(st.sampled_from([value, old + 1, old - 1, old * 2, old // 2]))
        struct.pack_into(fmt, out, at + offset, value % (1 << (8 * struct.calcsize(fmt))))
    return bytes(out)


def _find_all(data: bytes, signature: bytes) -> list[int]:
    found, at = [], data.find(signature)
    while at >= 0:
        found.append(at)
        at = data.find(signature, at + 1)
    return found


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return _seeds(tmp_path_factory.mktemp("seeds"))


def test_fuzz_the_reader(seeds: dict[str, bytes], tmp_path: Path) -> None:
    stats: Counter[str] = Counter()
    slowest = [0.0, ""]
    path = tmp_path / "fuzzed.epub"

    @seed(SEED)
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data())
    def run(draw: st.DataObject) -> None:
        name = draw.draw(st.sampled_from(sorted(seeds)), label="seed")
        kind = draw.draw(st.sampled_from(KINDS), label="kind")
        data = seeds[name]
        if kind == "bytes":
            data = _mutate_bytes(data, draw, tokens=False)
        elif kind == "headers":
            data = _mutate_headers(data, draw)
        else:
            entries = _zip_entries(data)
            for _ in range(draw.draw(st.integers(1, 3), label="mutations")):
                if entries:
                    (_mutate_member if kind == "member" else _mutate_structure)(entries, draw)
            data = _rezip(entries)
        path.write_bytes(data)
        started = time.perf_counter()
        try:
            book = read_epub(path)
            chunks = sum(len(chunk_paragraphs(c.paragraphs, 300)) for c in book.chapters[:3])
            check_speakable(book, "en-US")
            outcome = f"book ({chunks and 'chunked'})"
        except AudiopubError as error:
            outcome = f"{type(error).__name__}: {_stage(str(error))}"
        elapsed = time.perf_counter() - started
        stats[f"{kind} → {outcome}"] += 1
        stats["inputs"] += 1
        if elapsed > slowest[0]:
            slowest[:] = [elapsed, f"{name}/{kind}"]
        assert elapsed < PER_INPUT_SECONDS, f"{elapsed:.1f} s for one input"

    started = time.perf_counter()
    run()
    took = time.perf_counter() - started
    print(
        f"\nfuzzed {stats['inputs']} inputs in {took:.1f} s; slowest {slowest[0]:.2f} s "
        f"({slowest[1]})"
    )
    for outcome, count in sorted(stats.items(), key=lambda kv: -kv[1]):
        print(f"  {count:5}  {outcome}")
    assert stats["inputs"] >= min(EXAMPLES, 100)
    # The member mutations must get past the zip layer often, or they test nothing new.
    reached = sum(n for k, n in stats.items() if k.startswith("member → book"))
    assert reached >= 0.1 * sum(n for k, n in stats.items() if k.startswith("member →"))


def _stage(message: str) -> str:
    """A message without its details, to count outcomes by kind."""
    message = message.split(": ", 1)[-1]
    for cut in (" (", ";", ":"):
        message = message.split(cut, 1)[0]
    return message[:60]


# --- the linear-time rewrites in text.py against the quadratic originals ---------------------

_FOOTNOTE = re.compile(r"\s*\[\d{1,3}\]")


def _markers_removed_by_looping(text: str) -> str:
    while True:
        text, count = _FOOTNOTE.subn("", text)
        if not count:
            return text


def _old_ends_sentence(text: str, match: re.Match[str]) -> bool:
    following = text[match.end() :].lstrip()
    next_char = following.lstrip(text_module._OPENERS)[:1]
    if not next_char or next_char.islower():
        return False
    if match.group() != ".":
        return True
    before = text[: match.start()]
    word = (
        ""
        if not before or before[-1].isspace()
        else before.split()[-1].lstrip(text_module._OPENERS)
    )
    if word.lower() in text_module.ABBREVIATIONS:
        return False
    if len(word) == 1 and word.isupper():
        return False
    return not (word.lower() in text_module.NUMBER_ABBREVIATIONS and next_char.isdigit())


@settings(max_examples=300, deadline=None, database=None)
@seed(SEED)
@given(st.text(alphabet="[]1234 \t\nab", max_size=60))
def test_nested_markers_scan_equals_the_loop(text: str) -> None:
    assert text_module._remove_nested_markers(text) == _markers_removed_by_looping(text)
    assert text_module._remove_reference_marks(text) == _markers_removed_by_looping(text)


@settings(max_examples=300, deadline=None, database=None)
@seed(SEED)
@given(st.text(alphabet="Aa. !?\"'(“«\n\tMrNo5J", max_size=60))
def test_sentence_ends_are_found_as_before(text: str) -> None:
    for match in text_module._SENTENCE_END.finditer(text):
        assert text_module._ends_sentence(text, match) == _old_ends_sentence(text, match)
