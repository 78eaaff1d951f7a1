#!/usr/bin/env bash
# apt-install.sh PACKAGE...: install Debian packages when running as root; otherwise print the
# command to run and fail.
set -euo pipefail
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian packages: $*"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
else
  echo "missing system packages: $*" >&2
  echo "install them with: sudo apt-get install $*" >&2
  exit 1
fi
