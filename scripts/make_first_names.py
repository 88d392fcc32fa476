"""Make `audiopub/book/cast/first_names.txt`, the first names whose gender the cast takes
without a pronoun ("May Welland" is a woman), from the Names Corpus (Mark Kantrowitz, 1991;
in NLTK's data as `corpora/names.zip`):

    python scripts/make_first_names.py path/to/names   # the folder of male.txt, female.txt, README

A name both lists hold ("Jean", "Francis") has no gender here. The corpus's README travels at
the top of the file, as its licence asks.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "audiopub" / "book" / "cast" / "first_names.txt"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the Names Corpus: male.txt, female.txt, README")
    folder = parser.parse_args().folder
    male = set((folder / "male.txt").read_text(encoding="utf-8").split())
    female = set((folder / "female.txt").read_text(encoding="utf-8").split())
    readme = (folder / "README").read_text(encoding="utf-8").strip().splitlines()
    lines = [
        "# First names of one gender: a name, a tab, male or female. Made by",
        "# scripts/make_first_names.py from the Names Corpus; names in both of its lists left out.",
        "#",
        *(f"# {line}".rstrip() for line in readme),
        *(f"{name}\tmale" for name in sorted(male - female)),
        *(f"{name}\tfemale" for name in sorted(female - male)),
    ]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(male - female)} male, {len(female - male)} female")
    return 0


if __name__ == "__main__":
    sys.exit(main())
