"""What every nbgrader, grading and Jupyter process imports at start-up that it does not use (a fixed
cost of each run, each nbgrader command, each kernel).

jsonschema 4.25 and newer pull in ``rfc3987-syntax`` (its ``format-nongpl`` extra, which nbformat's
and jupyter-events' requirements ask for) and import it with ``jsonschema``: it builds a Lark grammar
for the ``iri`` formats, about a CPU second per process, for checks nothing here makes. The pins keep
jsonschema below 4.25, in the repository and in what a student installs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from grading_support import ROOT, SOLUTIONS

GRAMMAR = "rfc3987_syntax"


def test_nbgrader_and_the_grade_command_start_without_the_iri_grammar_and_still_validate_notebooks():
    code = ("import sys, json, importlib.util, autograder.grade, nbgrader.apps, nbformat; "
            f"nb = nbformat.read({str(SOLUTIONS / '03-softmax-attention.ipynb')!r}, as_version=4); "
            "nbformat.validate(nb); "
            f"print(json.dumps([{GRAMMAR!r} in sys.modules, importlib.util.find_spec({GRAMMAR!r}) is not None]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    imported, installed = json.loads(out.stdout.strip().splitlines()[-1])
    assert not imported, f"{GRAMMAR} was imported by nbgrader or the grade command"
    assert not installed, f"{GRAMMAR} is installed in the course's environment: jsonschema >= 4.25 brought it"


def _major_minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


@pytest.mark.parametrize("requirements", ["requirements.txt", "student/requirements.txt"])
def test_the_pins_keep_jsonschema_from_pulling_in_the_iri_grammar(requirements):
    text = (ROOT / requirements).read_text()
    pinned = re.findall(r"^jsonschema==([0-9.]+)", text, flags=re.M)
    assert pinned, f"{requirements} pins no jsonschema"
    assert all(_major_minor(v) < (4, 25) for v in pinned), \
        f"{requirements} pins jsonschema {pinned}: 4.25 and newer install and import {GRAMMAR}"
    assert not re.search(r"^rfc3987-syntax==", text, flags=re.M), f"{requirements} pins rfc3987-syntax"
