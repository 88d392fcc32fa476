"""Books: reading them in any format, cutting them into chapters and chunks, and what their
words sound like.

    reading         the one door: any file Audiopub knows into a `Book`
    epub/           EPUB: the archive within limits, the package, metadata, the reader
    formats/        every other format (Word, OpenDocument, FB2, HTML, Markdown, text, PDF,
                    MOBI through calibre), brought to pages read as an EPUB's are
    chapters/       pages into paragraphs, the table of contents, chapters, front matter
    chunks/         chapters into chunks for an engine, and word timings back onto the text
    spoken/         the spoken form of a chunk: numbers, dates, money, abbreviations in words
    lexicons/       pronunciation lexicons, their editor's rows, the names worth checking
    cast/           who speaks each quotation, the characters and their aliases

Shared by all of them: the plain data of a book (`models`), the book's own pronunciation
hints (`pronunciation`), element names and labels (`markup`), the hardened XML parser
(`safe_xml`), text cleaning and sentences (`text`), a picture's size from its header
(`pictures`), the scripts a book and a voice are written in (`scripts`), and which voice
reads which stretch of a paragraph when a job has a cast (`voicing`: jobs and the chunker
use it without loading the cast finder).
"""
