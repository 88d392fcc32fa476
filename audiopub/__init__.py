"""Audiopub: a local audiobook producer (a book in, chapterised .m4b out)."""

__version__ = "0.1.0"
