#!/usr/bin/env bash
# Debian packages the tests need: chromium (headless browser checks of the site, and the PDF),
# poppler-utils (pdfinfo counts the PDF's pages, pdftotext checks it) and
# bubblewrap (the grading sandbox).  Installs what is missing when run as root;
# otherwise prints the command to run.  As root it also makes the sandbox's own user.
set -euo pipefail
# the host user student code runs as when the grader runs as root (SANDBOX_USER in
# autograder/sandbox/command.py): a system user that owns nothing, with no login and no home
if [ "$(id -u)" -eq 0 ] && ! getent passwd selfattn-sandbox >/dev/null; then
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin selfattn-sandbox
  echo "made the system user selfattn-sandbox (student code runs as it when the grader is root)"
fi
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v bwrap    >/dev/null 2>&1 || need+=(bubblewrap)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)  # make pdf (pdfinfo) and its test (pdftotext)
fc-list 2>/dev/null | grep -qi dejavu || need+=(fonts-dejavu-core)
if [ ${#need[@]} -eq 0 ]; then
  echo "system packages present: chromium, bubblewrap, poppler-utils, fonts"
  exit 0
fi
exec bash "$(dirname "$0")/apt-install.sh" "${need[@]}"
