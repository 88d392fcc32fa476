#!/usr/bin/env bash
# Installs Debian's chromium for the real-browser end-to-end test (tests/test_e2e_browser.py).
# Playwright drives it through its bundled driver; no browser is ever downloaded by Playwright.
# Does nothing when /usr/bin/chromium (or $AUDIOPUB_CHROMIUM) already exists.
set -euo pipefail

if [ -x "${AUDIOPUB_CHROMIUM:-/usr/bin/chromium}" ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "install_browser.sh: chromium is missing and this user can't install packages;" >&2
  echo "  ask an administrator to run: apt-get install chromium" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_browser.sh: no apt-get here; install Chromium with your package manager and" >&2
  echo "  point AUDIOPUB_CHROMIUM at its executable" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium
