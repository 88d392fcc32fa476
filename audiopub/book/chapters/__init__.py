"""How a book's pages become chapters, for EPUB and every other format alike: XHTML pages
walked into one stream of paragraphs with marks where chapters start (`paragraphs`, with the
text SVG pictures hold from `svg_text`), the table of contents and the cut into chapters at
its marks (`toc`), and which chapters are front matter, listed but not narrated (`front_matter`).
"""
