"""Books: EPUB reading, text cleaning and chunking."""
