"""Fuzzing the readers of every format but EPUB (`read_book`): a mutated book gives a `Book` or
Audiopub's own error, fast, with clean text, and leaves nothing running.

Seeds are the test books of scripts/make_test_documents.py (the opening of The War of the
Worlds as text, Markdown, HTML, FB2, zipped FB2, Word, OpenDocument and PDF). Each input is one
seed with one kind of mutation:

- raw bytes of the file: flips, insertions, deletions, truncation;
- for the formats read as text (text, Markdown, HTML, FB2): tokens put between words, after a
  tag or at a line's start. The benign ones (control characters, a UTF-8 BOM, a run of
  Latin-1 bytes, Unicode and very long digit runs, character references, deep nesting of
  blockquotes, list markers and tags, a script inside a heading) must lose no text: the last
  paragraph's words still come out. The hostile ones (comments, unclosed tags, entity bombs,
  DOCTYPEs, a Gutenberg end marker, UTF-16 BOMs at odd places…) may make the reader refuse;
  they must not make it crash;
- for the same formats, the whole file in another encoding (UTF-8 with a BOM, UTF-16 LE or BE
  with a BOM, or UTF-8 HTML without its charset) with accented words in it: a book must come
  out, with every word decoded right;
- for the zipped formats (Word, OpenDocument, zipped FB2): one entry's bytes mutated with
  bytes and XML tokens, or the number attributes the readers parse (w:val of outline levels and
  heading style names, text:outline-level, text:c) set to "²", "-1", 5,000 nines…, then
  zipped again;
- for PDF (each read is a process: few inputs): bytes, and object references made to lie
  (a stream's /Length an indirect reference into a reference cycle, page trees and outlines
  that loop, counts and lengths out of range).

Every input must take under `CPU_SECONDS` of this thread's CPU time (a PDF: under
`PDF_SECONDS` of wall-clock time too, with the reader's own time limit lowered so that a hang
costs a little over that, not ten minutes); anything raised must be an `AudiopubError` with a
one-line message; a book that comes out is chunked with its spoken forms, script-checked, and
its text must hold no control characters but newlines and tabs, nor anything XML can't carry.
After the PDFs no child process is left. The run is reproducible (fixed seed, no example
database) and sized to take ~40 s of CPU; AUDIOPUB_FUZZ_EXAMPLES (inputs per format but PDF)
and AUDIOPUB_FUZZ_PDF_EXAMPLES run more, AUDIOPUB_FUZZ_SEED other inputs.
"""

from __future__ import annotations

import io
import os
import re
import time
import unicodedata
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from documents import make_documents, script
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from test_epub_fuzz import TOKENS as EPUB_TOKENS

from audiopub import settings as audiopub_settings
from audiopub.book.chunks.chunking import chunk_paragraphs
from audiopub.book.models import Book
from audiopub.book.reading import read_book
from audiopub.book.scripts import check_speakable
from audiopub.book.spoken import spoken_form
from audiopub.book.text import normalise_text
from audiopub.errors import AudiopubError

CPU_SECONDS = 5.0
PDF_SECONDS = 20.0
PDF_TIME_LIMIT = 30.0  # the reader's own limit, lowered for the run
EXAMPLES = int(os.environ.get("AUDIOPUB_FUZZ_EXAMPLES", "250"))
PDF_EXAMPLES = int(os.environ.get("AUDIOPUB_FUZZ_PDF_EXAMPLES", "20"))
SEED = int(os.environ.get("AUDIOPUB_FUZZ_SEED", "20251123"))

TEXT_FORMATS = ["txt", "md", "html", "fb2"]
ZIP_FORMATS = ["docx", "odt", "fb2.zip"]
FILE_NAMES = {
    "txt": "book.txt",
    "md": "book.md",
    "html": "book.html",
    "fb2": "book.fb2",
    "docx": "book.docx",
    "odt": "book.odt",
    "fb2.zip": "book.fb2.zip",
    "pdf": "book.pdf",
}
# Accented words put into the last paragraph for the encoding mutations: each must come out
# as written, not as mojibake ("cafÃ©").
ACCENTED = "Naïve café in Zürich, déjà vu: señor Ångström."
ACCENTED_WORDS = ["naïve", "café", "zürich", "déjà", "señor", "ångström"]
MOJIBAKE = re.compile("[ÃÂ][\u0080-\u00bf]|â€|Ã")

