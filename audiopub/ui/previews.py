"""Speech heard in the page rather than made into a book: a voice's preview, a lexicon entry's
"Hear it", a voice mix, the Voices page's sample; and the check of lexicon entries against a
voice.

Spoken by the previews' own engine (`registry.get_preview_engine`), on the CPU, whatever device
jobs use: a preview never waits for a running job's engine nor takes from it (the voice sounds
the same). Blocking: call these through `run.io_bound`.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Sequence
from typing import Final

import numpy as np
import soundfile as sf

from audiopub.book.lexicons.lexicon import Entry, Lexicon
from audiopub.book.spoken import spoken_form
from audiopub.errors import AudiopubError
from audiopub.tts import registry
from audiopub.tts.engine import SynthesisOptions, voice_of
from audiopub.ui.preferences import Preferences

log = logging.getLogger(__name__)

PREVIEW_TEXT: Final = "Hello! This is how I will sound when I read your book."
SAY_PAUSE_S: Final = 0.5  # between the pieces `say` speaks (a word, then its sentence)


class Previews:
    """`warm` is set once the remembered voice has been loaded ahead (or failed to)."""

    def __init__(self, preferences: Preferences) -> None:
        self.preferences = preferences
        self.warm = threading.Event()
        self._warmup: threading.Thread | None = None

    def start_warmup(self) -> None:
        """Load the remembered voice on a thread of its own (see `_warm_up`)."""
        # No daemon, joined by `join_warmup`: one inside ORT at exit aborts the process (134).
        self._warmup = threading.Thread(target=self._warm_up, name="audiopub-preview-warmup")
        self._warmup.start()

    def join_warmup(self) -> None:
        if self._warmup is not None:
            self._warmup.join()  # one word, spoken; a second or two after a start

    def _warm_up(self) -> None:
        """Load the remembered voice into the previews' engine and say a word with it (the
        model's session and the phonemiser start on first use): the first Preview or Hear it
        then starts in about a second, not after the voice loads."""
        saved = self.preferences.get()
        try:
            tts = registry.get_preview_engine(saved.engine)
            voices = [v.id for v in tts.voices()]
            voice = saved.voice if saved.voice in voices else voices[0]
            tts.synthesize(["Hello."], voice, SynthesisOptions())
        except Exception as exc:  # noqa: BLE001 — the first preview will load it, and say why not
            log.info("the preview voice was not loaded ahead: %s", exc)
        finally:
            self.warm.set()

    def preview(self, engine: str, voice: str, speed: float, steps: int) -> bytes:
        """One sentence in `voice`, as WAV bytes."""
        return self.say([PREVIEW_TEXT], engine, voice, speed, steps)

    def say(
        self,
        texts: Sequence[str],
        engine: str,
        voice: str,
        speed: float,
        steps: int,
        lexicon_entries: Sequence[Entry] = (),
        language: str | None = None,
    ) -> bytes:
        """`texts` one after the other, a short pause between, in `voice`, as WAV bytes.

        Said as a job would say them: what the lexicon's entries claim as they say it, the rest
        with numbers and abbreviations as words by the rules of `language` (default: the
        voice's). An entry the voice cannot say is a LexiconError, nothing is spoken then.
        """
        tts = registry.get_preview_engine(engine)
        lexicon = Lexicon(lexicon_entries, tts.phoneme_symbols(voice))
        rules = language or voice_of(tts, voice).language

        def plain(text: str) -> str:
            return spoken_form(text, rules)

        spoken = [lexicon.speak(text, plain) for text in texts if text.strip()]
        if not spoken:
            raise AudiopubError("There is nothing to say")
        results = tts.synthesize(
            spoken, voice, SynthesisOptions(speed=speed, steps=steps, language=language)
        )
        rate = results[0].sample_rate
        pause = np.zeros(int(SAY_PAUSE_S * rate), dtype=np.float32)
        audio = np.concatenate([part for result in results for part in (pause, result.audio)][1:])
        buffer = io.BytesIO()
        sf.write(buffer, audio, rate, format="WAV", subtype="PCM_16")
        return buffer.getvalue()

    def check_lexicon(self, entries: Sequence[Entry], engine: str, voice: str) -> Lexicon:
        """`entries` checked as a job would check them: a LexiconError names one the voice
        cannot say (an IPA symbol it lacks, IPA for a voice that takes none)."""
        tts = registry.get_preview_engine(engine)
        return Lexicon(entries, tts.phoneme_symbols(voice))
