"""Tests for audiopub.book.epub.reader: real public-domain EPUBs and small hand-made ones."""

from __future__ import annotations

import re
import zipfile
from functools import cache
from pathlib import Path

import pytest
from epub_factory import (
    build_epub,
    build_fixed_layout_epub,
    build_frankenstein_like,
    with_metadata,
)

from audiopub.book.epub.reader import read_epub
from audiopub.book.models import Book, BookDetails, Cover
from audiopub.errors import BadEpub

DATA = Path(__file__).parent / "data" / "epubs"
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 64
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@cache
def real(name: str) -> Book:
    return read_epub(DATA / name)


def sherlock() -> Book:
    return real("pg1661-adventures-of-sherlock-holmes.epub")


def war_of_the_worlds() -> Book:
    return real("se-war-of-the-worlds.epub")


def poe() -> Book:
    return real("se-poe-poetry.epub")


def just_so() -> Book:
    return real("pg2781-just-so-stories.epub")


def leaves() -> Book:
    return real("pg1322-leaves-of-grass-calibre.epub")


def all_text(book: Book) -> str:
    return "\n\n".join(chapter.text for chapter in book.chapters)


def chapter(book: Book, title: str):
    return next(c for c in book.chapters if c.title == title)


# --- The Adventures of Sherlock Holmes: EPUB2, NCX only, anchors, PG boilerplate ------------

SHERLOCK_STORIES = [
    "I. A SCANDAL IN BOHEMIA",
    "II. THE RED-HEADED LEAGUE",
    "III. A CASE OF IDENTITY",
    "IV. THE BOSCOMBE VALLEY MYSTERY",
    "V. THE FIVE ORANGE PIPS",
    "VI. THE MAN WITH THE TWISTED LIP",
    "VII. THE ADVENTURE OF THE BLUE CARBUNCLE",
    "VIII. THE ADVENTURE OF THE SPECKLED BAND",
    "IX. THE ADVENTURE OF THE ENGINEER’S THUMB",
    "X. THE ADVENTURE OF THE NOBLE BACHELOR",
    "XI. THE ADVENTURE OF THE BERYL CORONET",
    "XII. THE ADVENTURE OF THE COPPER BEECHES",
]


def test_sherlock_metadata() -> None:
    book = sherlock()
    assert book.title == "The Adventures of Sherlock Holmes"
    assert book.authors == ("Arthur Conan Doyle",)
    assert book.language == "en"
    assert book.cover is not None and book.cover.media_type == "image/jpeg"
    assert book.cover.data.startswith(b"\xff\xd8\xff") and len(book.cover.data) == 124094


def test_sherlock_has_the_twelve_stories_after_the_title_page() -> None:
    book = sherlock()
    # The title page (the first NCX entry, after the PG header) opens the book.
    assert [c.title for c in book.chapters] == [
        "The Adventures of Sherlock Holmes",
        *SHERLOCK_STORIES,
    ]
    assert book.chapters[0].paragraphs == (
        "The Adventures of Sherlock Holmes",
        "by Arthur Conan Doyle",
    )
    assert [c.index for c in book.chapters] == list(range(13))


def test_sherlock_story_text_and_its_numbered_parts() -> None:
    scandal = sherlock().chapters[1]
    assert scandal.paragraphs[0] == "I. A SCANDAL IN BOHEMIA"  # <h2>I.<br/>A SCANDAL…</h2>
    assert scandal.paragraphs[2].startswith("To Sherlock Holmes she is always the woman.")
    # The NCX sub-entries "I.", "II.", "III." are parts of the story, not chapters.
    assert {"I.", "II.", "III."} <= set(scandal.paragraphs)
    assert "Wherever she is, I think that she would tell you" not in sherlock().chapters[2].text
    last = sherlock().chapters[-1]
    assert last.paragraphs[-1].endswith("she has met with considerable success.")


def test_sherlock_narrates_no_licence_header_or_contents() -> None:
    book = sherlock()
    text = all_text(book)
    for boilerplate in (
        "Gutenberg",
        "START OF THE",
        "END OF THE",
        "LICENSE",
        "ILLUSTRATED EDITION",
        "A Scandal in Bohemia",
    ):  # the last is the printed contents' spelling
        assert boilerplate not in text
    assert "Contents" not in [c.title for c in book.chapters]
    assert book.warnings == ()
    assert 540_000 < book.char_count < 560_000


# --- The War of the Worlds: EPUB3 nav, nested three deep, SVG cover ------------------------


def test_war_of_the_worlds_metadata_and_cover_from_inside_the_svg() -> None:
    book = war_of_the_worlds()
    assert book.title == "The War of the Worlds"
    assert book.authors == ("H. G. Wells",)  # the contributors (artist, producers) are not
    assert book.language == "en-GB"
    # The manifest's cover-image is an SVG; the JPEG embedded in it as a data: URI is used.
    assert book.cover is not None and book.cover.media_type == "image/jpeg"
    assert book.cover.data.startswith(b"\xff\xd8\xff") and len(book.cover.data) > 100_000
    with zipfile.ZipFile(DATA / "se-war-of-the-worlds.epub") as zf:
        assert zf.read("epub/images/cover.svg").startswith(b"<?xml")


