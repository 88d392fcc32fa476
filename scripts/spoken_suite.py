"""Audiopub's spoken forms measured on an outside suite: NeMo-text-processing's normalisation
test cases (English, German, French, Spanish), one `written~spoken` a line in files named
`<language>_<category>.txt`.

    python scripts/spoken_suite.py [FOLDER] [--language LANG] [--failures] [--strict]

FOLDER defaults to `shared/spoken-dev` beside the checkout. A case is right when Audiopub's
reading (`spoken_form`, as a chunk of book text) and the suite's are the same words once
`comparable` has set aside what a listener does not hear: letter case, punctuation, hyphens
between number words, the British "and" after "hundred", "thousand"... in English, and the
spaces in German compounds (the suite writes "ein hundert drei und zwanzig", "quadrat
kilometer" where German writes one word, and a listener hears no space). Our
judgements of the rest are in tests/data/spoken_suite/<language>.tsv, one case a line:

    accept   WRITTEN   OUR READING   why it is as natural as the suite's
    exclude  WRITTEN   -             why the case is left out (the suite's form is odd, or the
                                     text is not book text)

Prints the share right per language and category, with the numbers of accepted alternatives
and exclusions, and with --failures every case read otherwise; --strict leaves the judgements
out (every case counts, and only the suite's own reading is right).
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from audiopub.book.spoken import spoken_form  # noqa: E402 - after the checkout is on the path

DEFAULT_FOLDER = ROOT.parent / "shared" / "spoken-dev"
JUDGEMENTS = ROOT / "tests" / "data" / "spoken_suite"
LANGUAGES = ("en", "de", "fr", "es")
_PUNCTUATION = re.compile(r"[^\w\s]")
_ENGLISH_AND = re.compile(r"\b(hundred|thousand|million|billion|trillion) and\b")


@dataclass(frozen=True)
class Case:
    language: str
    category: str
    written: str
    spoken: str


@dataclass(frozen=True)
class Judgement:
    verdict: str  # "accept" or "exclude"
    written: str
    reading: str  # our accepted reading; "-" for an exclusion
    reason: str


@dataclass
class Outcome:
    case: Case
    reading: str
    right: bool
    accepted: bool = False
    excluded: bool = False


def read_cases(folder: Path) -> list[Case]:
    cases = []
    for path in sorted(folder.glob("*_*.txt")):
        language, category = path.stem.split("_", 1)
        for line in path.read_text(encoding="utf-8").splitlines():
            if "~" in line:
                written, spoken = line.split("~", 1)
                cases.append(Case(language, category, written, spoken))
    return cases


def read_judgements(language: str, folder: Path = JUDGEMENTS) -> dict[str, Judgement]:
    path = folder / f"{language}.tsv"
    if not path.exists():
        return {}
    found = {}
    with path.open(encoding="utf-8", newline="") as file:
        lines = (line for line in file if line.strip() and not line.startswith("#"))
        for row in csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE):
            verdict, written, reading, reason = row
            if verdict not in ("accept", "exclude"):
                raise ValueError(f"{path}: {verdict!r} is neither accept nor exclude")
            found[written] = Judgement(verdict, written, reading, reason)
    return found


def comparable(text: str, language: str) -> str:
    """The words a listener hears: no case, punctuation or hyphens, one space between (none
    in German, whose compounds the suite spaces)."""
    text = text.casefold().replace("-", " ")
    if language == "en":
        text = _ENGLISH_AND.sub(r"\1", text)
    if language == "de":
        return "".join(_PUNCTUATION.sub(" ", text).split())
    return " ".join(_PUNCTUATION.sub(" ", text).split())


def judge(case: Case, judgements: dict[str, Judgement]) -> Outcome:
    reading = spoken_form(case.written, case.language)
    judgement = judgements.get(case.written)
    if judgement is not None and judgement.verdict == "exclude":
        return Outcome(case, reading, right=False, excluded=True)
    if comparable(reading, case.language) == comparable(case.spoken, case.language):
        return Outcome(case, reading, right=True)
    accepted = judgement is not None and comparable(reading, case.language) == comparable(
        judgement.reading, case.language
    )
    return Outcome(case, reading, right=accepted, accepted=accepted)


def outcomes(folder: Path, language: str | None = None, judged: bool = True) -> list[Outcome]:
    cases = [c for c in read_cases(folder) if language in (None, c.language)]
    judgements = {lang: read_judgements(lang) if judged else {} for lang in LANGUAGES}
    return [judge(case, judgements.get(case.language, {})) for case in cases]


def share(found: list[Outcome]) -> float:
    counted = [o for o in found if not o.excluded]
    return sum(o.right for o in counted) / len(counted) if counted else 1.0


def report(found: list[Outcome], failures: bool) -> str:
    lines = []
    for language in LANGUAGES:
        mine = [o for o in found if o.case.language == language]
        if not mine:
            continue
        accepted = sum(o.accepted for o in mine)
        excluded = sum(o.excluded for o in mine)
        lines.append(
            f"{language}: {share(mine):.3f} right of {len(mine) - excluded} "
            f"({accepted} accepted alternatives, {excluded} excluded)"
        )
        for category in sorted(Counter(o.case.category for o in mine)):
            part = [o for o in mine if o.case.category == category]
            counted = [o for o in part if not o.excluded]
            lines.append(
                f"  {category:<13} {share(part):.3f}  "
                f"{sum(o.right for o in counted):>3}/{len(counted):<3}"
            )
    if failures:
        lines.append("")
        for o in found:
            if not o.right and not o.excluded:
                lines.append(
                    f"{o.case.language}_{o.case.category}\t{o.case.written}\t"
                    f"ours: {o.reading}\tsuite: {o.case.spoken}"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--language", choices=LANGUAGES)
    parser.add_argument("--failures", action="store_true", help="list every case read otherwise")
    parser.add_argument("--strict", action="store_true", help="leave the judgements out")
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder of cases")
    print(report(outcomes(args.folder, args.language, not args.strict), args.failures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
