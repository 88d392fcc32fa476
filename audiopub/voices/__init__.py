"""The voice library: what Audiopub can speak with, what is installed, and downloads.

    catalogue   what can be downloaded and what is installed: each engine's own catalogue
                (`EngineInfo.downloads`: Piper's voice index, Supertonic's releases, Kokoro),
                which copy of each is listed (shipped, or refreshed from the Hub on request),
                the Hub's sizes
    install     the one door for downloading a voice or model into the models folder,
                atomically, and removing it: through the catalogue the id belongs to
    suggest     a voice of each engine's catalogue for a book's language
The Hub client (`tts.hub`) and the download steps every model shares (`tts.downloads`) live
with the engines, whose catalogues (`tts.<engine>/downloads.py`) use them; the listening
models (`whisper:<size>`) are `listen`'s, listed and downloaded here through `command`.
Nothing here touches the network unless a person asked for it (`audiopub voices --all`,
`audiopub voices download`, the Voices page).
"""