def test_war_of_the_worlds_chapters_from_the_nested_nav() -> None:
    titles = [c.title for c in war_of_the_worlds().chapters]
    assert titles[:6] == [
        "Titlepage",
        "Dedication",
        "Epigraph",
        "Book I: The Coming of the Martians",
        "I: The Eve of the War",
        "II: The Falling Star",
    ]
    assert "XVII: The Thunder Child" in titles  # label with <i> inside
    assert titles[titles.index("XVII: The Thunder Child") + 1 :][:2] == [
        "Book II: The Earth Under the Martians",
        "I: Under Foot",
    ]
    assert titles[-1] == "X: The Epilogue"
    assert len(titles) == 32
    # Skipped: the half-title page, imprint, colophon and uncopyright.
    assert not {"The War of the Worlds", "Imprint", "Colophon", "Uncopyright"} & set(titles)


def test_war_of_the_worlds_text_is_clean() -> None:
    book = war_of_the_worlds()
    text = all_text(book)
    assert "\u2060" not in text and "\xad" not in text
    assert "Standard Ebooks" not in text and "CC0" not in text
    eve = chapter(book, "I: The Eve of the War")
    assert eve.paragraphs[0] == "I: The Eve of the War"  # the <hgroup> as one heading
    assert eve.paragraphs[1].startswith("No one would have believed in the last years")
    assert chapter(book, "Titlepage").paragraphs == ("The War of the Worlds", "By H. G. Wells.")
    assert book.warnings == ()


# --- Poe's Poetry: 53 poems in one file, noterefs, verse --------------------------------------


def test_poe_metadata() -> None:
    book = poe()
    assert book.title == "Poetry"
    assert book.authors == ("Edgar Allan Poe",)  # the annotator (role "ann") is not an author
    assert book.language == "en-US"
    assert book.cover is not None and book.cover.media_type == "image/jpeg"


def test_poe_poems_are_split_at_the_anchors_in_poetry_xhtml() -> None:
    book = poe()
    titles = [c.title for c in book.chapters]
    assert len(titles) == 54  # the title page and 53 poems
    assert titles[:4] == ["Titlepage", "Tamerlane", "Song", "Dreams"]
    assert titles[-1] == "To Frances S. Osgood"
    # Sub-entries "I", "II"… are numbered parts of a poem, not chapters of their own.
    assert not any(re.fullmatch(r"[IVX]+", t) for t in titles)
    raven = chapter(book, "The Raven")
    assert "Quoth the Raven" in raven.text
    assert "It was many and many a year ago" not in raven.text
    assert "It was many and many a year ago" in chapter(book, "Annabel Lee").text


def test_poe_noterefs_and_endnotes_are_not_read() -> None:
    book = poe()
    tamerlane = chapter(book, "Tamerlane")
    assert tamerlane.paragraphs[0] == "Tamerlane"  # the heading was "Tamerlane<a>1</a>"
    dreams = chapter(book, "Dreams")
    assert "Inclines of my imaginary apart From mine own home" in dreams.text  # was "apart2"
    assert "Zeno and other sages" in all_text(book)
    assert "suppressed volume" not in all_text(book)  # endnote 1


def test_poe_stanza_is_one_paragraph_with_lines_joined() -> None:
    stanza = chapter(poe(), "Tamerlane").paragraphs[1]
    assert stanza.startswith("Kind solace in a dying hour! Such, father, is not (now) my theme")
    assert stanza.endswith("But such is not a gift of thine.")


# --- Just So Stories: nav + NCX, 13 entries in one file -----------------------------------


JUST_SO_STORIES = [
    "HOW THE WHALE GOT HIS THROAT",
    "HOW THE CAMEL GOT HIS HUMP",
    "HOW THE RHINOCEROS GOT HIS SKIN",
    "HOW THE LEOPARD GOT HIS SPOTS",
    "THE ELEPHANT’S CHILD",
    "THE SING-SONG OF OLD MAN KANGAROO",
    "THE BEGINNING OF THE ARMADILLOS",
    "HOW THE FIRST LETTER WAS WRITTEN",
    "HOW THE ALPHABET WAS MADE",
    "THE CRAB THAT PLAYED WITH THE SEA",
    "THE CAT THAT WALKED BY HIMSELF",
    "THE BUTTERFLY THAT STAMPED",
]


def test_just_so_metadata() -> None:
    book = just_so()
    assert book.title == "Just so stories"  # as the OPF has it
    assert book.authors == ("Rudyard Kipling",)
    assert book.language == "en"
    assert book.cover is not None and book.cover.media_type == "image/png"


def test_just_so_stories_split_at_the_pgepubid_anchors() -> None:
    book = just_so()
    assert [c.title for c in book.chapters] == ["JUST SO STORIES", *JUST_SO_STORIES]
    assert book.chapters[0].paragraphs == ("JUST SO STORIES", "By Rudyard Kipling")
    whale = chapter(book, "HOW THE WHALE GOT HIS THROAT")
    assert whale.paragraphs[1].startswith("IN the sea, once upon a time, O my Best Beloved")
    assert "Camel" not in whale.text
    # The sentence-long sub-entry sits right under the Camel heading: it is part of that story.
    camel = chapter(book, "HOW THE CAMEL GOT HIS HUMP")
    assert camel.paragraphs[:2] == (
        "HOW THE CAMEL GOT HIS HUMP",
        "NOW this is the next tale, and it tells how the Camel got his big hump.",
    )
    assert "Humph!" in camel.text


