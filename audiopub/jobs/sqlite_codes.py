"""SQLite's primary result codes that the store tells failures apart by.

The values are SQLite's own, fixed by its C API (sqlite.org/rescode.html). Python's `sqlite3`
names them only from 3.11, and an error carries its code (`sqlite_errorcode`) only from 3.11
too; defining them here keeps the modules that compare codes importable on 3.10.
"""

from __future__ import annotations

from typing import Final

SQLITE_PERM: Final = 3
SQLITE_READONLY: Final = 8
SQLITE_IOERR: Final = 10
SQLITE_CORRUPT: Final = 11
SQLITE_FULL: Final = 13
SQLITE_CANTOPEN: Final = 14
SQLITE_NOTADB: Final = 26
