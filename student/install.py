"""Set up the course in one command: ``python3 install.py`` (Python 3.10-3.13, pip only, no root).

Creates ``.venv`` next to this file, installs the pinned requirements and the course's helper
package from ``wheels/``, and configures Jupyter for students: nbgrader's instructor tools
(Formgrader, Create Assignment, Courses) are switched off, and ``nbgrader validate`` shows each
check's message in full.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
INSTRUCTOR_LAB = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                  "@jupyter/nbgrader:course-list"]
INSTRUCTOR_SERVER = ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"]


def configure(prefix: Path) -> None:
    """Student-side Jupyter configuration inside the environment ``prefix``."""
    etc = prefix / "etc" / "jupyter"
    (etc / "labconfig").mkdir(parents=True, exist_ok=True)
    (etc / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {name: True for name in INSTRUCTOR_LAB}}, indent=1) + "\n")
    (etc / "jupyter_server_config.d").mkdir(parents=True, exist_ok=True)
    # read after nbgrader's own nbgrader.json (alphabetical order), so it wins
    (etc / "jupyter_server_config.d" / "zz-student.json").write_text(json.dumps(
        {"ServerApp": {"jpserver_extensions": {name: False for name in INSTRUCTOR_SERVER}}}, indent=1) + "\n")
    (etc / "nbgrader_config.py").write_text((HERE / "nbgrader_config.py").read_text())


def main() -> int:
    if sys.version_info < (3, 10):  # noqa: UP036 - a student may run any python3
        sys.exit(f"Python 3.10 or newer is needed; this is {sys.version.split()[0]}")
    target = HERE / ".venv"
    if not (target / "pyvenv.cfg").exists():
        print(f"creating {target} with {sys.executable}")
        venv.create(target, with_pip=True)
    python = target / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    wheels = sorted((HERE / "wheels").glob("selfattn-*.whl"))
    subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "--quiet",
                    "-r", str(HERE / "requirements.txt"), *map(str, wheels)], check=True)
    configure(target)
    jupyter = target / ("Scripts/jupyter.exe" if os.name == "nt" else "bin/jupyter")
    print(f"\nReady. Start working with:\n    {jupyter.relative_to(HERE)} lab notebooks/attention/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
