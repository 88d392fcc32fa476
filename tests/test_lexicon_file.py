"""Lexicon files as the editor loads and saves them: rows, notes kept, refusals, no half-writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from audiopub.book.lexicons.lexicon import Lexicon, parse, read
from audiopub.book.lexicons.lexicon_file import LexiconFile, Row, from_text, load, save
from audiopub.errors import LexiconError

HAND_WRITTEN = """\
# Names in the Harbour books
# (checked with the author)

Hermione\ther-MY-oh-nee
Hermione\t/hɝˈmaɪəni/
# the town, not the saint
St. Ives\tSaint Eyes\tcase
colou?r\tcolor\tregex

# more to come
"""


def test_a_file_loads_into_rows_and_saves_back_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "lexicon.tsv"
    path.write_text(HAND_WRITTEN, "utf-8")
    lexicon = load(path)
    assert [(r.written, r.say, r.case, r.regex) for r in lexicon.rows] == [
        ("Hermione", "her-MY-oh-nee", False, False),
        ("Hermione", "/hɝˈmaɪəni/", False, False),
        ("St. Ives", "Saint Eyes", True, False),
        ("colou?r", "color", False, True),
    ]
    assert lexicon.rows[0].notes == [
        "# Names in the Harbour books",
        "# (checked with the author)",
        "",
    ]
    assert lexicon.rows[2].notes == ["# the town, not the saint"]
    assert lexicon.notes_at_end == ["", "# more to come"]
    entries = save(path, lexicon)
    assert path.read_text("utf-8") == HAND_WRITTEN
    assert [(e.written, e.say, e.phonemes) for e in entries] == [
        (e.written, e.say, e.phonemes) for e in read(path)
    ]


def test_edits_keep_every_comment_where_it_belongs(tmp_path: Path) -> None:
    path = tmp_path / "lexicon.tsv"
    path.write_text(HAND_WRITTEN, "utf-8")
    lexicon = load(path)
    lexicon.rows[2].say = "Saint Ivz"
    lexicon.delete(0)  # the heading moves down to the next Hermione line
    lexicon.add("Quillfeather", "KWILL-feh-ther")
    save(path, lexicon)
    assert (
        path.read_text("utf-8")
        == """\
# Names in the Harbour books
# (checked with the author)

Hermione\t/hɝˈmaɪəni/
# the town, not the saint
St. Ives\tSaint Ivz\tcase
colou?r\tcolor\tregex
Quillfeather\tKWILL-feh-ther

