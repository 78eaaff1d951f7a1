"""nbgrader's own tests as the contract of the course's drop-ins (``make test-nbgrader``).

Runs nbgrader's shipped tests of what the course touches (:data:`FILES`: autograde, feedback,
collect, release, fetch, submit, generate, export, the gradebook and the preprocessors) twice, side
by side: on vanilla nbgrader, and with the course's drop-ins active (``dropins.py``). It compares
the outcome of every test id and fails unless each difference is listed, with its reason, in
``differences.json`` beside this file, and each listed difference still differs as listed (a fix
makes its entry go). Run it before any nbgrader upgrade (then also ``tests/test_nbgrader_internals.py``).

Usage: ``python tests/nbgrader_suite/run.py [--out DIR] [-k EXPR]``; exit status 0 when the
differences are exactly the listed ones. The two runs' JUnit files are kept in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DIFFERENCES = HERE / "differences.json"

#: nbgrader's test files run, relative to nbgrader/tests
FILES = (
    "apps/test_nbgrader_autograde.py",
    "apps/test_nbgrader_generate_feedback.py",
    "apps/test_nbgrader_collect.py",
    "apps/test_nbgrader_zip_collect.py",
    "apps/test_nbgrader_releaseassignment.py",
    "apps/test_nbgrader_releasefeedback.py",
    "apps/test_nbgrader_fetch_assignment.py",
    "apps/test_nbgrader_fetchfeedback.py",
    "apps/test_nbgrader_submit.py",
    "apps/test_nbgrader_generate_assignment.py",
    "apps/test_nbgrader_export.py",
    "api/test_gradebook.py",
    "api/test_models.py",
    "preprocessors",
)
#: nbgrader's test files among those left out, and why
LEFT_OUT = {
    "preprocessors/test_instantiatetests.py": (
        "reads nbgrader's source checkout (docs/source/user_guide/autotests.yml), which the package does not "
        "ship; the course does not use autotests"),
}

#: a test's outcome in a JUnit file
Outcomes = dict[str, str]


def outcomes(junit: Path) -> Outcomes:
    """Each test id (``apps.test_x.TestX::test_y``) of a JUnit file and its outcome: passed,
    failed, error or skipped."""
    found: Outcomes = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        outcome = ("error" if "error" in kinds else "failed" if "failure" in kinds
                   else "skipped" if "skipped" in kinds else "passed")
        found[f"{case.get('classname')}::{case.get('name')}"] = outcome
    return found


def listed_differences(path: Path = DIFFERENCES) -> dict[str, dict[str, str]]:
    """The listed differences: test id -> {vanilla, dropins, reason}.

    Raises
    ------
    ValueError
        Naming the entry, when one lacks an outcome or its reason.
    """
    table = json.loads(path.read_text(encoding="utf-8"))["differences"]
    for test_id, entry in table.items():
        missing = [k for k in ("vanilla", "dropins", "reason") if not str(entry.get(k, "")).strip()]
        if missing:
            raise ValueError(f"{path.name}: {test_id} needs {', '.join(missing)}")
    return table


def compare(vanilla: Outcomes, dropins: Outcomes, listed: dict[str, dict[str, str]]) -> list[str]:
    """One line for every way the two runs disagree with the list (none: the contract holds).

    A test whose outcome differs and is not listed (or is listed with other outcomes) is a
    problem; so is a listed one that no longer differs (its entry must go)."""
    problems = []
    for test_id in sorted(set(vanilla) | set(dropins)):
        pair = (vanilla.get(test_id, "not run"), dropins.get(test_id, "not run"))
        entry = listed.get(test_id)
        if pair[0] == pair[1]:
            if entry is not None:
                problems.append(f"{test_id}: listed as differing, but {pair[0]} in both runs: remove its entry "
                                f"from {DIFFERENCES.name}")
        elif entry is None:
            problems.append(f"{test_id}: {pair[0]} on vanilla nbgrader, {pair[1]} with the course's drop-ins; "
                            f"not listed in {DIFFERENCES.name}")
        elif (entry["vanilla"], entry["dropins"]) != pair:
            problems.append(f"{test_id}: {pair[0]} vanilla, {pair[1]} with drop-ins; listed as "
                            f"{entry['vanilla']} / {entry['dropins']}")
    problems += [f"{test_id}: listed in {DIFFERENCES.name} but run in neither" for test_id in sorted(listed)
                 if test_id not in vanilla and test_id not in dropins]
    return problems


def _environment(dropins: bool, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOGRADER_", "JUPYTER_", "PYTEST_"))}
    env.update(HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               PYTHONDONTWRITEBYTECODE="1")
    env.setdefault("USER", pwd.getpwuid(os.getuid()).pw_name)  # nbgrader's fetch_feedback tests read it
    # the course's work folder (its export's default grades.csv, say) in the run's own folder, never the repository's
    env["AUTOGRADER_WORKDIR"] = str(home / "work")
    env.pop("SELFATTN_NBGRADER_DROPINS", None)
    if dropins:
        env["SELFATTN_NBGRADER_DROPINS"] = "1"
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(HERE), env.get("PYTHONPATH"))))
    return env


def _check_activation(env: dict[str, str]) -> None:
    """Fail in one line when the drop-in run's interpreter does not have the drop-ins."""
    probe = ("import nbgrader.preprocessors as p, nbgrader.api as a; "
             "assert getattr(p, 'selfattn_dropins', False) and a.create_engine.__module__.startswith('autograder')")
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"test-nbgrader: the course's drop-ins are not active in the drop-in run: "
                 f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")