def test_just_so_narrates_no_boilerplate() -> None:
    text = all_text(just_so())
    assert "Gutenberg" not in text and "Contents" not in text
    assert just_so().warnings == ()


# --- Leaves of Grass: calibre, flat NCX of 376 entries, percent-encoded hrefs ---------------


def test_leaves_of_grass() -> None:
    book = leaves()
    assert (book.title, book.authors, book.language) == ("Leaves of Grass", ("Walt Whitman",), "en")
    assert book.cover is not None and book.cover.media_type == "image/jpeg"
    # Every %40-encoded href resolved: one chapter per NCX entry, the mislabelled one as is.
    assert len(book.chapters) == 376
    assert book.chapters[0].title == "LEAVES OF GRASS"
    assert "Come, said my soul," in book.chapters[0].text  # before the printed contents
    assert "BOOKXXXV. GOOD-BYE MY FANCY" in [c.title for c in book.chapters]
    text = all_text(book)
    assert "Gutenberg" not in text and "Produced by" not in text
    assert "\xa0" not in text and "  " not in text
    song = chapter(book, "BOOK III")
    assert song.paragraphs[:3] == ("BOOK III", "Song of Myself", "1")
    assert song.paragraphs[3].startswith("I celebrate myself, and sing myself, And what I assume")
    assert book.chapters[-1].paragraphs[-1].endswith("hail! my Fancy.")


# --- front matter: listed, not narrated by default -----------------------------------------


def unticked(book: Book) -> list[str]:
    return [c.title for c in book.chapters if c.index + 1 not in book.default_selection]


def test_a_title_split_over_two_toc_entries_is_front_matter(tmp_path: Path) -> None:
    book = read_epub(build_frankenstein_like(tmp_path / "pg84.epub"))
    assert [(c.title, c.char_count) for c in book.chapters] == [
        ("Frankenstein;", 13),
        ("or, the Modern Prometheus", 64),
        ("Letter 1", 207),
        ("Chapter 1", 99),
    ]
    assert [c.front_matter for c in book.chapters] == [True, True, False, False]
    assert book.default_selection == [3, 4]
    assert Book.from_dict(book.to_dict()).default_selection == [3, 4]


def test_the_real_books_tick_their_chapters_and_not_their_title_pages() -> None:
    # The half-title ("The War of the Worlds" alone) is not even listed: it is never narrated.
    # Part pages ("Book I: …") hold only a heading but announce the part: they stay ticked, as
    # does the epigraph, which a narrator reads.
    assert unticked(war_of_the_worlds()) == ["Titlepage", "Dedication"]
    assert war_of_the_worlds().default_selection[:3] == [3, 4, 5]
    assert [war_of_the_worlds().chapters[i - 1].title for i in (3, 4, 5)] == [
        "Epigraph",
        "Book I: The Coming of the Martians",
        "I: The Eve of the War",
    ]
    assert unticked(poe()) == ["Titlepage"]
    assert unticked(sherlock()) == ["The Adventures of Sherlock Holmes"]
    assert unticked(just_so()) == ["JUST SO STORIES"]
    # Its title page also holds a poem: that is more than a title.
    assert unticked(leaves()) == []
    for book in (war_of_the_worlds(), poe(), sherlock(), just_so(), leaves()):
        assert all(
            c.index + 1 in book.default_selection for c in book.chapters if c.char_count > 200
        )  # every real chapter stays ticked


def test_front_matter_by_its_epub_type_and_a_book_of_only_that(tmp_path: Path) -> None:
    files = {
        "title.xhtml": xhtml(
            '<section epub:type="titlepage"><h1>A Book</h1>'
            "<p>Printed for the Author, 1820</p></section>"
        ),
        "ded.xhtml": xhtml('<section epub:type="dedication"><p>To my mother.</p></section>'),
        "c1.xhtml": xhtml("<h2>One</h2><p>The story begins.</p>"),
        "nav.xhtml": nav(
            '<li><a href="title.xhtml">Title</a></li>'
            '<li><a href="ded.xhtml">For her</a></li>'
            '<li><a href="c1.xhtml">One</a></li>'
        ),
    }
    book = read_epub(
        make_epub(
            tmp_path / "b.epub",
            files,
            ["title.xhtml", "ded.xhtml", "c1.xhtml"],
            properties={"nav.xhtml": "nav"},
        )
    )
    assert [c.front_matter for c in book.chapters] == [True, True, False]
    assert book.default_selection == [3]
    # A book that is nothing but front matter is narrated whole rather than not at all.
    only = read_epub(
        make_epub(
            tmp_path / "only.epub",
            files,
            ["title.xhtml", "ded.xhtml"],
            properties={"nav.xhtml": "nav"},
        )
    )
    assert only.default_selection == [1, 2]


# --- small hand-made EPUBs -----------------------------------------------------------------


def xhtml(body: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">'
        f"<head><title>x</title></head><body>{body}</body></html>"
    )


def nav(items: str) -> str:
    return xhtml(f'<nav epub:type="toc"><h1>Contents</h1><ol>{items}</ol></nav>')