# Benign tokens, put between words: nothing around them may be lost.
INLINE = [
    b"\x00",
    b"\x07",
    b"\x1b",
    b"\x1a",
    b"\x0c",
    b"\x7f",
    b"\r",
    "\u0085".encode(),
    "\ufffe".encode(),
    "\uffff".encode(),
    "\ufeff".encode(),
    b"\xef\xbb\xbf",
    b"\xe9t\xe9 \xe0 la cr\xe8me",  # Latin-1 inside UTF-8
    b"\x80\x81\xfe",
    b"\xc3",
    "²³¹".encode(),
    "x²".encode(),
    "٣٤٥".encode(),
    "１２３".encode(),
    b"1" * 5000,
    b"9" * 4301,
    b"1," * 2000 + b"000",
    b"12.5e400",
    b"-" + b"0" * 3000 + b"1",
    b"\xc2\xa3" + b"9" * 4400,
    b"&amp;",
    b"&#233;",
    b"&eacute;",
    b"&nbsp;",
    b"&#0;",
    b"&#7;",
    b"&#x1b;",
    b"&#xFFFE;",
    b"&#xD800;",
    b"&#x10FFFF;",
    b"&#99999999999;",
    "\u202e\u200f\u0301\U0001f600\u3000".encode(),
]


def _nested(open_: bytes, close: bytes, depth: int) -> bytes:
    return open_ * depth + b"deep" + close * depth


# Benign tokens that start a line (Markdown's block markers), or nest tags (closed again: an
# unclosed tag may fairly swallow what follows, so those are among the hostile tokens).
LINE = {
    "txt": [b"> " * 500, b"    " * 300, b"CHAPTER " + b"I" * 2000 + b".", b"\t" * 1000],
    "md": [
        b"> " * 500,
        b">" * 3000,
        b"- " * 300,
        b"* " * 1000,
        b"1. " * 300,
        b"    " * 200 + b"- ",
        b"> - " * 300,
        b"#" * 300 + b" ",
        _nested(b"<div>", b"</div>", 300) + b"\n\n",
    ],
    "html": [
        _nested(b"<div>", b"</div>", 500),
        _nested(b"<blockquote>", b"</blockquote>", 500),
        _nested(b"<ul><li>", b"</li></ul>", 300),
        _nested(b"<b><i>", b"</i></b>", 500),
        _nested(b"<span>", b"</span>", 2000),
        b"<h2><script>alert(1)</script></h2>",
        b"<h2>Title<script>var t = '</h2>';</script> <style>h2{}</style>more</h2>",
    ],
    "fb2": [
        _nested(b"<section>", b"</section>", 300),
        _nested(b"<cite>", b"</cite>", 300),
        _nested(b"<emphasis>", b"</emphasis>", 500),
        _nested(b"<epigraph>", b"</epigraph>", 300),
        b"<title><p><script>x</script>Heading</p></title>",
    ],
}
HOSTILE = [
    b"<",
    b"&",
    b"<!--",
    b"<script>",
    b"<style>",
    b"<title>",
    b"<textarea>",
    b"<div>",
    b"<div>" * 500,
    b"<ul><li>" * 300,
    b"<p>" * 300,
    b"<section>" * 300,
    b"<emphasis>" * 500,
    b"<![CDATA[",
    b"]]>",
    b"```",
    b"~~~",
    b"***",
    b"*** END OF THE PROJECT GUTENBERG EBOOK",
    b"*** START OF THE PROJECT GUTENBERG EBOOK",
    b"\xff\xfe",
    b"\xfe\xff",
    b"\x00\x00\xfe\xff",
    b"\r" * 3000,
    b"\n" * 3000,
    b"<h1>" * 3 + b"1" * 5000,
    b"# " + b"9" * 5000 + b"\n",
    b"[x](javascript:alert(1))",
    b"![x](data:image/png;base64,!!!)",
    b"[" * 3000,
    b"<img src='file:///etc/passwd'>",
    b'<image l:href="#nowhere"/>',
    b'<binary id="x" content-type="image/png">!!!</binary>',
    b'<meta charset="utf-16">',
    b'<meta http-equiv="Content-Type" content="text/html; charset=bogus">',
    *EPUB_TOKENS,
]
# Values for the number attributes of Word and OpenDocument files.
NUMBERS = [
    "²",
    "-1",
    "9" * 5000,
    "0",
    "",
    "1.5",
    "１",
    "٣",
    "+3",
    " 2",
    "10",
    "99999999999999999999",
    "NaN",
    "x",
]
PDF_OBJECT_OPS = [
    "length_loop",
    "length_self",
    "length_missing",
    "length_huge",
    "length_negative",
    "kids_loop",
    "parent_loop",
    "outline_loop",
    "outline_count",
    "contents_loop",
    "root_loop",
    "info_loop",
    "xref_garbage",
]


