"""A Piper voice's `.onnx.json`: what inference needs from it, and how its phonemes become ids.

A multi-speaker voice (VCTK, LibriTTS, …) says how many speakers it has and names them in its
`speaker_id_map`; each speaker is one voice for Audiopub, fed to the graph as its `sid`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

BOS: Final = "^"  # start of utterance
EOS: Final = "$"  # end of utterance
PAD: Final = "_"  # interspersed between phonemes, as the voices were trained


@dataclass(frozen=True)
class PiperVoiceConfig:
    """The parts of a Piper `.onnx.json` that inference needs."""

    sample_rate: int
    espeak_voice: str
    phoneme_id_map: Mapping[str, Sequence[int]]
    noise_scale: float = 0.667
    length_scale: float = 1.0
    noise_w: float = 0.8
    num_speakers: int = 1
    # Speaker names in `sid` order; empty for a single-speaker voice.
    speakers: tuple[str, ...] = ()

    @staticmethod
    def from_dict(config: dict[str, Any]) -> PiperVoiceConfig:
        inference = config.get("inference", {})
        num_speakers = int(config.get("num_speakers", 1))
        return PiperVoiceConfig(
            sample_rate=int(config["audio"]["sample_rate"]),
            espeak_voice=config["espeak"]["voice"],
            phoneme_id_map=config["phoneme_id_map"],
            noise_scale=float(inference.get("noise_scale", 0.667)),
            length_scale=float(inference.get("length_scale", 1.0)),
            noise_w=float(inference.get("noise_w", 0.8)),
            num_speakers=num_speakers,
            speakers=_speaker_names(num_speakers, config.get("speaker_id_map") or {}),
        )

    @property
    def multi_speaker(self) -> bool:
        return bool(self.speakers)


def _speaker_names(count: int, id_map: Mapping[str, int]) -> tuple[str, ...]:
    """Names by speaker id; an id the map does not name is called by its number."""
    if count <= 1:
        return ()
    names = [str(sid) for sid in range(count)]
    for name, sid in id_map.items():
        if 0 <= int(sid) < count:
            names[int(sid)] = str(name)
    return tuple(names)


WORD_BOUNDARY: Final = " "  # between espeak's words
PUNCTUATION: Final = frozenset(',.;:!?¡¿—…"«»“”')  # phoneme symbols that are no word's sound


@dataclass(frozen=True)
class PiperInput:
    """A text as the model takes it: its phoneme ids, where each word starts among them, and
    the speaker that is to say it."""

    ids: list[int]
    # Where each word starts among the ids: at the PAD before its first sounding phoneme, where
    # the voice already moves into the word (its onset was measured there, 2-3 frames before
    # the phoneme itself). A word is what espeak put between two word boundaries (" "), if it
    # holds more than punctuation (",", "." stay glued to the word before).
    word_positions: list[int]
    speaker: int = 0  # the graph's `sid`; 0 for a single-speaker voice


def encode(
    phonemes: Sequence[str], id_map: Mapping[str, Sequence[int]], speaker: int = 0
) -> PiperInput:
    """Piper's id layout, BOS PAD (phoneme PAD)* EOS (phonemes the voice lacks are skipped),
    and where the words start in it."""
    ids = [*id_map[BOS], *id_map[PAD]]
    positions: list[int] = []
    in_word = False  # a sounding phoneme of the current word has been seen
    for phoneme in phonemes:
        if phoneme == WORD_BOUNDARY:
            in_word = False
        if phoneme not in id_map:
            continue
        if not in_word and phoneme != WORD_BOUNDARY and phoneme not in PUNCTUATION:
            positions.append(len(ids) - len(id_map[PAD]))
            in_word = True
        ids.extend(id_map[phoneme])
        ids.extend(id_map[PAD])
    ids.extend(id_map[EOS])
    return PiperInput(ids, positions, speaker)


def phoneme_ids(phonemes: Sequence[str], id_map: Mapping[str, Sequence[int]]) -> list[int]:
    """Piper's id layout: BOS PAD (phoneme PAD)* EOS; phonemes the voice lacks are skipped."""
    return encode(phonemes, id_map).ids
