#!/usr/bin/env bash
# Installs Debian's chromium (headless browser for the server package's
# end-to-end page test) unless a Chromium/Chrome binary is already on PATH.
# Idempotent: a second run does nothing. Needs root (or sudo) and apt.
set -euo pipefail

for b in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$b" >/dev/null 2>&1; then
    echo "install-chromium: $b already installed ($(command -v "$b"))"
    exit 0
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# fonts-liberation gives the page a real font; chromium pulls its own libs.
$SUDO apt-get install -y -q --no-install-recommends chromium fonts-liberation
command -v chromium >/dev/null 2>&1 || { echo "install-chromium: chromium not on PATH after install" >&2; exit 1; }
echo "install-chromium: $(chromium --version 2>/dev/null || echo installed)"
