#!/usr/bin/env bash
# Installs one Debian package for the test set-up (as root, or through sudo), or says what to
# do where that is impossible. Usage: apt_install.sh PACKAGE VARIABLE
#   VARIABLE names the environment variable that points Audiopub at the program instead,
#   for machines without apt-get.
set -euo pipefail
package="$1"
variable="$2"

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "apt_install.sh: $package is missing and this user can't install packages;" >&2
  echo "  ask an administrator to run: apt-get install $package" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "apt_install.sh: no apt-get here; install $package with your package manager and" >&2
  echo "  point $variable at its executable" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "$package"
