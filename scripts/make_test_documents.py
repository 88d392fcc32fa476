"""Write the same short public-domain book in every format Audiopub reads, for its tests.

    python scripts/make_test_documents.py FOLDER

The text is the opening chapters of The War of the Worlds (H. G. Wells, public domain), taken
from the Standard Ebooks EPUB in tests/data/epubs. Each file has a title, a table of
contents where the format prints one, and three chapters; the text file has Project
Gutenberg's header and licence around it and `_italics_`; the PDF has a running head, page
numbers, words hyphenated across lines, its last chapter in two balanced columns and an
outline. A scanned PDF (pages that are pictures, no text) comes too. Writers: python-docx,
odfpy and reportlab (test dependencies).
"""

from __future__ import annotations

import argparse
import io
import textwrap
import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

SOURCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "epubs"
SOURCE_BOOK = "se-war-of-the-worlds.epub"
TITLE = "The War of the Worlds"
AUTHOR = "H. G. Wells"
CHAPTERS = 3
PARAGRAPHS = 4
ROMAN = ["I", "II", "III", "IV"]


@dataclass(frozen=True)
class Chapter:
    title: str  # "The Eve of the War"
    paragraphs: list[str]


def source_chapters(testdata: Path | None = None) -> list[Chapter]:
    from audiopub.book.epub.reader import read_epub

    book = read_epub((testdata or SOURCE) / SOURCE_BOOK)
    found = []
    for chapter in book.chapters:
        body = [p for p in chapter.paragraphs[1:] if len(p) > 200]
        if not chapter.front_matter and len(body) >= PARAGRAPHS:
            title = chapter.title.split(":", 1)[-1].strip()
            found.append(Chapter(title, body[:PARAGRAPHS]))
        if len(found) == CHAPTERS:
            return found
    raise SystemExit("the source book has too few chapters")


def heading(i: int) -> str:
    return f"Chapter {ROMAN[i]}"


