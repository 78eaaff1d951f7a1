#!/usr/bin/env bash
# Debian packages the tests need: chromium (headless browser checks of the site, and the PDF),
# poppler-utils (pdfunite joins the PDF, pdftotext checks it) and
# bubblewrap (the grading sandbox).  Installs what is missing when run as root;
# otherwise prints the command to run.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v bwrap    >/dev/null 2>&1 || need+=(bubblewrap)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)  # make pdf (pdfunite) and its test (pdftotext)
fc-list 2>/dev/null | grep -qi dejavu || need+=(fonts-dejavu-core)
if [ ${#need[@]} -eq 0 ]; then
  echo "system packages present: chromium, bubblewrap, poppler-utils, fonts"
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian packages: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
  echo "missing system packages: ${need[*]}" >&2
  echo "install them with: sudo apt-get install ${need[*]}" >&2
  exit 1
fi
