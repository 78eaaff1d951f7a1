"""The code runs on the oldest Python it promises: 3.10 (the student bundle and ``make`` both say so).

``ruff``'s ``target-version`` checks syntax only; a standard-library name that is newer than 3.10
(``enum.StrEnum``, ``datetime.UTC``, ``tomllib``, ...) would import on this machine's 3.11 and fail on
a student's 3.10. ``vermin`` reads every module's use of the language and the standard library; a
line guarded by a version test says so with ``# novermin``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OLDEST = (3, 10)
#: The project's own code (tests/ holds catalogues of student answers, some deliberately not Python).
CODE = ["selfattn", "student", "autograder", "scripts", "benchmarks",
        *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").glob("*.py"))]


def test_every_module_runs_on_the_oldest_supported_python() -> None:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("vermin")), f"-t={OLDEST[0]}.{OLDEST[1]}-", "--violations", "--no-tips",
         "--eval-annotations", *CODE],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    report = done.stdout + done.stderr
    assert "Analyzing" in report, report  # vermin ran over the files
    assert done.returncode == 0, f"needs a newer Python than {OLDEST}:\n{report}"


def test_the_promise_is_written_where_people_read_it() -> None:
    """The README, the student requirements and ruff all name the same oldest version."""
    version = f"{OLDEST[0]}.{OLDEST[1]}"
    assert f"Python {version}" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert f'requires-python = ">={version}"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    target = re.search(r'^target-version = "py(\d)(\d+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert target and (int(target.group(1)), int(target.group(2))) == OLDEST