def write_all(folder: Path, chapters: list[Chapter]) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    made = {
        "txt": write_text(folder / "book.txt", chapters),
        "md": write_markdown(folder / "book.md", chapters),
        "html": write_html(folder / "book.html", chapters),
        "docx": write_docx(folder / "book.docx", chapters),
        "odt": write_odt(folder / "book.odt", chapters),
        "fb2": write_fb2(folder / "book.fb2", chapters),
        "pdf": write_pdf(folder / "book.pdf", chapters),
        "scan": write_scan(folder / "scan.pdf"),
    }
    made["fb2.zip"] = folder / "book.fb2.zip"
    with zipfile.ZipFile(made["fb2.zip"], "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(made["fb2"], "book.fb2")
    return made


def write_text(path: Path, chapters: list[Chapter]) -> Path:
    lines = [
        f"The Project Gutenberg eBook of {TITLE}",
        "",
        "This ebook is for the use of anyone anywhere in the United States.",
        "",
        f"Title: {TITLE}",
        "",
        f"Author: {AUTHOR}",
        "",
        "Language: English",
        "",
        f"*** START OF THE PROJECT GUTENBERG EBOOK {TITLE.upper()} ***",
        "",
        TITLE,
        "",
        f"by {AUTHOR}",
        "",
        "Contents",
        "",
        *[f" CHAPTER {ROMAN[i]}.     {c.title}" for i, c in enumerate(chapters)],
        "",
    ]
    for i, chapter in enumerate(chapters):
        lines += ["", "", f"CHAPTER {ROMAN[i]}.", chapter.title, "", ""]
        for n, paragraph in enumerate(chapter.paragraphs):
            if n == 0:  # Gutenberg's italics
                words = paragraph.split(" ")
                words[3] = f"_{words[3]}_"
                paragraph = " ".join(words)
            lines += [textwrap.fill(paragraph, 70), ""]
    lines += [
        f"*** END OF THE PROJECT GUTENBERG EBOOK {TITLE.upper()} ***",
        "",
        "Section 1. General Terms of Use and Redistributing Project Gutenberg electronic works",
        "",
        "1.A. By reading or using any part of this Project Gutenberg electronic work, you",
        "indicate that you have read, understand, agree to and accept all the terms.",
    ]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def write_markdown(path: Path, chapters: list[Chapter]) -> Path:
    out = [f"# {TITLE}", "", f"by {AUTHOR}", ""]
    for i, chapter in enumerate(chapters):
        out += [f"## {heading(i)}: {chapter.title}", ""]
        for paragraph in chapter.paragraphs:
            out += [paragraph.replace("*", "\\*").replace("_", "\\_"), ""]
    path.write_text("\n".join(out), "utf-8")
    return path


def write_html(path: Path, chapters: list[Chapter]) -> Path:
    toc = "".join(
        f'<li><a href="#c{i}">{heading(i)}: {escape(c.title)}</a></li>'
        for i, c in enumerate(chapters)
    )
    body = "".join(
        f'<h2 id="c{i}">{heading(i)}: {escape(c.title)}</h2>'
        + "".join(f"<p>{escape(p)}" for p in c.paragraphs)
        for i, c in enumerate(chapters)
    )
    path.write_text(
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{TITLE}</title>'
        f'<meta name="author" content="{AUTHOR}"><style>p {{ margin: 0 }}</style>'
        f"<script>var x = 1;</script></head><body><h1>{TITLE}</h1>"
        f"<nav><ol>{toc}</ol></nav>{body}</body></html>",
        "utf-8",
    )
    return path


def write_docx(path: Path, chapters: list[Chapter]) -> Path:
    import docx

    document = docx.Document()
    document.core_properties.title = TITLE
    document.core_properties.author = AUTHOR
    document.core_properties.language = "en"
    document.add_heading(TITLE, 0)
    for i, chapter in enumerate(chapters):
        document.add_heading(f"{heading(i)}: {chapter.title}", 1)
        for paragraph in chapter.paragraphs:
            document.add_paragraph(paragraph)
    document.save(str(path))
    return path


def write_odt(path: Path, chapters: list[Chapter]) -> Path:
    from odf.dc import Creator, Language, Title
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P

    document = OpenDocumentText()
    document.meta.addElement(Title(text=TITLE))
    document.meta.addElement(Creator(text=AUTHOR))
    document.meta.addElement(Language(text="en"))
    for i, chapter in enumerate(chapters):
        document.text.addElement(H(outlinelevel=1, text=f"{heading(i)}: {chapter.title}"))
        for paragraph in chapter.paragraphs:
            document.text.addElement(P(text=paragraph))
    document.save(str(path))
    return path


def write_fb2(path: Path, chapters: list[Chapter]) -> Path:
    note = '<a l:href="#n1" type="note">1</a>'  # a note reference, not read
    sections = "".join(
        f"<section><title><p>{heading(i)}</p><p>{escape(c.title)}</p></title>"
        + "".join(f"<p>{escape(p)}{note if n == 0 else ''}</p>" for n, p in enumerate(c.paragraphs))
        + "</section>"
        for i, c in enumerate(chapters)
    )
    first, _, last = AUTHOR.rpartition(" ")
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0" '
        'xmlns:l="http://www.w3.org/1999/xlink"><description><title-info>'
        f"<author><first-name>{first}</first-name><last-name>{last}</last-name></author>"
        f"<book-title>{TITLE}</book-title><lang>en</lang></title-info></description>"
        f"<body><title><p>{TITLE}</p></title>{sections}</body>"
        '<body name="notes"><section id="n1"><p>A note that is not read.</p></section></body>'
        "</FictionBook>",
        "utf-8",
    )
    return path


# --- PDF ----------------------------------------------------------------------------------

PAGE_W, PAGE_H = 612.0, 792.0
MARGIN_X, TOP, BOTTOM = 72.0, 700.0, 90.0
FONT, SIZE, LEADING = "Times-Roman", 11.0, 14.0
RUNNING_HEAD = "THE WAR OF THE WORLDS"