# --- the seeds ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    made = make_documents(tmp_path_factory.mktemp("documents"))
    return {kind: made[kind].read_bytes() for kind in FILE_NAMES}


@pytest.fixture(scope="module")
def last_words() -> list[str]:
    """The words that end the book: they come out of every seed, whatever is put before."""
    return _words(script().source_chapters()[-1].paragraphs[-1])[-12:]


def _words(text: str) -> list[str]:
    return re.findall(r"[\w']+", normalise_text(text).casefold())


# --- mutations ------------------------------------------------------------------------------


def mutate_bytes(data: bytes, draw: st.DataObject, tokens: list[bytes] | None = None) -> bytes:
    out = bytearray(data)
    ops = ["flip", "insert", "delete", "truncate"] + (["token"] * 2 if tokens else [])
    for _ in range(draw.draw(st.integers(1, 6), label="ops")):
        op = draw.draw(st.sampled_from(ops))
        at = draw.draw(st.integers(0, max(len(out), 1) * 4)) % (len(out) + 1)
        if op == "flip" and at < len(out):
            out[at] ^= 1 << draw.draw(st.integers(0, 7))
        elif op == "insert":
            out[at:at] = draw.draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del out[at : at + draw.draw(st.integers(1, 64))]
        elif op == "truncate":
            del out[at:]
        elif op == "token" and tokens:
            width = draw.draw(st.sampled_from([0, 0, 1, 4, 32]))
            out[at : at + width] = draw.draw(st.sampled_from(tokens))
    return bytes(out)


def insert_tokens(data: bytes, fmt: str, draw: st.DataObject, benign: bool) -> bytes:
    """Tokens put where they split no word or tag: after a tag's ">" in markup, else at a
    line's start or before a space. A benign token between words comes after a space of its
    own: "été à la crème" put just after "had" would make "hadété", a word the book never had."""
    markup = fmt in ("html", "fb2")
    gaps = [m.end() for m in re.finditer(rb">" if markup else rb"(?:^|\n)|(?= )", data)]
    gaps = gaps or [0]
    line_gaps = gaps if markup else [m.end() for m in re.finditer(rb"(?:^|\n)", data)]
    out = data
    for _ in range(draw.draw(st.integers(1, 4), label="tokens")):
        if benign and draw.draw(st.booleans()):
            token, pool = draw.draw(st.sampled_from(LINE[fmt])), line_gaps
        else:
            token, pool = draw.draw(st.sampled_from(INLINE if benign else HOSTILE)), gaps
            if benign:
                token = b" " + token
        at = draw.draw(st.sampled_from(pool))
        out = out[:at] + token + out[at:]
        # Later positions moved by the token's length.
        gaps = [g + len(token) if g > at else g for g in gaps]
        line_gaps = [g + len(token) if g > at else g for g in line_gaps]
    return out


def reencode(data: bytes, fmt: str, draw: st.DataObject) -> bytes:
    """The whole file in another encoding, with accented words before its last paragraph."""
    start = data.rfind(b"It was only when I got")
    assert start > 0
    text = (data[:start] + ACCENTED.encode() + b" " + data[start:]).decode()
    encodings = ["utf-8-sig", "utf-16-le", "utf-16-be"] + (["no-charset"] if fmt == "html" else [])
    encoding = draw.draw(st.sampled_from(encodings), label="encoding")
    if fmt == "html":
        text = text.replace('<meta charset="utf-8">', "")
    if fmt == "fb2":
        declared = {"utf-8-sig": "utf-8"}.get(encoding, "utf-16")
        text = text.replace('encoding="utf-8"', f'encoding="{declared}"')
    if encoding == "no-charset":
        return text.encode()
    if encoding == "utf-8-sig":
        return text.encode("utf-8-sig")
    bom = "\ufeff".encode(encoding)
    return bom + text.encode(encoding)


