"""The voice library: what Audiopub can speak with, what is installed, and downloads.

    catalogue   which copy of Piper's index is listed (the shipped snapshot, refreshed on
                request); the index itself is the Piper engine's (`tts.piper.downloads`),
                and the other engines declare their own (`EngineInfo.downloads`:
                Supertonic's releases, Kokoro)
    install     the one door for downloading a voice or model into the models folder,
                atomically, and removing it: an engine's own catalogue, else Piper's
    installed   what is on this computer: the built-in voice, downloads, the user's own files

The Hub client (`tts.hub`) and the download steps every model shares (`tts.downloads`) live
with the engines, whose own catalogues (`tts.supertonic.downloads`, `tts.kokoro.downloads`)
use them, as Piper's downloads (`tts.piper.downloads`) do; the listening models
(`whisper:<size>`) are `listen`'s, listed and downloaded here through `command`.

Nothing here touches the network unless a person asked for it (`audiopub voices --all`,
`audiopub voices download`, the Voices page).
"""
