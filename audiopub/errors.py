"""Audiopub's exceptions: every error a user can cause or fix is one of these.

    AudiopubError
     ├── BadBook              the file is not a book Audiopub can read (or has nothing to narrate)
     │    └── BadEpub         … an EPUB (or another zipped format) that can't be read
     │         └── DamagedEntry  one entry of the archive can't be unpacked
     ├── UploadRejected       an upload is too large or empty
     ├── LexiconError         a pronunciation lexicon is malformed or can't be honoured
     ├── EngineUnavailable    an engine or voice can't be used here (missing package, unknown voice)
     │    └── ModelMissing    model files are missing or incomplete; the message names the fix
     ├── SynthesisFailed      the engine raised while speaking a chunk
     ├── ListeningUnavailable proof-listening can't run here (the `listen` extra or a
     │                        listening model is missing); the message names the fix
     ├── MuxFailed            ffmpeg could not write the audiobook
     ├── DiskFull             no room to write audio; the job pauses and can resume
 ├── ClusterLost          the Ray cluster can't be reached; the job pauses and can resume
     ├── VoiceNotFound        no voice or model has that id (in the catalogue, or installed)
     ├── DownloadFailed       a voice or model could not be downloaded; nothing was installed
     │    ├── HubUnreachable    no network, or the Hub (or mirror) does not answer
     │    ├── ChecksumMismatch  a downloaded file is not the one the publisher listed
     │    ├── NotEnoughSpace    the disk has no room for the download (checked first)
     │    └── DownloadCancelled the person cancelled it
     ├── JobStoreError        the job store refused an operation
     │    ├── JobNotFound     no job has that id
     │    ├── InvalidTransition  the job can't move from its state to the one asked for
     │    ├── StoreDamaged    the store's file is damaged; the message names it and what to do
     │    └── StoreUnopenable the store's file or folder can't be opened (not writable, say)
     └── JobStopped           a running job was asked to stop
          ├── JobCancelled     … and cancelled
          └── JobPaused        … and paused (it can resume)

The CLI and the UI show `str(error)` to the user, so messages are written for people.
"""


class AudiopubError(Exception):
    """Base class for every error Audiopub raises on purpose."""


class BadBook(AudiopubError):
    """The input is not a book in a format we read (EPUB, text, Markdown, HTML, Word, FB2,
    OpenDocument, PDF), can't be read, or holds no text to narrate."""


class BadEpub(BadBook):
    """The input is not an EPUB we can read, or it holds no text to narrate. Zipped formats
    other than EPUB (Word, OpenDocument, FB2 in a zip) fail through the same archive checks."""


class DamagedEntry(BadEpub):
    """One entry can't be unpacked (bad CRC, cut-off data, password, unsupported method)."""

    def __init__(self, book: str, entry: str, reason: str) -> None:
        super().__init__(f"{book}: the archive is damaged: {entry} can't be unpacked ({reason})")
        self.entry = entry
        self.reason = reason


class UploadRejected(AudiopubError):
    """The upload is too large or empty."""


class LexiconError(AudiopubError):
    """A pronunciation lexicon line is malformed, or the voice cannot say it as written."""


class EngineUnavailable(AudiopubError):
    """An engine or voice cannot be used on this machine."""


class ModelMissing(EngineUnavailable):
    """Model files are missing or incomplete."""


class SettingInvalid(AudiopubError):
    """An AUDIOPUB_* environment variable holds a value Audiopub can't use."""


class SynthesisFailed(AudiopubError):
    """The engine raised while synthesising a chunk."""


class ListeningUnavailable(AudiopubError):
    """Proof-listening can't run: the `listen` extra or the listening model is not installed."""


class MuxFailed(AudiopubError):
    """ffmpeg failed to encode or mux the audiobook."""


class DiskFull(AudiopubError):
    """No space left while writing audio; the job is paused and can resume."""

    def __init__(self, message: str, path: object = None) -> None:
        super().__init__(message)
        self.path = path  # the file or folder that could not be written, where known


class ClusterLost(AudiopubError):
    """The Ray cluster (`--ray`) went away or never answered; the job is paused, and the same
    command resumes it, on the cluster or on this machine."""


class VoiceNotFound(AudiopubError):
    """No voice or model has that id in the catalogue, or none is installed under it."""


class DownloadFailed(AudiopubError):
    """A download could not finish: no network, not on the Hub, a bad file. Nothing was
    installed; files already complete may be kept for the next attempt."""


class HubUnreachable(DownloadFailed):
    """The Hub could not be reached; running the command again continues the download."""


class ChecksumMismatch(DownloadFailed):
    """A downloaded file's MD5 or SHA-256 differs from the published one."""


class NotEnoughSpace(DownloadFailed):
    """The download would not fit on the disk."""


class DownloadCancelled(DownloadFailed):
    """The person cancelled the download."""


class JobStoreError(AudiopubError):
    """The job store refused an operation."""


class StoreClosed(JobStoreError):
    """The job store was closed (the process is stopping) while something still used it."""


class JobNotFound(JobStoreError):
    """No job has that id (it may have been deleted)."""


class InvalidTransition(JobStoreError):
    """The job cannot move from its current state to the one asked for."""


class StoreDamaged(JobStoreError):
    """The store's file is damaged (SQLite: "malformed", "not a database"); nothing is written
    to it. The message names the file, where what could be read was saved, and what to do."""

    def __init__(self, message: str, path: object = None, recovered: object = None) -> None:
        super().__init__(message)
        self.path = path  # the damaged file
        self.recovered = recovered  # the copy of what could be read from it, if any


class StoreUnopenable(JobStoreError):
    """The store's file or its folder can't be opened or written (permissions, a read-only
    disk); the message names the folder and what to do."""


class JobStopped(AudiopubError):
    """A running job was told to stop between two chunks."""


class JobCancelled(JobStopped):
    """The job was cancelled."""


class JobPaused(JobStopped):
    """The job was paused; resuming continues from its last finished chunk."""