# more to come
"""
    )
    assert [e.written for e in read(path)] == ["Hermione", "St. Ives", "colou?r", "Quillfeather"]


def test_deleting_the_last_row_keeps_its_notes_at_the_end(tmp_path: Path) -> None:
    lexicon = from_text("# only one\nRon\tRonn\n", "x.tsv")
    lexicon.delete(0)
    assert lexicon.text() == "# only one\n"
    lexicon.add("Ron", "Ronnn")  # a file of notes only: they head its first entry
    assert lexicon.text() == "# only one\nRon\tRonnn\n"


def test_empty_rows_are_dropped_and_numbering_follows_the_editor(tmp_path: Path) -> None:
    lexicon = LexiconFile([Row("Ron", "Ronn"), Row("  ", ""), Row("NASA", "nasa", case=True)])
    entries = lexicon.entries("book.tsv")
    assert [(e.written, e.source, e.case) for e in entries] == [
        ("Ron", "book.tsv:row 1", False),
        ("NASA", "book.tsv:row 3", True),
    ]
    assert lexicon.text() == "Ron\tRonn\nNASA\tnasa\tcase\n"
    assert [e.written for e in parse(lexicon.text(), "book.tsv")] == ["Ron", "NASA"]


def test_a_line_that_is_not_a_full_entry_becomes_a_row_to_fix(tmp_path: Path) -> None:
    lexicon = from_text("Hermione her-MY-oh-nee\n", "x.tsv")  # spaces, not a tab
    assert [(r.written, r.say) for r in lexicon.rows] == [("Hermione her-MY-oh-nee", "")]
    with pytest.raises(LexiconError, match=r"x.tsv:row 1: say how 'Hermione her-MY-oh-nee' is"):
        lexicon.entries("x.tsv")


def test_an_option_the_editor_cannot_show_is_refused_on_load(tmp_path: Path) -> None:
    path = tmp_path / "lexicon.tsv"
    path.write_text("# ok\nRon\tRonn\tloud\n", "utf-8")
    with pytest.raises(LexiconError, match=r"lexicon.tsv:2: unknown option 'loud'"):
        load(path)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (Row("Ron\tald", "Ronn"), r"row 2: the written form 'Ron\\tald' contains a tab"),
        (
            Row("Ron", "Ronn\nnext"),
            r"row 2: the how to say it 'Ronn\\nnext' contains a tab or a line",
        ),
        (Row("Ron", "Ronn\u2028"), r"row 2: the how to say it .* contains a tab or a line break"),
        (Row("#tag", "hashtag"), r"row 2: a written form cannot start with '#'"),
        (Row("", "Ronn"), r"row 2: the written form is empty \(how to say it: 'Ronn'\)"),
        (Row("Ron", " "), r"row 2: say how 'Ron' is said"),
        (Row("colo(u", "color", regex=True), r"row 2: 'colo\(u' is not a regular expression"),
    ],
)
def test_a_bad_row_is_refused_naming_file_and_row_and_nothing_is_written(
    tmp_path: Path, row: Row, message: str
) -> None:
    path = tmp_path / "lexicon.tsv"
    path.write_text("# mine\nHermione\ther-MY-oh-nee\n", "utf-8")
    lexicon = load(path)
    lexicon.rows.append(row)
    with pytest.raises(LexiconError, match=f"{path}:{message}"):
        save(path, lexicon)
    assert path.read_text("utf-8") == "# mine\nHermione\ther-MY-oh-nee\n"
    assert [p.name for p in tmp_path.iterdir()] == ["lexicon.tsv"]  # no temp file left


def test_rows_still_being_typed_can_be_skipped() -> None:
    lexicon = LexiconFile([Row("Quillfeather", ""), Row("Ron", "Ronn")])
    assert [e.written for e in lexicon.entries("x.tsv", complete_only=True)] == ["Ron"]
    lexicon.rows.append(Row("colo(u", "color", regex=True))  # complete, and still wrong
    with pytest.raises(LexiconError, match="row 3"):
        lexicon.entries("x.tsv", complete_only=True)


def test_a_check_can_refuse_the_entries_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "books" / "abc" / "lexicon.tsv"
    lexicon = load(path)  # no file yet
    lexicon.add("Gandalf", "/ˈɡændɑlf/")
    with pytest.raises(LexiconError, match=r"row 1: 'Gandalf' .*takes no phonemes"):
        save(path, lexicon, check=lambda entries: Lexicon(entries, None))
    assert not path.exists()
    save(path, lexicon, check=lambda entries: Lexicon(entries, frozenset("ˈɡændɑlf")))
    assert path.read_text("utf-8") == "Gandalf\t/ˈɡændɑlf/\n"


def test_a_file_changed_elsewhere_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "lexicon.tsv"
    path.write_text("Ron\tRonn\n", "utf-8")
    lexicon = load(path)
    path.write_text("Ron\tRonn\nHarry\tHarree\n", "utf-8")  # by hand, in another editor
    lexicon.add("Hermione", "her-MY-oh-nee")
    with pytest.raises(LexiconError, match="was changed elsewhere since it was opened"):
        save(path, lexicon)
    assert path.read_text("utf-8") == "Ron\tRonn\nHarry\tHarree\n"
    again = load(path)
    again.add("Hermione", "her-MY-oh-nee")
    save(path, again)
    save(path, again)  # saving twice from one editor is fine
    assert [e.written for e in read(path)] == ["Ron", "Harry", "Hermione"]


def test_nothing_to_save_writes_no_file(tmp_path: Path) -> None:
    path = tmp_path / "lexicon.tsv"
    lexicon = load(path)
    lexicon.add()  # an empty row
    assert save(path, lexicon) == []
    assert not path.exists()


def test_a_file_that_cannot_be_written_is_a_lexicon_error(tmp_path: Path) -> None:
    (tmp_path / "books").write_text("not a folder")
    path = tmp_path / "books" / "lexicon.tsv"
    lexicon = load(path)
    lexicon.add("Ron", "Ronn")
    with pytest.raises(LexiconError, match=f"{path}: cannot write this lexicon"):
        save(path, lexicon)
