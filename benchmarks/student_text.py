"""What hostile written answers cost a feedback page (the caps and budget of
:mod:`autograder.nbgrader_ext.feedback_text`), against a plain answer.

Each case is one student cell rendered as the feedback page renders it (math, Markdown, the
allow-list sanitiser), with a fresh per-notebook budget; the target is that none costs more than
the page's budget (:data:`~autograder.nbgrader_ext.feedback_text.RENDER_SECONDS`) plus one cell.
"""

from __future__ import annotations

import time

from nbconvert.exporters import HTMLExporter

from autograder.nbgrader_ext import feedback_text as ft

CASES = {
    "plain answer (2 formulas)": "Scaling by $1/\\sqrt{d_k}$ keeps $\\operatorname{Var}(q \\cdot k) = 1$.\n" * 20,
    "one formula of 990,000 characters": "$" + "x^2+" * 247_500 + "y$",
    "20 formulas just under the cap": ("$" + "x^2+" * (ft.MAX_FORMULA_CHARS // 4 - 1) + "y$ ") * 20,
    "100,000-line answer": "".join(f"line {i} $x_{{{i}}}$\n" for i in range(100_000)),
    "5,000 nested quotes": "> " * 5_000 + "deep",
    "300,000 unclosed $": "$a " * 300_000,
}


def student_text_benchmark() -> dict[str, float]:
    """Seconds each case of :data:`CASES` takes to render, with a fresh budget."""
    exporter = HTMLExporter()

    def to_html(text: str) -> str:
        return exporter.markdown2html({"cell": {}}, text)

    out = {}
    for name, text in CASES.items():
        start = time.perf_counter()
        ft.render_student(text, to_html, ft.Budget())
        out[name] = time.perf_counter() - start
    return out


def print_student_text() -> None:
    target = ft.RENDER_SECONDS + 1.0
    for name, seconds in student_text_benchmark().items():
        print(f"  {name}: {seconds:.2f} s  [target <= {target:g} s]")


if __name__ == "__main__":
    print_student_text()
