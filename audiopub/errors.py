"""Audiopub's exceptions: every error a user can cause or fix is one of these.

    AudiopubError
     ├── BadEpub              the file is not a readable EPUB (or has nothing to narrate)
     ├── EngineUnavailable    an engine or voice can't be used here (missing package, unknown voice)
     │    └── ModelMissing    model files are missing or incomplete; the message names the fix
     ├── SynthesisFailed      the engine raised while speaking a chunk
     ├── MuxFailed            ffmpeg could not write the audiobook
     └── JobStopped           a running job was asked to stop
          ├── JobCancelled     … and cancelled
          └── JobPaused        … and paused (it can resume)

The CLI and the UI show `str(error)` to the user, so messages are written for people.
"""


class AudiopubError(Exception):
    """Base class for every error Audiopub raises on purpose."""


class BadEpub(AudiopubError):
    """The input is not an EPUB we can read, or it holds no text to narrate."""


class EngineUnavailable(AudiopubError):
    """An engine or voice cannot be used on this machine."""


class ModelMissing(EngineUnavailable):
    """Model files are missing or incomplete."""


class SynthesisFailed(AudiopubError):
    """The engine raised while synthesising a chunk."""


class MuxFailed(AudiopubError):
    """ffmpeg failed to encode or mux the audiobook."""


class JobStopped(AudiopubError):
    """A running job was told to stop between two chunks."""


class JobCancelled(JobStopped):
    """The job was cancelled."""


class JobPaused(JobStopped):
    """The job was paused; resuming continues from its last finished chunk."""
