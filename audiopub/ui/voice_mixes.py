"""Voice mixes a person saved under a name, kept in `kokoro-mixes.json` in the data dir, for
the engine whose voices mix (its `EngineInfo.mixing`; Kokoro's).

A name is only a label for the page: the voice a job is given is the mix itself,
"jf_alpha:0.6+jm_kumo:0.4", as the command line takes it. So the chunk cache keys on the mix's
voices and weights (the engine's `model_id`), a name saved again with other weights never
reuses audio spoken by the old ones, renaming or deleting a mix touches no job, and nothing
but this page needs to know names exist.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Final

from audiopub.atomic import atomic_write
from audiopub.errors import AudiopubError, EngineUnavailable
from audiopub.tts import registry
from audiopub.tts.engine import Voice, voice_of
from audiopub.tts.engine_info import Mixing

log = logging.getLogger(__name__)

# The name it had when Kokoro's were the only mixes: the mixes people saved are kept there.
FILE_NAME: Final = "kokoro-mixes.json"
MAX_NAME: Final = 60
SHARE_DIGITS: Final = 4  # 1/3 is 0.3333: three of them add up to 1 within the parser's 1e-3


def mixing_engine() -> str | None:
    """The engine the saved mixes are for: the first whose voices mix (None: none does)."""
    return next((info.name for info in registry.engines() if info.mixing is not None), None)


def check_mix(engine: str, mix: str) -> None:
    """AudiopubError says why `engine` can't speak `mix` (its voices unchecked)."""
    mixing = registry.engine_info(engine).mixing
    if mixing is None:
        raise EngineUnavailable(f"{registry.engine_info(engine).label}'s voices don't mix")
    mixing.check(mix)


def mix_string(parts: Sequence[tuple[str, float]], mixing: Mixing) -> str:
    """The mix of `parts` (voice, weight ≥ 0), weights turned into shares of 1:
    [("jf_alpha", 3), ("jm_kumo", 1)] → "jf_alpha:0.75+jm_kumo:0.25". An AudiopubError says
    what is wrong: fewer than two voices, one twice, or no weight."""
    chosen = [(name, weight) for name, weight in parts if name and weight > 0]
    names = [name for name, _ in chosen]
    if len(set(names)) < 2:
        raise AudiopubError("A mix needs at least two different voices with a weight above 0.")
    if len(set(names)) != len(names):
        raise AudiopubError("A mix names a voice twice: choose each voice once.")
    total = sum(weight for _, weight in chosen)
    mix = mixing.separator.join(
        f"{name}{mixing.weight_separator}{round(weight / total, SHARE_DIGITS):g}"
        for name, weight in chosen
    )
    mixing.check(mix)  # the engine's own check of what it will be given
    return mix


class VoiceMixes:
    """Saved mixes, name → mix string, in the order they were saved."""

    def __init__(self, path: Path, engine: str | None) -> None:
        self.path = path
        self.engine = engine  # whose voices the mixes are (`mixing_engine`); None: no engine mixes
        self._lock = threading.Lock()

    def all(self) -> dict[str, str]:
        """The saved mixes; a file that can't be read counts as none (logged), so the page
        always opens."""
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring the saved voice mixes in %s: %s", self.path, exc)
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            name: mix
            for name, mix in data.items()
            if isinstance(name, str) and isinstance(mix, str)
        }

    def save(self, name: str, mix: str) -> str:
        """Keep `mix` under `name` (replacing a mix of that name); the name, tidied."""
        name = " ".join(name.split())
        if not name:
            raise AudiopubError("Give the mix a name.")
        if len(name) > MAX_NAME:
            raise AudiopubError(f"A mix's name is at most {MAX_NAME} characters.")
        if self.engine is None:
            raise EngineUnavailable("No engine mixes voices.")
        check_mix(self.engine, mix)
        with self._lock:
            mixes = self.all()
            mixes[name] = mix
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_write(self.path) as temp:
                temp.write_text(json.dumps(mixes, ensure_ascii=False, indent=2), "utf-8")
        return name

    def remove(self, mix: str) -> list[str]:
        """Forget the saved mix `mix` under every name it was saved as; those names (none if
        another page removed it first). A job that speaks the mix keeps its voice: the job
        holds the mix itself, not its name."""
        with self._lock:
            mixes = self.all()
            names = [name for name, saved in mixes.items() if saved == mix]
            if names:
                kept = {name: saved for name, saved in mixes.items() if saved != mix}
                with atomic_write(self.path) as temp:
                    temp.write_text(json.dumps(kept, ensure_ascii=False, indent=2), "utf-8")
        return names


def mixed_voice(engine: str, name: str, mix: str) -> Voice:
    """The saved mix as `engine`'s voice list shows it: the mix as its id, the name to read
    (blocking: the engine checks its voices are installed)."""
    return replace(voice_of(registry.get_engine(engine), mix), name=f"{name} (mix)")


def with_saved_mixes(engine: str, voices: Sequence[Voice], mixes: VoiceMixes) -> tuple[Voice, ...]:
    """`engine`'s voices with the saved mixes after them; a mix whose voices are no longer
    installed is left out (logged), the others stay."""
    known = {voice.id for voice in voices}
    listed = list(voices)
    for name, mix in mixes.all().items():
        if mix in known:
            continue
        try:
            listed.append(mixed_voice(engine, name, mix))
        except AudiopubError as exc:
            log.info("the voice mix %r is not offered: %s", name, exc)
            continue
        known.add(mix)
    return tuple(listed)
