#!/usr/bin/env bash
# Create the project's virtual environment with the given Python (>= 3.10).
# A stock Debian ships python3 without its venv module (package python3-venv): install it when
# running as root, otherwise say which command to run.
set -euo pipefail
python=$1 venv=$2
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "error: $python is not Python >= 3.10; run make with PYTHON=/path/to/python3.10+" >&2
  exit 1
fi
if ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  echo "$python has no venv module (Debian package python3-venv)"
  bash "$(dirname "$0")/apt-install.sh" python3-venv
fi
"$python" -m venv "$venv"