def ncx(points: list[tuple[str, str]]) -> str:
    body = "".join(
        f'<navPoint id="p{i}"><navLabel><text>{label}</text></navLabel>'
        f'<content src="{src}"/></navPoint>'
        for i, (label, src) in enumerate(points)
    )
    return (
        '<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" '
        'version="2005-1"><head/><docTitle><text>x</text></docTitle>'
        f"<navMap>{body}</navMap></ncx>"
    )


CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" '
    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)
MEDIA_TYPES = {
    "xhtml": "application/xhtml+xml",
    "ncx": "application/x-dtbncx+xml",
    "jpg": "image/jpeg",
    "png": "image/png",
    "svg": "image/svg+xml",
    "css": "text/css",
}


def make_epub(
    path: Path,
    files: dict[str, str | bytes],
    spine: list[str],
    *,
    metadata: str = "<dc:title>Test Book</dc:title><dc:creator>Ann Author</dc:creator>"
    "<dc:language>en</dc:language>",
    properties: dict[str, str] | None = None,
    version: str = "3.0",
) -> Path:
    """An EPUB with `files` under OEBPS/ (all in the manifest, id = file name with / → _).

    A spine name ending in "!" is linear="no". `properties` sets manifest properties by name.
    """
    properties = properties or {}
    ids = {name: re.sub(r"[^A-Za-z0-9]", "_", name) for name in files}
    manifest = "".join(
        f'<item id="{ids[name]}" href="{name}" media-type="{MEDIA_TYPES[name.rsplit(".", 1)[1]]}"'
        + (f' properties="{properties[name]}"' if name in properties else "")
        + "/>"
        for name in files
    )
    ncx_id = next((ids[n] for n in files if n.endswith(".ncx")), None)
    spine_toc = f' toc="{ncx_id}"' if ncx_id else ""
    itemrefs = "".join(
        f'<itemref idref="{ids[n.rstrip("!")]}"'
        + (' linear="no"' if n.endswith("!") else "")
        + "/>"
        for n in spine
    )
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" '
        f'version="{version}" unique-identifier="uid">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:opf="http://www.idpf.org/2007/opf">'
        f'<dc:identifier id="uid">test</dc:identifier>{metadata}</metadata>'
        f"<manifest>{manifest}</manifest><spine{spine_toc}>{itemrefs}</spine></package>"
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        zf.writestr("META-INF/container.xml", CONTAINER)
        zf.writestr("OEBPS/content.opf", opf)
        for name, content in files.items():
            zf.writestr(f"OEBPS/{name}", content)
    return path


def test_epub2_ncx_with_anchors_inside_a_file(tmp_path: Path) -> None:
    one = xhtml(
        '<h1 id="c1">Chapter One</h1><p>First text.</p>'
        '<p><a id="c2"></a></p><h2>Chapter Two</h2><p>Second <b>text</b>.</p>'
        '<div id="c3"><h2>Chapter Three</h2><p>Third text.</p></div>'
    )
    two = xhtml("<h1>Chapter Four</h1><p>Fourth text.</p>")
    toc = ncx(
        [
            ("One", "text/one.xhtml#c1"),
            ("Two", "text/one.xhtml#c2"),
            ("Three", "text/one.xhtml#c3"),
            ("Four", "text/two.xhtml"),
        ]
    )
    book = read_epub(
        make_epub(
            tmp_path / "b.epub",
            {"text/one.xhtml": one, "text/two.xhtml": two, "toc.ncx": toc},
            ["text/one.xhtml", "text/two.xhtml"],
            version="2.0",
        )
    )
    assert [(c.title, c.paragraphs) for c in book.chapters] == [
        ("One", ("Chapter One", "First text.")),
        ("Two", ("Chapter Two", "Second text.")),
        ("Three", ("Chapter Three", "Third text.")),
        ("Four", ("Chapter Four", "Fourth text.")),
    ]


def test_epub3_nav_two_chapters_in_one_file_and_encoded_hrefs(tmp_path: Path) -> None:
    doc = xhtml(
        '<section id="a"><h2>Alpha</h2><p>Alpha text.</p></section>'
        '<section id="b@2"><h2>Beta</h2><p>Beta text.</p></section>'
    )
    toc = nav(
        '<li><a href="../text/my%20book.xhtml#a">Alpha</a></li>'
        '<li><a href="../text/my%20book.xhtml#b%402">Beta</a></li>'
    )
    book = read_epub(
        make_epub(
            tmp_path / "b.epub",
            {"nav/nav.xhtml": toc, "text/my book.xhtml": doc},
            ["nav/nav.xhtml", "text/my book.xhtml"],
            properties={"nav/nav.xhtml": "nav"},
        )
    )
    # The nav document is in the spine but is not narrated.
    assert [(c.title, c.text) for c in book.chapters] == [
        ("Alpha", "Alpha\n\nAlpha text."),
        ("Beta", "Beta\n\nBeta text."),
    ]


