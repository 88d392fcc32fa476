"""espeak-ng phonemes for Piper voices, through phonemizer and the espeak-ng library shipped
by `espeakng-loader` (no system espeak, and no second onnxruntime as `piper-tts` would bring).

phonemizer loads a copy of the library for each of its wrappers, from a temporary folder of
its own: espeak-ng keeps global state, and dlopen would hand back the library already loaded
from the same path. It removes the folder when the wrapper goes or the process exits, so a
killed process (a server stopped with SIGKILL) would leave its copies in the temp folder for
good. Here they go in folders claimed like scratch folders (`atomic.claim_folder`), named
`audiopub-espeak-<pid>-<random>`, and each process that makes a copy removes those of
processes that are gone.
"""

from __future__ import annotations

import logging
import re
import tempfile
import threading
import unicodedata
import weakref
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Final

import espeakng_loader
from filelock import FileLock
from phonemizer.backend import EspeakBackend
from phonemizer.backend.espeak import api as espeak_api
from phonemizer.backend.espeak.wrapper import EspeakWrapper
from phonemizer.separator import Separator

from audiopub.atomic import claim_folder, remove_orphaned_folders


class _AsDebug(logging.LoggerAdapter):
    """phonemizer's warnings (and its "initializing backend" note), as debug messages of
    Audiopub's own logger.

    phonemizer only warns about things it has already handled: a "words count mismatch" when
    espeak splits words differently from the text ("42" is "forty two", "--" is no word),
    which matters only to callers that align words, and the language-switch flags we ask it
    to remove. Its real failures are exceptions, which still reach the job. (Given no logger,
    phonemizer resets its "phonemizer" logger to WARNING when a backend is made, and that
    propagates to the root logger: setting a level on it beforehand does not last.)
    """

    # Any: the keywords (exc_info, stacklevel, extra...) pass on to `debug` as they came.
    def info(self, msg: object, *args: object, **kwargs: Any) -> None:
        self.debug(msg, *args, **kwargs)

    def warning(self, msg: object, *args: object, **kwargs: Any) -> None:
        self.debug(msg, *args, **kwargs)


_PHONEMIZER_LOG = _AsDebug(logging.getLogger(__name__).getChild("phonemizer"))

_LOCK = threading.Lock()  # espeak-ng keeps global state: one phonemisation at a time
_SEPARATOR = Separator(phone=None, word=" ", syllable=None)

# phonemizer strips punctuation before espeak sees it, so "Mr." would get a full stop (and a
# sentence pause) after "mister". Spell the common English titles out first.
_EN_TITLES = {
    "Mr.": "Mister",
    "Mrs.": "Missus",
    "Ms.": "Miz",
    "Dr.": "Doctor",
    "St.": "Saint",
    "Jr.": "Junior",
    "Sr.": "Senior",
    "Prof.": "Professor",
}
_EN_TITLE_RE = re.compile(r"\b(" + "|".join(re.escape(t) for t in _EN_TITLES) + r")(?=\s)")

# The same split would read "1,250" as "one, two hundred fifty": drop thousands separators.
_THOUSANDS_RE = re.compile(r"(?<=\d),(?=\d{3}\b)")

# Only the clause terminators espeak itself reports, as piper keeps them; quotes and dashes
# must not reach the voice as symbols (they were never in its training phonemes).
_PUNCTUATION = ";:,.!?"


COPY_PREFIX: Final = "audiopub-espeak-"


def _copy_folder() -> str:
    """A folder for phonemizer to copy the espeak-ng library into (its `mkdtemp`), made once
    the folders of processes that are gone are removed."""
    temp = Path(tempfile.gettempdir())
    remove_orphaned_folders(temp, COPY_PREFIX)
    folder, lock = claim_folder(temp, COPY_PREFIX)
    # phonemizer removes the folder in a finalizer made just after this one. At exit the
    # newest finalizers run first: the lock is let go only once the folder is gone, so no
    # other process takes it for an orphan while it is in use.
    weakref.finalize(_copy_folder, _let_go, lock)
    return str(folder)


def _let_go(lock: FileLock) -> None:
    Path(lock.lock_file).unlink(missing_ok=True)
    lock.release()


# The one use phonemizer's espeak API makes of `tempfile`: where the library copies go.
espeak_api.tempfile = SimpleNamespace(mkdtemp=_copy_folder)


@cache
def _backend(language: str) -> EspeakBackend:
    EspeakWrapper.set_library(espeakng_loader.get_library_path())
    EspeakWrapper.set_data_path(espeakng_loader.get_data_path())
    return EspeakBackend(
        language,
        preserve_punctuation=True,
        punctuation_marks=_PUNCTUATION,
        with_stress=True,
        language_switch="remove-flags",  # like piper: drop "(fr)" markers around foreign words
        words_mismatch="ignore",
        logger=_PHONEMIZER_LOG,
    )


def expand_titles(text: str, language: str) -> str:
    if not language.startswith("en"):
        return text
    return _EN_TITLE_RE.sub(lambda m: _EN_TITLES[m.group(1)], text)


def prepare(text: str, language: str) -> str:
    """Undo what phonemizer's punctuation split would misread."""
    return _THOUSANDS_RE.sub("", expand_titles(text, language))


def phonemize(text: str, language: str) -> list[str]:
    """IPA phonemes of `text` as piper expects them: one entry per NFD code point."""
    text = prepare(text, language)
    with _LOCK:
        ipa = _backend(language).phonemize([text], separator=_SEPARATOR, strip=True)[0]
    return list(unicodedata.normalize("NFD", ipa))
