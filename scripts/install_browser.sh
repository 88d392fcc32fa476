#!/usr/bin/env bash
# Installs Debian's chromium for the real-browser end-to-end test (tests/test_e2e_browser.py).
# Playwright drives it through its bundled driver; no browser is ever downloaded by Playwright.
# Does nothing when /usr/bin/chromium (or $AUDIOPUB_CHROMIUM) already exists.
set -euo pipefail

if [ -x "${AUDIOPUB_CHROMIUM:-/usr/bin/chromium}" ]; then
  exit 0
fi
exec "$(dirname "$0")/apt_install.sh" chromium AUDIOPUB_CHROMIUM