def test_nested_nav_is_flattened_in_reading_order(tmp_path: Path) -> None:
    files = {f"c{i}.xhtml": xhtml(f"<h1>H{i}</h1><p>Text {i}.</p>") for i in range(1, 4)}
    files["nav.xhtml"] = nav(
        '<li><span>Part One</span><ol><li><a href="c1.xhtml">One</a></li>'
        '<li><a href="c2.xhtml">Two</a></li></ol></li>'
        '<li><a href="c3.xhtml">Three</a></li>'
    )
    book = read_epub(
        make_epub(
            tmp_path / "b.epub",
            files,
            ["c1.xhtml", "c2.xhtml", "c3.xhtml"],
            properties={"nav.xhtml": "nav"},
        )
    )
    assert [c.title for c in book.chapters] == ["One", "Two", "Three"]


def test_linear_no_and_image_only_documents_are_skipped(tmp_path: Path) -> None:
    files = {
        "cover.xhtml": xhtml('<div><img src="cover.jpg" alt="Cover"/></div>'),
        "notes.xhtml": xhtml("<h1>Notes</h1><p>A note nobody should hear in line.</p>"),
        "c1.xhtml": xhtml("<h1>One</h1><p>Story.</p>"),
        "cover.jpg": JPEG,
        "nav.xhtml": nav(
            '<li><a href="c1.xhtml">One</a></li><li><a href="notes.xhtml">Notes</a></li>'
        ),
    }
    book = read_epub(
        make_epub(
            tmp_path / "b.epub",
            files,
            ["cover.xhtml", "c1.xhtml", "notes.xhtml!"],
            properties={"nav.xhtml": "nav"},
        )
    )
    assert [c.title for c in book.chapters] == ["One"]
    assert "note" not in all_text(book)
    assert book.cover == Cover(JPEG, "image/jpeg")  # no cover metadata: found by its name


def test_text_before_the_first_toc_entry_becomes_a_chapter(tmp_path: Path) -> None:
    files = {
        "title.xhtml": xhtml("<h1>The Book</h1><p>by Somebody</p>"),
        "c1.xhtml": xhtml("<h1>One</h1><p>Story.</p>"),
        "nav.xhtml": nav('<li><a href="c1.xhtml">One</a></li>'),
    }
    book = read_epub(
        make_epub(
            tmp_path / "b.epub", files, ["title.xhtml", "c1.xhtml"], properties={"nav.xhtml": "nav"}
        )
    )
    assert [(c.title, c.paragraphs) for c in book.chapters] == [
        ("The Book", ("The Book", "by Somebody")),
        ("One", ("One", "Story.")),
    ]


def test_unspoken_markup_is_dropped(tmp_path: Path) -> None:
    body = (
        "<script>var x = 1;</script><style>p { color: red }</style>"
        '<h1>Heading <span epub:type="pagebreak" id="p1" title="1"/>One</h1>'
        '<p>Word<a epub:type="noteref" href="notes.xhtml#n1">1</a> and'
        '<sup><a href="notes.xhtml#n2">2</a></sup> more<a href="#n3">[3]</a> words'
        '<span class="pagenum"><a id="page_7">[Pg 7]</a></span> here.</p>'
        '<p role="doc-pagebreak">12</p>'
        '<p><ruby>漢<rt>kan</rt></ruby> and <img src="x.png" alt="a picture"/>'
        '<svg xmlns="http://www.w3.org/2000/svg"><text>svg text</text></svg>done.</p>'
        "<p>Soft\u00adhy\u00adphen, joi\u2060ner, non&#160;breaking, "
        "named&nbsp;entity&mdash;ok.</p>"
        '<aside epub:type="footnote" id="n3"><p>An inline footnote.</p></aside>'
        '<div class="footnote"><p><a id="f1" href="#r1">[1]</a> A PG footnote.</p></div>'
    )
    files = {"c1.xhtml": xhtml(body), "nav.xhtml": nav('<li><a href="c1.xhtml">One</a></li>')}
    chapter_ = read_epub(
        make_epub(tmp_path / "b.epub", files, ["c1.xhtml"], properties={"nav.xhtml": "nav"})
    ).chapters[0]
    # An SVG inside a sentence is read in its place (fixed-layout books set their text in SVG).
    assert chapter_.paragraphs[:3] == (
        "Heading One",
        "Word and more words here.",
        "漢 and svg text done.",
    )
    assert chapter_.paragraphs[3].startswith("Softhyphen, joiner, non breaking, named entity")
    assert "footnote" not in chapter_.text and "12" not in chapter_.text


def test_headings_verse_and_blocks_become_paragraphs(tmp_path: Path) -> None:
    body = (
        "<hgroup><h2>Book I</h2><p>The Start</p></hgroup>"
        '<div class="poem"><p><span>First line,</span><br/><span>second line.</span></p>'
        "<p>Stanza two<br/><br/>after a blank line.</p></div>"
        "<div>Direct text in a div<p>then a paragraph</p>and a tail.</div>"
        "<ul><li>Item one</li><li>Item   two\n spans  lines</li></ul>"
        "<blockquote>Quoted<br/>lines.</blockquote>"
    )
    files = {"c1.xhtml": xhtml(body), "nav.xhtml": nav('<li><a href="c1.xhtml">Book I</a></li>')}
    book = read_epub(
        make_epub(tmp_path / "b.epub", files, ["c1.xhtml"], properties={"nav.xhtml": "nav"})
    )
    assert book.chapters[0].paragraphs == (
        "Book I: The Start",
        "First line, second line.",
        "Stanza two",
        "after a blank line.",
        "Direct text in a div",
        "then a paragraph",
        "and a tail.",
        "Item one",
        "Item two spans lines",
        "Quoted lines.",
    )


