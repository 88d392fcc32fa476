"""How a book's words are said: pronunciation lexicons and their matching on the written text
(`lexicon`), a lexicon file as the editor shows and saves it (`lexicon_file`), and the names
and unusual words worth checking before a long run (`names`). The book's own hints (EPUB 3's
PLS lexicons and `ssml:ph`) are `book.pronunciation`, which every `Book` carries.
"""