def main(argv: list[str] | None = None) -> int:
    """Run both suites side by side, compare, print the verdict; return the exit status."""
    import nbgrader

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "nbgrader-suite",
                        help="folder for the two runs' JUnit files and logs")
    parser.add_argument("--workers", type=int, default=2,
                        help="pytest-xdist workers per run (0: serial); nbgrader's tests mostly wait (sleeps, "
                             "subprocesses), so two runs of two workers share two cores")
    parser.add_argument("-k", dest="keyword", help="pytest's -k, to run a part (the comparison then covers it)")
    args = parser.parse_args(argv)
    tests = Path(nbgrader.__file__).parent / "tests"
    args.out.mkdir(parents=True, exist_ok=True)
    listed = listed_differences()
    started, runs = time.monotonic(), {}
    with tempfile.TemporaryDirectory(prefix="nbgrader-suite-") as tmp:
        for name in ("vanilla", "dropins"):
            home = Path(tmp) / name
            home.mkdir()
            env = _environment(name == "dropins", home)
            if name == "dropins":
                _check_activation(env)
            cmd = [sys.executable, "-m", "pytest", "-c", str(HERE / "pytest.ini"), "--rootdir", str(tests),
                   "-q", "-p", "no:cacheprovider", "-p", "no:randomly", f"--junitxml={args.out / f'{name}.xml'}",
                   *(["-n", str(args.workers)] if args.workers else []),
                   *(["-k", args.keyword] if args.keyword else []), *(str(tests / f) for f in FILES),
                   *(f"--ignore={tests / f}" for f in LEFT_OUT)]
            log = (args.out / f"{name}.log").open("w")
            runs[name] = (subprocess.Popen(cmd, cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT), log)
        for name, (proc, log) in runs.items():
            rc = proc.wait()
            log.close()
            if rc not in (0, 1):  # 1: some tests failed (compared below); else pytest itself failed
                print(f"test-nbgrader: the {name} run stopped (pytest exit {rc}); see {args.out / f'{name}.log'}")
                return 2
    vanilla, dropins = outcomes(args.out / "vanilla.xml"), outcomes(args.out / "dropins.xml")
    if args.keyword:
        listed = {k: v for k, v in listed.items() if k in vanilla or k in dropins}
    problems = compare(vanilla, dropins, listed)
    counts = {n: sum(o == "passed" for o in r.values()) for n, r in (("vanilla", vanilla), ("dropins", dropins))}
    print(f"test-nbgrader: {len(vanilla)} of nbgrader {nbgrader.__version__}'s tests; passed: {counts['vanilla']} "
          f"vanilla, {counts['dropins']} with the course's drop-ins; {len(listed)} listed differences; "
          f"{time.monotonic() - started:.0f} s")
    for line in problems:
        print(f"  {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
