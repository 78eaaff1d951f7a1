"""Mutation scores of the modules that handle student input or decide a grade.

Usage: ``python -m benchmarks.mutation [--only MODULE ...] [--survivors]`` (``make mutation``).

Each module is mutated with its own fast tests only (:data:`MODULES`), one module at a time, each in
one pytest process that forks a child per mutant (:mod:`benchmarks.mutation.plugin`). Prints one line
per module: mutants killed of all, the score, the seconds taken; ``--survivors`` adds every surviving
mutant (function, line, change). The accepted survivors, and why, are listed in docs/mutation.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: each module that faces student input or decides a grade, with the fast tests that guard it
MODULES: dict[str, list[str]] = {
    "autograder.intake.untrusted": ["tests/test_untrusted_input.py"],
    "autograder.intake.stored_outputs": ["tests/test_untrusted_input.py"],
    "autograder.outputs.sanitise": ["tests/test_sanitise_bounds.py", "tests/test_sanitise.py",
                                    "tests/test_report_template.py"],
    "autograder.sandbox.channel": ["tests/test_result_channel.py"],  # (what reads the run's results: FUNCTIONS)
    "autograder.verdicts.decide": ["tests/test_decide_parts.py", "tests/test_verdict_key.py",
                                   "tests/test_results_as_data.py", "tests/test_history.py",
                                   "tests/test_decide_runs.py"],
    "autograder.verdicts.history": ["tests/test_history_edges.py", "tests/test_history.py"],
    "autograder.verdicts.regrade_reason": ["tests/test_history_edges.py", "tests/test_regrade_reason.py"],
    "autograder.late.due_dates": ["tests/test_late_gradebook.py", "tests/test_late_policy.py"],
    "autograder.late.penalties": ["tests/test_late_gradebook.py", "tests/test_late_policy.py",
                                  "tests/test_final_score_arithmetic.py"],
    "autograder.late.policy": ["tests/test_late_policy.py", "tests/test_late_gradebook.py",
                               "tests/test_final_score_arithmetic.py"],
    "autograder.outputs.csv_export": ["tests/test_spreadsheet_cells.py", "tests/test_grades_csv_order.py",
                                      "tests/test_run_workspace_edges.py"],
    "autograder.outputs.lms_export": ["tests/test_lms_rows.py", "tests/test_lms_exports.py"],
    "selfattn.checks.judging": ["tests/test_judging_edges.py", "tests/test_checks.py"],
    "selfattn.checks.findings": ["tests/test_findings_edges.py", "tests/test_findings.py", "tests/test_checks.py"],
    "autograder.intake.inbound": ["tests/test_inbound_entries.py", "tests/test_inbound_rules.py"],
    "autograder.intake.zips": ["tests/test_intake_refusals.py", "tests/test_intake_zips.py"],
    "autograder.intake.staging": ["tests/test_staging_repairs.py", "tests/test_notes_data.py",
                                  "tests/test_nbgrader_contract.py"],
    "autograder.intake.scan": ["tests/test_intake_scan.py"],
    "autograder.intake.ignored_notebooks": ["tests/test_ignored_notebook_names.py"],
    "autograder.late.clock": ["tests/test_lateness_words.py", "tests/test_late_policy.py"],
    "autograder.outputs.json_files": ["tests/test_json_formats.py", "tests/test_results_as_data.py"],
    "autograder.verdicts.blame": ["tests/test_blame_logic.py"],
    "autograder.verdicts.hidden_inputs": ["tests/test_hidden_inputs.py"],
}


#: the functions mutated in a module where not all of it faces student input or is unit-tested: the
#: sandbox's channel also writes the grader's frames and drives the pipe (the sandbox's pipeline tests hold
#: those). (All of autograder.verdicts.decide is mutated: its runs are tested with the sandbox's run replaced
#: by one in this process, tests/test_decide_runs.py.)
FUNCTIONS: dict[str, list[str]] = {
    "autograder.sandbox.channel": ["parse_frame", "read_outcome", "read_cell_errors", "disk_full", "_error_type"],
}


def run_module(module: str, tests: list[str]) -> dict:
    """Mutate one module under its tests; the plugin's results (baseline, one entry per mutant)."""
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        out = Path(tmp, "results.json")
        env = dict(os.environ, SELFATTN_MUTATION_MODULE=module, SELFATTN_MUTATION_OUT=str(out),
                   SELFATTN_MUTATION_FUNCTIONS=",".join(FUNCTIONS.get(module, [])), PYTHONDONTWRITEBYTECODE="1")
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
             "-p", "benchmarks.mutation.plugin", *tests], cwd=ROOT, env=env, capture_output=True, text=True)
        if not out.exists():
            raise SystemExit(f"{module}: pytest ended with status {done.returncode} before mutating:\n"
                             f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return json.loads(out.read_text(encoding="utf-8"))


def main(argv: list[str]) -> int:
    """Print the score of every module (or of ``--only`` ones); status 1 if a baseline failed."""
    chosen = [a for i, a in enumerate(argv) if i and argv[i - 1] == "--only"] or list(MODULES)
    status = 0
    print(f"{'module':38} {'killed':>12} {'score':>7} {'seconds':>8}")
    for module in chosen:
        start = time.monotonic()
        results = run_module(module, MODULES[module])
        mutants = results["mutants"]
        if results["baseline"]["status"] != 0:
            print(f"{module:38} the unmutated module fails its tests (status {results['baseline']['status']})")
            status = 1
            continue
        killed = sum(m["outcome"] in ("killed", "timeout") for m in mutants)
        score = 100.0 * killed / len(mutants) if mutants else 100.0
        print(f"{module:38} {killed:>5} of {len(mutants):<4} {score:6.1f}% {time.monotonic() - start:8.0f}",
              flush=True)
        if "--survivors" in argv:
            for m in mutants:
                if m["outcome"] not in ("killed", "timeout"):
                    print(f"    {m['outcome']:11} {m['function']}:{m['line']}  {m['change']}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