def test_printed_contents_is_skipped_but_the_page_around_it_is_not(tmp_path: Path) -> None:
    contents = "".join(f'<p><a href="c{i}.xhtml">Chapter {i}</a></p>' for i in range(1, 4))
    files = {
        "front.xhtml": xhtml(
            f"<h1>A Book</h1><p>An opening poem line.</p><h2>Contents</h2><div>{contents}</div>"
        ),
        **{f"c{i}.xhtml": xhtml(f"<h1>Chapter {i}</h1><p>Text {i}.</p>") for i in range(1, 4)},
        "nav.xhtml": nav(
            "".join(f'<li><a href="c{i}.xhtml">Chapter {i}</a></li>' for i in range(1, 4))
        ),
    }
    book = read_epub(
        make_epub(
            tmp_path / "b.epub",
            files,
            ["front.xhtml", "c1.xhtml", "c2.xhtml", "c3.xhtml"],
            properties={"nav.xhtml": "nav"},
        )
    )
    assert book.chapters[0].paragraphs == ("A Book", "An opening poem line.")
    assert [c.title for c in book.chapters] == ["A Book", "Chapter 1", "Chapter 2", "Chapter 3"]


def test_numbered_and_heading_only_sub_entries_do_not_split(tmp_path: Path) -> None:
    doc = xhtml(
        '<h2 id="s">STORY</h2><h3 id="sub">A sentence-long sub-heading.</h3><p>Start.</p>'
        '<h3 id="s2">II.</h3><p>Second part.</p>'
        '<h2 id="t">NEXT</h2><p>Next story.</p>'
    )
    toc = nav(
        '<li><a href="c.xhtml#s">STORY</a><ol>'
        '<li><a href="c.xhtml#sub">A sentence-long sub-heading.</a></li>'
        '<li><a href="c.xhtml#s2">II.</a></li></ol></li>'
        '<li><a href="c.xhtml#t">NEXT</a></li>'
    )
    book = read_epub(
        make_epub(
            tmp_path / "b.epub",
            {"c.xhtml": doc, "nav.xhtml": toc},
            ["c.xhtml"],
            properties={"nav.xhtml": "nav"},
        )
    )
    assert [(c.title, c.paragraphs) for c in book.chapters] == [
        ("STORY", ("STORY", "A sentence-long sub-heading.", "Start.", "II.", "Second part.")),
        ("NEXT", ("NEXT", "Next story.")),
    ]


def test_empty_chapters_are_dropped_with_a_warning(tmp_path: Path) -> None:
    files = {
        "pic.xhtml": xhtml('<h1><img src="p.png" alt=""/></h1>'),
        "c1.xhtml": xhtml("<h1>One</h1><p>Story.</p>"),
        "p.png": PNG,
        "nav.xhtml": nav(
            '<li><a href="pic.xhtml">Frontispiece</a></li><li><a href="c1.xhtml">One</a></li>'
        ),
    }
    book = read_epub(
        make_epub(
            tmp_path / "b.epub", files, ["pic.xhtml", "c1.xhtml"], properties={"nav.xhtml": "nav"}
        )
    )
    assert [c.title for c in book.chapters] == ["One"]
    assert len(book.warnings) == 1 and "Frontispiece" in book.warnings[0]


def test_no_toc_gives_one_chapter_per_document(tmp_path: Path) -> None:
    files = {f"c{i}.xhtml": xhtml(f"<h1>Heading {i}</h1><p>Text {i}.</p>") for i in (1, 2)}
    book = read_epub(make_epub(tmp_path / "b.epub", files, ["c1.xhtml", "c2.xhtml"]))
    assert [c.title for c in book.chapters] == ["Heading 1", "Heading 2"]


def test_slightly_invalid_xhtml_is_recovered(tmp_path: Path) -> None:
    broken = (
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>One</h1>'
        "<p>Unclosed paragraph<p>Another &amp; more</body></html>"
    )
    book = read_epub(make_epub(tmp_path / "b.epub", {"c1.xhtml": broken}, ["c1.xhtml"]))
    assert "Unclosed paragraph" in book.chapters[0].text
    assert "Another & more" in book.chapters[0].text


def test_metadata_roles_and_fallbacks(tmp_path: Path) -> None:
    metadata = (
        "<dc:title>  Spaced\n  Title </dc:title>"
        '<dc:creator id="a1">First Author</dc:creator>'
        '<meta refines="#a1" property="role" scheme="marc:relators">aut</meta>'
        '<dc:creator id="t1">A Translator</dc:creator>'
        '<meta refines="#t1" property="role" scheme="marc:relators">trl</meta>'
        '<dc:creator opf:role="ill">An Illustrator</dc:creator>'
        "<dc:creator>Second Author</dc:creator>"
    )
    files = {"c1.xhtml": xhtml("<p>Text.</p>")}
    book = read_epub(make_epub(tmp_path / "b.epub", files, ["c1.xhtml"], metadata=metadata))
    assert book.title == "Spaced Title"
    assert book.authors == ("First Author", "Second Author")
    assert book.language is None and book.cover is None
    untitled = read_epub(make_epub(tmp_path / "my-book.epub", files, ["c1.xhtml"], metadata=""))
    assert (untitled.title, untitled.authors) == ("my-book", ())


