"""The voice library: what Audiopub can speak with, what is installed, and downloads.

    catalogue   every Piper voice on the Hub (a shipped snapshot of its index, refreshed on
                request) and the Supertonic releases
                (`tts.supertonic.releases`: which one speaks, chosen or the newest installed)
    install     downloading a voice or model into the models folder, atomically; removing it
    installed   what is on this computer: the built-in voice, downloads, the user's own files

The Hub client (`tts.hub`) and the download steps every model shares (`tts.downloads`) live
with the engines, whose own installers (`tts.kokoro.install`) use them; the listening models
(`whisper:<size>`) are `listen`'s, listed and downloaded here through `command`.

Nothing here touches the network unless a person asked for it (`audiopub voices --all`,
`audiopub voices download`, the Voices page).
"""