class _PdfWriter:
    """Lays out paragraphs by hand, so the test knows what the PDF holds: running heads, page
    numbers, first-line indents, words hyphenated at line ends, one chapter in two columns."""

    def __init__(self, path: Path) -> None:
        from reportlab.pdfgen import canvas

        self.canvas = canvas.Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
        self.canvas.setTitle(TITLE)
        self.canvas.setAuthor(AUTHOR)
        self.page = 0
        self.hyphenated: list[str] = []  # the words split across lines
        self.columns: list[tuple[float, float]] = [(MARGIN_X, PAGE_W - MARGIN_X)]
        self.column = 0
        self.y = TOP

    def new_page(self, columns: int = 1) -> None:
        if self.page:
            self.canvas.showPage()
        self.page += 1
        self.canvas.setFont("Times-Italic", 9)
        self.canvas.drawCentredString(PAGE_W / 2, PAGE_H - 40, RUNNING_HEAD)
        self.canvas.drawCentredString(PAGE_W / 2, 40, str(self.page))
        width = PAGE_W - 2 * MARGIN_X
        if columns == 2:
            half = (width - 40) / 2
            self.columns = [
                (MARGIN_X, MARGIN_X + half),
                (PAGE_W - MARGIN_X - half, PAGE_W - MARGIN_X),
            ]
        else:
            self.columns = [(MARGIN_X, PAGE_W - MARGIN_X)]
        self.column = 0
        self.y = TOP

    def heading(self, text: str, key: str) -> None:
        self.canvas.bookmarkPage(key)
        self.canvas.addOutlineEntry(text, key, level=0)
        self.canvas.setFont("Helvetica-Bold", 18)
        self.canvas.drawString(MARGIN_X, self.y, text)
        self.y -= 40

    def paragraph(self, text: str) -> None:
        for line, indent in self._lines(text):
            self._draw(line, indent)
        self.y -= 4

    def balanced(self, paragraphs: list[str]) -> None:
        """The paragraphs down the page's two columns, the left one ending where half the
        lines are, as a typesetter ends a chapter set in columns: both columns hold text side
        by side however short the chapter. One that does not fit on the page flows on."""
        laid = [self._lines(paragraph) for paragraph in paragraphs]
        half = sum(len(lines) * LEADING + 4 for lines in laid) / 2
        top, balance = self.y, half + LEADING <= self.y - BOTTOM
        for lines in laid:
            for line, indent in lines:
                if balance and self.column == 0 and top - self.y >= half:
                    self.column, self.y = 1, top
                self._draw(line, indent)
            self.y -= 4

    def _lines(self, text: str) -> list[tuple[str, float]]:
        """The paragraph's lines as the column's width breaks them, each with its indent."""
        from reportlab.pdfbase.pdfmetrics import stringWidth

        left, right = self.columns[self.column]  # every column of a page is as wide
        lines: list[tuple[str, float]] = []
        words = text.split()
        line: list[str] = []
        indent = 18.0
        while words:
            room = right - left - indent
            word = words[0]
            candidate = " ".join([*line, word])
            if stringWidth(candidate, FONT, SIZE) <= room:
                line.append(words.pop(0))
                continue
            # Hyphenate a long word: as much of it as fits, then "-".
            if len(word) >= 8 and word.isalpha():
                for cut in range(len(word) - 3, 2, -1):
                    piece = " ".join([*line, word[:cut] + "-"])
                    if stringWidth(piece, FONT, SIZE) <= room:
                        line.append(word[:cut] + "-")
                        words[0] = word[cut:]
                        self.hyphenated.append(word)
                        break
            lines.append((" ".join(line), indent))
            line, indent = [], 0.0
        if line:
            lines.append((" ".join(line), indent))
        return lines

    def _draw(self, text: str, indent: float) -> None:
        if self.y < BOTTOM:
            if self.column + 1 < len(self.columns):
                self.column += 1
                self.y = TOP
            else:
                self.new_page(len(self.columns))
        left, _ = self.columns[self.column]
        self.canvas.setFont(FONT, SIZE)
        self.canvas.drawString(left + indent, self.y, text)
        self.y -= LEADING


def write_pdf(path: Path, chapters: list[Chapter]) -> Path:
    writer = _PdfWriter(path)
    for i, chapter in enumerate(chapters):
        last = i == len(chapters) - 1
        writer.new_page(columns=2 if last else 1)
        writer.heading(f"{heading(i)}: {chapter.title}", f"c{i}")
        if last:
            writer.balanced(chapter.paragraphs)
        else:
            for paragraph in chapter.paragraphs:
                writer.paragraph(paragraph)
    writer.canvas.save()
    path.with_suffix(".hyphenated").write_text("\n".join(writer.hyphenated), "utf-8")
    return path


def write_scan(path: Path) -> Path:
    """Two pages that are pictures of text, with no text layer: what a scanner makes."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    for page in range(2):
        image = Image.new("L", (612, 792), 255)
        draw = ImageDraw.Draw(image)
        for row in range(40):
            draw.text((72, 72 + row * 16), f"Scanned line {row} of page {page + 1}.", fill=0)
        buffer = io.BytesIO()
        image.save(buffer, "PNG")
        buffer.seek(0)
        pdf.drawImage(ImageReader(buffer), 0, 0, PAGE_W, PAGE_H)
        pdf.showPage()
    pdf.save()
    return path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="where the documents are written")
    for kind, made in write_all(parser.parse_args().folder, source_chapters()).items():
        print(f"{kind:8} {made}")
