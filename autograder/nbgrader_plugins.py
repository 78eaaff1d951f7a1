"""nbgrader preprocessor that writes precomputed verdicts into the autograded notebook.

It replaces nbgrader's ``Execute``: nothing is run. Each autograder test cell gets the verdict
that :mod:`autograder.grade` computed for it: a stdout listing of the checks when all passed
(full points), or that listing plus an error output naming the failed checks (no points), which
is exactly how nbgrader scores a test cell. A note at the top of the notebook records anything
the grader had to repair.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from nbformat.v4 import new_markdown_cell, new_output
from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor

from .paths import verdict_path
from .untrusted import note_markdown


class ApplyVerdicts(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        path = verdict_path(info["student"], info["assignment"], info["notebook"])
        self.verdict = json.loads(Path(path).read_text()) if Path(path).exists() else None
        nb, resources = super().preprocess(nb, resources)
        notes = (self.verdict or {}).get("notes") or (
            [] if self.verdict else ["This notebook was not graded (no verdict was produced); ask your instructor."])
        if notes:
            # notes quote student text (exception messages): rendered as text, never as HTML
            text = "**Grading notes.**\n\n" + "\n".join(note_markdown(str(n)) for n in notes)
            nb.cells.insert(0, new_markdown_cell(text, metadata={"grading_notes": True}))
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        cell.outputs = []
        cell.execution_count = None
        if not (utils.is_grade(cell) and not utils.is_solution(cell)):
            return cell, resources
        gid = cell.metadata.nbgrader["grade_id"]
        result = (self.verdict or {}).get("cells", {}).get(gid)
        if result is None:
            cell.outputs = [new_output("error", ename="NotGraded", evalue="this test cell was not graded",
                                       traceback=["NotGraded: this test cell was not graded"])]
            return cell, resources
        lines = result["lines"]
        if lines:
            wrapped = [textwrap.fill(ln, width=96, subsequent_indent="    ") for ln in lines]
            cell.outputs.append(new_output("stream", name="stdout", text="\n".join(wrapped) + "\n"))
        if not result["passed"]:
            failed = [ln for ln in lines if ln.startswith("✗")]
            cell.outputs.append(new_output(
                "error", ename="CheckFailed", evalue=f"{len(failed)} check(s) failed",
                traceback=[f"CheckFailed: {len(failed)} check(s) failed (see above)"]))
        return cell, resources
