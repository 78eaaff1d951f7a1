"""What ``make grade``'s process imports at start-up that it does not use (a fixed cost of every run)."""

from __future__ import annotations

import json
import subprocess
import sys

from grading_support import ROOT, SOLUTIONS


def test_the_grade_command_skips_the_iri_grammar_and_still_validates_notebooks():
    code = ("import sys, json, autograder.grade, nbformat; "
            f"nb = nbformat.read({str(SOLUTIONS / '03-softmax-attention.ipynb')!r}, as_version=4); "
            "nbformat.validate(nb); "
            "print(json.dumps(sys.modules.get('rfc3987_syntax', 'absent') is None))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) is True, "rfc3987_syntax was imported by the grade command"