def test_epub2_cover_meta_and_svg_cover_by_href(tmp_path: Path) -> None:
    files = {"c1.xhtml": xhtml("<p>Text.</p>"), "img/front.png": PNG}
    meta = '<dc:title>T</dc:title><meta name="cover" content="img_front_png"/>'
    book = read_epub(make_epub(tmp_path / "a.epub", files, ["c1.xhtml"], metadata=meta))
    assert book.cover is not None and (book.cover.media_type, book.cover.data) == ("image/png", PNG)

    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<image xlink:href="../img/front.png"/></svg>'
    )
    files = {"c1.xhtml": xhtml("<p>Text.</p>"), "img/front.png": PNG, "images/c.svg": svg}
    book = read_epub(
        make_epub(
            tmp_path / "b.epub", files, ["c1.xhtml"], properties={"images/c.svg": "cover-image"}
        )
    )
    assert book.cover is not None and book.cover.data == PNG

    files = {
        "c1.xhtml": xhtml("<p>Text.</p>"),
        "images/c.svg": '<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>',
    }
    book = read_epub(
        make_epub(
            tmp_path / "c.epub", files, ["c1.xhtml"], properties={"images/c.svg": "cover-image"}
        )
    )
    assert book.cover is None  # a vector-only cover has no raster to offer


def test_unusable_nav_falls_back_to_the_ncx(tmp_path: Path) -> None:
    files = {
        "c1.xhtml": xhtml("<h1>A</h1><p>a</p>"),
        "c2.xhtml": xhtml("<h1>B</h1><p>b</p>"),
        "nav.xhtml": xhtml('<nav epub:type="toc"><p>No list here.</p></nav>'),
        "toc.ncx": ncx([("First", "c1.xhtml"), ("Second", "c2.xhtml#no-such-id")]),
    }
    book = read_epub(
        make_epub(
            tmp_path / "b.epub", files, ["c1.xhtml", "c2.xhtml"], properties={"nav.xhtml": "nav"}
        )
    )
    # An id that isn't in the file starts the chapter at the top of the file.
    assert [(c.title, c.paragraphs) for c in book.chapters] == [
        ("First", ("A", "a")),
        ("Second", ("B", "b")),
    ]


def test_old_style_name_anchor_in_mid_paragraph_cuts_after_it(tmp_path: Path) -> None:
    doc = xhtml('<h2>One</h2><p>Text<a name="two"></a> goes on.</p><h2>Two</h2><p>More.</p>')
    toc = nav('<li><a href="c.xhtml">One</a></li><li><a href="c.xhtml#two">Two</a></li>')
    book = read_epub(
        make_epub(
            tmp_path / "b.epub",
            {"c.xhtml": doc, "nav.xhtml": toc},
            ["c.xhtml"],
            properties={"nav.xhtml": "nav"},
        )
    )
    assert [c.paragraphs for c in book.chapters] == [("One", "Text goes on."), ("Two", "More.")]


def test_books_from_the_shared_test_factory(tmp_path: Path) -> None:
    from epub_factory import build_epub, tiny_png

    path = build_epub(
        tmp_path / "f.epub",
        [("Chapter One", ["Hello there.", "Second."]), ("Chapter Two", ["More."])],
        cover=tiny_png(),
    )
    book = read_epub(path)
    assert (book.title, book.authors, book.language) == ("A Small Book", ("Ann Author",), "en")
    assert [(c.title, c.paragraphs) for c in book.chapters] == [
        ("Chapter One", ("Chapter One", "Hello there.", "Second.")),
        ("Chapter Two", ("Chapter Two", "More.")),
    ]
    assert book.cover == Cover(tiny_png(), "image/png")


# --- errors --------------------------------------------------------------------------------


def test_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "notes.epub"
    path.write_text("just some text")
    with pytest.raises(BadEpub, match=r"notes\.epub: not an EPUB \(it is not a zip archive\)"):
        read_epub(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BadEpub, match=r"gone\.epub: the file can't be opened"):
        read_epub(tmp_path / "gone.epub")


def test_zip_without_container_or_opf(tmp_path: Path) -> None:
    path = tmp_path / "bare.epub"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("chapter.xhtml", xhtml("<p>Hi</p>"))
    with pytest.raises(BadEpub, match=r"bare\.epub: not an EPUB \(it has no META-INF/container"):
        read_epub(path)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("META-INF/container.xml", CONTAINER)
    with pytest.raises(BadEpub, match=r"its package file OEBPS/content\.opf is missing") as e:
        read_epub(path)
    assert isinstance(e.value.__cause__, KeyError)


def test_package_that_is_not_xml(tmp_path: Path) -> None:
    path = tmp_path / "bad.epub"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("META-INF/container.xml", CONTAINER)
        zf.writestr("OEBPS/content.opf", "this is not < xml")
    with pytest.raises(BadEpub, match=r"package file OEBPS/content\.opf is not valid XML"):
        read_epub(path)


