"""Small, valid EPUB 3 and EPUB 2 books for tests, and a tiny cover image."""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

from audiopub.bench.texts import write_simple_epub


def tiny_png(width: int = 8, height: int = 8, rgb: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    """A solid-colour PNG, made without an imaging library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def build_epub(
    path: Path,
    chapters: Sequence[tuple[str, Sequence[str]]],
    *,
    title: str = "A Small Book",
    author: str = "Ann Author",
    language: str = "en",
    cover: bytes | None = None,
) -> Path:
    """Write an EPUB with one XHTML file per chapter: a heading, then one <p> per paragraph
    (paragraphs are markup, so tests can put noterefs, spans and the like inside)."""
    return write_simple_epub(
        path,
        chapters,
        identifier=f"test-{title}",
        title=title,
        author=author,
        language=language,
        cover=cover,
    )


def with_metadata(epub: Path, lines: str) -> Path:
    """The EPUB rewritten in place with `lines` (OPF markup) added to its package metadata."""
    entries = []
    with zipfile.ZipFile(epub) as source:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith(".opf"):
                data = data.replace(b"</metadata>", lines.encode("utf-8") + b"\n</metadata>")
            entries.append((info, data))
    with zipfile.ZipFile(epub, "w") as out:
        for info, data in entries:
            out.writestr(info, data)
    return epub


def build_epub2(
    path: Path,
    pages: Sequence[tuple[str, str]],
    toc: Sequence[tuple[str, str, int]],
    *,
    title: str = "An Old Book",
    author: str = "Ann Author",
    language: str = "en",
) -> Path:
    """An EPUB 2 book as older tools wrote them: an OPF 2.0 with `opf:` attributes and two
    dates, an NCX and no nav document, XHTML 1.1 pages with their doctype.

    `pages` are (file name, body markup); `toc` entries are (label, href, depth from 1).
    """

    def page(name: str, body: str) -> str:
        return (
            '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC '
            '"-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\n'
            f'<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="{language}"><head>'
            f'<title>{name}</title><link rel="stylesheet" type="text/css" '
            f'href="style.css"/></head><body>{body}</body></html>'
        )

    items = "".join(
        f'<item id="p{i}" href="{name}" media-type="application/xhtml+xml"/>'
        for i, (name, _) in enumerate(pages)
    )
    spine = "".join(f'<itemref idref="p{i}"/>' for i in range(len(pages)))
    opf = (
        '<?xml version="1.0" encoding="utf-8"?>\n<package xmlns="http://www.idpf.org/2007/opf"'
        ' version="2.0" unique-identifier="bookid"><metadata '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">'
        f'<dc:title>{title}</dc:title><dc:creator opf:role="aut" opf:file-as="Author, Ann">'
        f"{author}</dc:creator><dc:language>{language}</dc:language>"
        '<dc:identifier id="bookid" opf:scheme="URI">urn:uuid:0d6ad1ba-0b6e-4a4d-9d56-'
        '3c2b2f8c0001</dc:identifier><dc:date opf:event="publication">1901</dc:date>'
        '<dc:date opf:event="conversion">2020-01-02</dc:date></metadata><manifest>'
        '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
        f'<item id="css" href="style.css" media-type="text/css"/>{items}</manifest>'
        f'<spine toc="ncx">{spine}</spine></package>'
    )
    points, depth, order = [], 0, 0
    for label, href, level in toc:
        points.append("</navPoint>" * (depth - level + 1) if depth >= level else "")
        order += 1
        points.append(
            f'<navPoint id="n{order}" playOrder="{order}"><navLabel><text>{label}'
            f'</text></navLabel><content src="{href}"/>'
        )
        depth = level
    points.append("</navPoint>" * depth)
    ncx = (
        '<?xml version="1.0" encoding="utf-8"?>\n<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/"'
        ' version="2005-1"><head><meta name="dtb:uid" content="urn:uuid:0d6ad1ba-0b6e-4a4d-'
        '9d56-3c2b2f8c0001"/><meta name="dtb:depth" content="2"/><meta '
        'name="dtb:totalPageCount" content="0"/><meta name="dtb:maxPageNumber" content="0"/>'
        f"</head><docTitle><text>{title}</text></docTitle><navMap>{''.join(points)}"
        "</navMap></ncx>"
    )
    container = (
        '<?xml version="1.0"?>\n<container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/content.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles></container>'
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(
            zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED
        )
        zf.writestr("META-INF/container.xml", container, zipfile.ZIP_DEFLATED)
        zf.writestr("OEBPS/content.opf", opf, zipfile.ZIP_DEFLATED)
        zf.writestr("OEBPS/toc.ncx", ncx, zipfile.ZIP_DEFLATED)
        zf.writestr("OEBPS/style.css", "p { text-indent: 1em; }\n", zipfile.ZIP_DEFLATED)
        for name, body in pages:
            zf.writestr(f"OEBPS/{name}", page(name, body), zipfile.ZIP_DEFLATED)
    return path


def build_fixed_layout_epub(
    path: Path,
    pages: Sequence[str],
    *,
    title: str = "Sous le vent",
    author: str = "Ann Author",
    language: str = "fr",
    svg_pages: Sequence[int] = (),
    toc: Sequence[tuple[str, int]] = (),
) -> Path:
    """A fixed-layout EPUB 3 shaped like IDPF's picture-book samples ("Sous le vent"):
    `rendition:layout` pre-paginated, each page an XHTML of its own with a viewport and an
    `<svg>` holding the page's picture (`<image>`) and the text set over it.

    `pages` are the SVG contents (markup inside `<svg>`, after the picture); the pages whose
    numbers are in `svg_pages` are SVG documents in the spine rather than XHTML. `toc` entries
    are (label, page number); without any, every page is listed as "Page n".
    """
    svg_open = (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/'
        'xlink" version="1.1" width="100%" height="100%" viewBox="0 0 1200 1600">'
    )
    names, files = [], {}
    for number, markup in enumerate(pages, start=1):
        picture = f'<image width="1200" height="1600" xlink:href="images/p{number:02}.png"/>'
        if number in svg_pages:
            name = f"p{number:02}.svg"
            files[name] = (
                f'<?xml version="1.0" encoding="UTF-8"?>\n{svg_open}'
                f"<title>Page {number}</title>{picture}{markup}</svg>"
            )
        else:
            name = f"p{number:02}.xhtml"
            files[name] = (
                '<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/'
                f'xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="{language}" '
                f'lang="{language}"><head><meta charset="UTF-8"/><title>{title} – page '
                f'{number}</title><meta name="viewport" content="width=1200, height=1600"/>'
                '<link rel="stylesheet" type="text/css" href="css/fxl.css"/></head>'
                f'<body epub:type="bodymatter"><div class="page">{svg_open}{picture}{markup}'
                "</svg></div></body></html>"
            )
        names.append(name)
    entries = toc or [(f"Page {n}", n) for n in range(1, len(pages) + 1)]
    links = "".join(f'<li><a href="{names[n - 1]}">{label}</a></li>' for label, n in entries)
    files["nav.xhtml"] = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml" '
        f'xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="{language}"><head><title>{title}'
        f'</title></head><body><nav epub:type="toc"><ol>{links}</ol></nav></body></html>'
    )
    items = [
        '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>',
        '<item id="css" href="css/fxl.css" media-type="text/css"/>',
    ]
    for number, name in enumerate(names, start=1):
        kind = "image/svg+xml" if name.endswith(".svg") else "application/xhtml+xml"
        items.append(
            f'<item id="page{number:02}" href="{name}" media-type="{kind}" properties="svg"/>'
            if kind != "image/svg+xml"
            else f'<item id="page{number:02}" href="{name}" media-type="{kind}"/>'
        )
        items.append(
            f'<item id="img{number:02}" href="images/p{number:02}.png" media-type="image/png"/>'
        )
    spine = "".join(
        f'<itemref idref="page{n:02}" properties="page-spread-{"right" if n % 2 else "left"}"/>'
        for n in range(1, len(names) + 1)
    )
    opf = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<package xmlns="http://www.idpf.org/2007/opf" '
        f'version="3.0" unique-identifier="uid" xml:lang="{language}" prefix="rendition: '
        'http://www.idpf.org/vocab/rendition/#"><metadata xmlns:dc="http://purl.org/dc/'
        f'elements/1.1/"><dc:identifier id="uid">urn:uuid:fx1-{title}</dc:identifier>'
        f"<dc:title>{title}</dc:title><dc:creator>{author}</dc:creator>"
        f"<dc:language>{language}</dc:language><dc:rights>CC BY-SA</dc:rights>"
        '<meta property="dcterms:modified">2012-01-01T00:00:00Z</meta>'
        '<meta property="rendition:layout">pre-paginated</meta>'
        '<meta property="rendition:orientation">portrait</meta>'
        '<meta property="rendition:spread">auto</meta></metadata>'
        f"<manifest>{''.join(items)}</manifest><spine>{spine}</spine></package>"
    )
    container = (
        '<?xml version="1.0"?>\n<container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/content.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles></container>'
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(
            zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED
        )
        zf.writestr("META-INF/container.xml", container, zipfile.ZIP_DEFLATED)
        zf.writestr("OEBPS/content.opf", opf, zipfile.ZIP_DEFLATED)
        zf.writestr(
            "OEBPS/css/fxl.css",
            "body { margin: 0; } .page { width: 1200px; }\n",
            zipfile.ZIP_DEFLATED,
        )
        for name, data in files.items():
            zf.writestr(f"OEBPS/{name}", data, zipfile.ZIP_DEFLATED)
        for number in range(1, len(names) + 1):
            zf.writestr(f"OEBPS/images/p{number:02}.png", tiny_png(), zipfile.ZIP_DEFLATED)
    return path


def build_frankenstein_like(path: Path) -> Path:
    """A book shaped like Project Gutenberg's Frankenstein (ebook 84): its title page holds the
    title in two headings, each one a TOC entry ("Frankenstein;", "or, the Modern Prometheus"),
    and the byline; then "Letter 1" and "Chapter 1", each a short passage of the novel."""
    title_page = (
        '<div class="titlepage"><h1 id="t1">Frankenstein;</h1>'
        '<h3 id="t2">or, the Modern Prometheus</h3>'
        '<h2 class="no-break">by Mary Wollstonecraft (Godwin) Shelley</h2></div>'
    )
    letter = (
        '<h2 id="letter1">Letter 1</h2><p><i>To Mrs. Saville, England.</i></p>'
        "<p>St. Petersburgh, Dec. 11th, 17—.</p><p>You will rejoice to hear that no "
        "disaster has accompanied the commencement of an enterprise which you have "
        "regarded with such evil forebodings.</p>"
    )
    chapter = (
        '<h2 id="chap01">Chapter 1</h2><p>I am by birth a Genevese, and my family is '
        "one of the most distinguished of that republic.</p>"
    )
    pages = {"title.xhtml": title_page, "letter1.xhtml": letter, "chap01.xhtml": chapter}
    entries = [
        ("Frankenstein;", "title.xhtml#t1"),
        ("or, the Modern Prometheus", "title.xhtml#t2"),
        ("Letter 1", "letter1.xhtml#letter1"),
        ("Chapter 1", "chap01.xhtml#chap01"),
    ]

    def page(body: str) -> str:
        return (
            '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/'
            'xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="en"><head><title>'
            f"Frankenstein</title></head><body>{body}</body></html>"
        )

    links = "".join(f'<li><a href="{href}">{label}</a></li>' for label, href in entries)
    nav = page(f'<nav epub:type="toc" id="toc"><h2>Contents</h2><ol>{links}</ol></nav>')
    items = "".join(
        f'<item id="{name[:-6]}" href="{name}" media-type="application/xhtml+xml"/>'
        for name in pages
    )
    spine = "".join(f'<itemref idref="{name[:-6]}"/>' for name in pages)
    opf = (
        '<?xml version="1.0" encoding="utf-8"?>\n<package xmlns="http://www.idpf.org/2007/opf"'
        ' version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/'
        'elements/1.1/"><dc:identifier id="id">http://www.gutenberg.org/84</dc:identifier>'
        "<dc:title>Frankenstein; Or, The Modern Prometheus</dc:title>"
        "<dc:creator>Shelley, Mary Wollstonecraft</dc:creator><dc:language>en</dc:language>"
        '<meta property="dcterms:modified">2021-01-01T00:00:00Z</meta></metadata><manifest>'
        '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" '
        f'properties="nav"/>{items}</manifest><spine>{spine}</spine></package>'
    )
    container = (
        '<?xml version="1.0"?>\n<container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/content.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles></container>'
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(
            zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED
        )
        zf.writestr("META-INF/container.xml", container, zipfile.ZIP_DEFLATED)
        zf.writestr("OEBPS/content.opf", opf, zipfile.ZIP_DEFLATED)
        zf.writestr("OEBPS/nav.xhtml", nav, zipfile.ZIP_DEFLATED)
        for name, body in pages.items():
            zf.writestr(f"OEBPS/{name}", page(body), zipfile.ZIP_DEFLATED)
    return path
