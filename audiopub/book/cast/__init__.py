"""Who speaks each quotation of a book: direct speech found, attributed to characters, and the
characters with their aliases and genders. Plain text analysis, offline, on the CPU.

`models` holds the data every other part shares (the finder, the attribution, the voices the
cast is given, the chunker that keeps speakers apart).
"""

from audiopub.book.cast.attribution import attribute, by_lines
from audiopub.book.cast.models import Attribution, Character, Quote

__all__ = ["Attribution", "Character", "Quote", "attribute", "by_lines"]