def test_manifest_item_missing_from_the_archive(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "b.epub", {"c1.xhtml": xhtml("<p>Text.</p>")}, ["c1.xhtml"])
    with zipfile.ZipFile(path) as zf:
        kept = {n: zf.read(n) for n in zf.namelist() if n != "OEBPS/c1.xhtml"}
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in kept.items():
            zf.writestr(name, data)
    # A missing text document is left out with a warning; with nothing else to read, it fails.
    with pytest.raises(
        BadEpub,
        match=r"b\.epub has no text to narrate \(the text documents in "
        r"its reading order are missing from the archive\)",
    ):
        read_epub(path)


def test_drm_encrypted_text(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "drm.epub", {"c1.xhtml": "\x00\x13binary"}, ["c1.xhtml"])
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr(
            "META-INF/encryption.xml",
            '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
            'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
            '<enc:CipherData><enc:CipherReference URI="OEBPS/c1.xhtml"/></enc:CipherData>'
            "</enc:EncryptedData></encryption>",
        )
    with pytest.raises(
        BadEpub,
        match=r"drm\.epub: this book is DRM-protected "
        r"\(its text is encrypted\)",
    ):
        read_epub(path)


def test_nothing_to_narrate(tmp_path: Path) -> None:
    files = {"cover.xhtml": xhtml('<img src="c.jpg" alt=""/>'), "c.jpg": JPEG}
    with pytest.raises(BadEpub, match=r"pics\.epub has no text to narrate \(.+\)"):
        read_epub(make_epub(tmp_path / "pics.epub", files, ["cover.xhtml"]))


# --- fixed layout: the text set in SVG over each page's picture -----------------------------

SOUS_LE_VENT = [
    # The cover page: the title set over the picture.
    '<text x="600" y="300" font-size="96" text-anchor="middle">Sous le vent</text>',
    # A paragraph a <text>, a line a <tspan>; "peut-" at a line's end runs on into "être".
    "<desc>Un petit bateau sur une mer grise</desc>"
    '<text x="100" y="1200" font-size="40"><tspan x="100" y="1200">Il était une fois un petit '
    'bateau qui ne</tspan><tspan x="100" y="1250">savait pas où aller. Le vent soufflait '
    'peut-</tspan><tspan x="100" y="1300">être trop fort pour lui.</tspan></text>'
    '<text x="100" y="1400" font-size="40"><tspan x="100" y="1400">Où vas-tu ? demanda la '
    "mouette.</tspan></text>",
    # One <text> a line, as layout programs export it: the wider gap starts a paragraph.
    '<text x="80" y="300" font-size="40">Le soir venu, le bateau</text>'
    '<text x="80" y="345" font-size="40">rentra enfin au port.</text>'
    '<text x="80" y="470" font-size="40">Tout le monde dormait déjà.</text>',
    # An SVG page of the spine, each word placed on its own.
    '<text y="600" font-size="40"><tspan x="80">La</tspan><tspan x="140">mer</tspan>'
    '<tspan x="230">était</tspan><tspan x="330">calme.</tspan></text>',
    "",  # a picture with no text
]


def test_a_fixed_layout_book_is_read_from_the_text_in_its_svg(tmp_path: Path) -> None:
    book = read_epub(
        build_fixed_layout_epub(
            tmp_path / "sous-le-vent.epub", SOUS_LE_VENT, svg_pages=[4], toc=[("Sous le vent", 1)]
        )
    )
    assert (book.title, book.language) == ("Sous le vent", "fr")
    assert [c.title for c in book.chapters] == ["Sous le vent"]
    assert book.chapters[0].paragraphs == (
        "Sous le vent",
        "Il était une fois un petit bateau qui ne savait pas où aller. Le vent soufflait "
        "peut-être trop fort pour lui.",
        "Où vas-tu ? demanda la mouette.",
        "Le soir venu, le bateau rentra enfin au port.",
        "Tout le monde dormait déjà.",
        "La mer était calme.",
    )
    assert book.warnings == ()


def test_a_book_of_pictures_says_its_pages_are_pictures(tmp_path: Path) -> None:
    with pytest.raises(BadEpub) as error:
        read_epub(build_fixed_layout_epub(tmp_path / "comic.epub", ["", "", "", ""], svg_pages=[4]))
    assert str(error.value) == (
        "comic.epub has no text to narrate (all 4 of its pages are "
        "pictures with no text in them, as in a scanned or drawn book; "
        "Audiopub reads text only)"
    )


def test_description_year_and_series_from_the_package(tmp_path: Path) -> None:
    book = build_epub(tmp_path / "b.epub", [("One", ["Hello there."])])
    with_metadata(
        book,
        """
    <dc:date opf:event="conversion" xmlns:opf="http://www.idpf.org/2007/opf">2020-01-01</dc:date>
    <dc:date opf:event="publication" xmlns:opf="http://www.idpf.org/2007/opf">1851</dc:date>
    <dc:description>Call me   Ishmael.</dc:description>
    <meta name="calibre:series" content="Sea Stories"/>
    <meta name="calibre:series_index" content="3"/>""",
    )
    assert read_epub(book).details == BookDetails("Call me Ishmael.", "1851", "Sea Stories", "3")
    plain = read_epub(build_epub(tmp_path / "plain.epub", [("One", ["Hello there."])]))
    assert plain.details == BookDetails()
    assert Book.from_dict(plain.to_dict()).details == BookDetails()
