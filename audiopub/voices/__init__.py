"""The voice library: what Audiopub can speak with, what is installed, and downloads.

    catalogue   every Piper voice on the Hub (a shipped snapshot of its index, refreshed on
                request) and the Supertonic releases
    hub         the Hugging Face Hub through `huggingface_hub`: file facts, downloads with
                progress and cancelling, checksums, its errors as Audiopub's
    install     downloading a voice or model into the models folder, atomically; removing it
    installed   what is on this computer: the built-in voice, downloads, the user's own files
    releases    which Supertonic release speaks (chosen, else the newest installed) and the
                languages a Supertonic model folder reads
    whisper_files, whisper_install
                the listening models (`whisper:<size>`): their folder and files; download

Nothing here touches the network unless a person asked for it (`audiopub voices --all`,
`audiopub voices download`, the Voices page).
"""
