"""A chapter's text as an engine speaks it: its paragraphs cut into chunks short enough to say
in one go, at sentence boundaries and at the cast's voiced spans (`chunking`), and the words
of each chunk matched to the word timings the engine gives back (`words`).
"""
