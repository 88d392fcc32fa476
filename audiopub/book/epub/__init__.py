"""EPUB books read safely: the zip archive in memory within limits (`archive`, which the
zipped formats Word, OpenDocument and FB2 also open with), the package document found through
container.xml with its manifest, spine and DRM (`package`), what the package says about the
book (`metadata`), and the reader that makes a `Book` of it all (`reader.read_epub`).
"""