def _entries(data: bytes) -> list[tuple[zipfile.ZipInfo, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return [(info, zf.read(info)) for info in zf.infolist()]


def _rezip(entries: list[tuple[zipfile.ZipInfo, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for info, data in entries:
            zf.writestr(info, data)
    return out.getvalue()


# Per zipped format: the entries to mutate, most often the first.
MEMBERS = {
    "docx": [
        "word/document.xml",
        "word/styles.xml",
        "word/numbering.xml",
        "[Content_Types].xml",
        "word/_rels/document.xml.rels",
        "_rels/.rels",
        "docProps/core.xml",
    ],
    "odt": ["content.xml", "styles.xml", "meta.xml", "META-INF/manifest.xml", "mimetype"],
    "fb2.zip": ["book.fb2"],
}


def mutate_member(data: bytes, fmt: str, draw: st.DataObject) -> bytes:
    entries = _entries(data)
    names = MEMBERS[fmt]
    roll = draw.draw(st.integers(0, 9))
    name = names[0] if roll < 6 else draw.draw(st.sampled_from(names))
    index = next(i for i, (info, _) in enumerate(entries) if info.filename == name)
    info, member = entries[index]
    if draw.draw(st.booleans()):
        member = mutate_bytes(member, draw, HOSTILE + INLINE)
    else:
        member = insert_tokens(member, "fb2", draw, benign=draw.draw(st.booleans()))
    entries[index] = (info, member)
    return _rezip(entries)


def set_numbers(data: bytes, fmt: str, draw: st.DataObject) -> bytes:
    """The number attributes the reader parses set to odd values: existing ones, or new ones
    put in."""
    entries = _entries(data)
    for _ in range(draw.draw(st.integers(1, 3), label="attributes")):
        value = draw.draw(st.sampled_from(NUMBERS)).encode()
        where = draw.draw(st.sampled_from(["existing", "new"]))
        if fmt == "docx":
            name = draw.draw(st.sampled_from(["word/document.xml", "word/styles.xml"]))
            pattern = rb'(w:(?:val|ilvl|numId)=")([^"]*)(")'
            new = [
                (rb"(<w:p>)", rb'\1<w:pPr><w:outlineLvl w:val="' + value + rb'"/></w:pPr>'),
                (rb"(<w:pPr>)", rb'\1<w:outlineLvl w:val="' + value + rb'"/>'),
                (rb'(<w:name w:val=")[^"]*(")', rb"\1heading " + value + rb"\2"),
                (rb'(w:styleId=")Heading\d(")', rb"\1Heading" + value + rb"\2"),
            ]
        elif fmt == "odt":
            name = "content.xml"
            pattern = rb'(text:(?:outline-level|c|level)=")([^"]*)(")'
            new = [
                (rb"(<text:p>)", rb'\1x<text:s text:c="' + value + rb'"/>y'),
                (rb"(<text:h )", rb'\1text:outline-level="' + value + rb'" '),
                (rb"(<text:p>)", rb'<text:h text:outline-level="' + value + rb'">H</text:h>\1'),
            ]
        else:
            return mutate_member(data, fmt, draw)
        index = next(i for i, (info, _) in enumerate(entries) if info.filename == name)
        info, member = entries[index]
        if where == "existing":
            found = list(re.finditer(pattern, member))
            if found:
                m = draw.draw(st.sampled_from(found))
                member = member[: m.start(2)] + value + member[m.end(2) :]
        else:
            regex, replacement = draw.draw(st.sampled_from(new))
            found = list(re.finditer(regex, member))
            if found:
                m = draw.draw(st.sampled_from(found))
                member = member[: m.start()] + m.expand(replacement) + member[m.end() :]
        entries[index] = (info, member)
    return _rezip(entries)


def mutate_pdf_objects(data: bytes, draw: st.DataObject) -> bytes:
    """References and numbers made to lie. New objects (from 90 on) go before the xref table,
    which then lies too: the parser's fallback finds them by scanning."""
    op = draw.draw(st.sampled_from(PDF_OBJECT_OPS), label="pdf op")
    extra = b""

    def sub(pattern: bytes, replacement: bytes) -> bytes:
        found = list(re.finditer(pattern, data))
        if not found:
            return data
        m = draw.draw(st.sampled_from(found))
        return data[: m.start()] + m.expand(replacement) + data[m.end() :]

    if op == "length_loop":
        data = sub(rb"/Length \d+", b"/Length 90 0 R")
        extra = b"90 0 obj\n91 0 R\nendobj\n91 0 obj\n90 0 R\nendobj\n"
    elif op == "length_self":
        data = sub(rb"/Length \d+", b"/Length 90 0 R")
        extra = b"90 0 obj\n90 0 R\nendobj\n"
    elif op == "length_missing":
        data = sub(rb"/Length \d+", b"/Length 95 0 R")
    elif op == "length_huge":
        data = sub(rb"/Length \d+", b"/Length " + draw.draw(st.sampled_from([b"9" * 30, b"1e99"])))
    elif op == "length_negative":
        data = sub(rb"/Length \d+", b"/Length -5")
    elif op == "kids_loop":
        data = sub(rb"/Kids \[ ", b"/Kids [ 15 0 R ")
    elif op == "parent_loop":
        data = sub(rb"/Parent 15 0 R", b"/Parent 6 0 R")
    elif op == "outline_loop":
        data = sub(rb"/Next \d+ 0 R", b"/Next 12 0 R")
        data = data.replace(b"/First 12 0 R", b"/First 12 0 R /Last 12 0 R", 1)
    elif op == "outline_count":
        data = sub(rb"/Count \d+", b"/Count " + draw.draw(st.sampled_from([b"-1", b"9" * 40])))
    elif op == "contents_loop":
        data = sub(rb"/Contents \d+ 0 R", b"/Contents 90 0 R")
        extra = b"90 0 obj\n91 0 R\nendobj\n91 0 obj\n90 0 R\nendobj\n"
    elif op == "root_loop":
        data = data.replace(b"/Root 9 0 R", b"/Root 90 0 R")
        extra = b"90 0 obj\n91 0 R\nendobj\n91 0 obj\n90 0 R\nendobj\n"
    elif op == "info_loop":
        data = data.replace(b"/Info 10 0 R", b"/Info 90 0 R")
        extra = b"90 0 obj\n90 0 R\nendobj\n"
    elif op == "xref_garbage":
        data = sub(
            rb"startxref\n\d+", b"startxref\n" + str(draw.draw(st.integers(0, 20000))).encode()
        )
    if extra:
        at = data.rfind(b"\nxref") + 1
        data = data[:at] + extra + data[at:]
    if draw.draw(st.booleans()):
        data = mutate_bytes(data, draw)
    return data


# --- one input ------------------------------------------------------------------------------

KINDS = {
    "txt": ["bytes", "benign", "benign", "hostile", "encoding"],
    "md": ["bytes", "benign", "benign", "hostile", "encoding"],
    "html": ["bytes", "benign", "benign", "hostile", "encoding"],
    "fb2": ["bytes", "benign", "benign", "hostile", "encoding"],
    "docx": ["bytes", "member", "member", "numbers", "numbers"],
    "odt": ["bytes", "member", "member", "numbers", "numbers"],
    "fb2.zip": ["bytes", "member", "member", "member"],
    "pdf": ["bytes", "objects", "objects"],
}


def fuzzed_input(fmt: str, seeds: dict[str, bytes], draw: st.DataObject) -> tuple[str, bytes]:
    """(the kind of mutation, the bytes) for one input in format `fmt`."""
    kind = draw.draw(st.sampled_from(KINDS[fmt]), label="kind")
    data = seeds[fmt]
    if kind == "bytes":
        return kind, mutate_bytes(data, draw)
    if kind in ("benign", "hostile"):
        return kind, insert_tokens(data, fmt, draw, benign=kind == "benign")
    if kind == "encoding":
        return kind, reencode(data, fmt, draw)
    if kind == "member":
        return kind, mutate_member(data, fmt, draw)
    if kind == "numbers":
        return kind, set_numbers(data, fmt, draw)
    return kind, mutate_pdf_objects(data, draw)


def check_input(fmt: str, kind: str, path: Path, last_words: list[str]) -> str:
    """Read the book at `path` and check what comes out; the outcome, to count."""
    started, wall = time.thread_time(), time.perf_counter()
    try:
        book = read_book(path, FILE_NAMES[fmt])
    except AudiopubError as error:
        message = str(error)
        assert message.strip() and "\n" not in message, f"message: {message!r}"
        assert kind != "encoding", f"refused in another encoding: {message}"
        outcome = f"{type(error).__name__}: {_stage(message)}"
    else:
        text = _check_book(book)
        outcome = "book"
        if kind in ("benign", "encoding", "numbers"):
            words = _words(text)
            assert _in_order(last_words, words), f"the end of the book is lost: {words[-20:]}"
        if kind == "encoding":
            folded = normalise_text(text).casefold()
            assert all(word in folded for word in ACCENTED_WORDS), "accented words misread"
            assert not MOJIBAKE.search(text), f"mojibake: {MOJIBAKE.search(text)}"
    cpu, elapsed = time.thread_time() - started, time.perf_counter() - wall
    assert cpu < CPU_SECONDS, f"{cpu:.1f} s of CPU for one input"
    if fmt == "pdf":
        assert elapsed < PDF_SECONDS, f"{elapsed:.1f} s for one PDF"
    return outcome


_BAD_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _check_book(book: Book) -> str:
    """The book's text, once chunked with its spoken forms and checked for bad characters."""
    assert isinstance(book, Book) and book.chapters
    language = book.language or "en"
    for chapter in book.chapters:
        for piece in (chapter.title, *chapter.paragraphs):
            bad = _BAD_CHARS.search(piece)
            assert not bad, f"{unicodedata.name(bad.group(), hex(ord(bad.group())))} in {piece!r}"
        chunk_paragraphs(chapter.paragraphs, 300, speak=lambda t: spoken_form(t, language))
    try:
        check_speakable(book, "en-US")
    except AudiopubError:
        pass  # mostly in another script: a refusal, not a failure
    return "\n".join(chapter.text for chapter in book.chapters)


def _in_order(wanted: list[str], words: list[str]) -> bool:
    it = iter(words)
    return all(word in it for word in wanted)


def _stage(message: str) -> str:
    """A message without its details, to count outcomes by kind."""
    message = message.split(": ", 1)[-1]
    for cut in (" (", ";", ":"):
        message = message.split(cut, 1)[0]
    return message[:60]


def fuzz(
    fmt: str,
    seeds: dict[str, bytes],
    last_words: list[str],
    path: Path,
    examples: int,
    check: Callable[[str, str, Path, list[str]], str] = check_input,
) -> Counter[str]:
    """Run `examples` fuzzed inputs of format `fmt` through `check`; the outcomes counted."""
    stats: Counter[str] = Counter()
    phases = [Phase.explicit, Phase.generate]
    if fmt != "pdf":  # a PDF is a process per read: a failing one is shown as found
        phases.append(Phase.shrink)

    @seed(SEED)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=phases,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data())
    def run(draw: st.DataObject) -> None:
        kind, data = fuzzed_input(fmt, seeds, draw)
        path.write_bytes(data)
        stats[f"{kind} → {check(fmt, kind, path, last_words)}"] += 1
        stats["inputs"] += 1

    run()
    return stats


@pytest.mark.parametrize("fmt", [*TEXT_FORMATS, *ZIP_FORMATS])
def test_fuzz_a_reader(
    fmt: str, seeds: dict[str, bytes], last_words: list[str], tmp_path: Path
) -> None:
    started = time.thread_time()
    stats = fuzz(fmt, seeds, last_words, tmp_path / FILE_NAMES[fmt], EXAMPLES)
    _report(fmt, stats, time.thread_time() - started)
    assert stats["inputs"] >= min(EXAMPLES, 50)
    # Most mutations must still give a book, or they test the refusals only.
    books = sum(n for k, n in stats.items() if k.endswith("→ book"))
    assert books >= 0.2 * stats["inputs"]


def _is_page_reader(process: psutil.Process) -> bool:
    try:
        return any("pdf_pages" in part for part in process.cmdline())
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False


def test_fuzz_the_pdf_reader(
    seeds: dict[str, bytes],
    last_words: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(audiopub_settings, "PDF_MAX_SECONDS", PDF_TIME_LIMIT)
    started = time.perf_counter()
    stats = fuzz("pdf", seeds, last_words, tmp_path / "book.pdf", PDF_EXAMPLES)
    # Only the PDF page readers: other tests of this worker may keep processes of their own.
    left = [p for p in psutil.Process().children(recursive=True) if _is_page_reader(p)]
    assert not left, f"PDF page readers left running: {left}"
    _report("pdf", stats, time.perf_counter() - started)
    assert stats["inputs"] >= min(PDF_EXAMPLES, 10)


def _report(fmt: str, stats: Counter[str], took: float) -> None:
    print(f"\n{fmt}: fuzzed {stats['inputs']} inputs in {took:.1f} s")
    for outcome, count in sorted(stats.items(), key=lambda kv: -kv[1]):
        print(f"  {count:5}  {outcome}")
