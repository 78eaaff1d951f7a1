"""Formgrader's pages say which score is final and which is raw.

Formgrader's lists show the final score (the late penalty taken: :mod:`autograder.nbgrader_ext.formgrader_scores`), but
four pages also show the raw parts of it, the code, written and task scores, which the penalty is
not taken from. :func:`install` makes formgrader render those four pages from the templates in
``formgrader_templates/`` here: nbgrader's own pages (each extends nbgrader's template of that name,
reached as ``nbgrader/NAME``), their score columns headed "(final)" and "(raw)", each with a title
saying what it holds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

#: this project's versions of formgrader's pages
TEMPLATES = Path(__file__).with_name("formgrader_templates")
#: the pages that show raw parts beside the final score
LABELLED = ("gradebook_notebooks.tpl", "gradebook_notebook_submissions.tpl", "manage_students_assignments.tpl",
            "manage_students_notebook_submissions.tpl")


def labelled_loader(nbgrader_loader: Any) -> Any:
    """A Jinja loader: this project's pages first, nbgrader's (``nbgrader_loader``) for the rest and,
    under the prefix ``nbgrader/``, for the pages this project's extend."""
    from jinja2 import ChoiceLoader, FileSystemLoader, PrefixLoader

    return ChoiceLoader([FileSystemLoader(str(TEMPLATES)), PrefixLoader({"nbgrader": nbgrader_loader}),
                         nbgrader_loader])


def _labelling(render: Callable) -> Callable:
    """nbgrader's ``BaseHandler.render``, its Jinja environment given :func:`labelled_loader` first."""
    @functools.wraps(render)
    def render_labelled(self, name: str, **ns):
        env = self.settings["nbgrader_jinja2_env"]
        if not getattr(env, "selfattn_labelled", False):
            env.loader = labelled_loader(env.loader)
            env.selfattn_labelled = True
        return render(self, name, **ns)

    render_labelled.__wrapped__ = render  # type: ignore[attr-defined]
    render_labelled.selfattn = True  # type: ignore[attr-defined]
    return render_labelled


def install(base: ModuleType | None) -> None:
    """Make formgrader's pages (``base``: nbgrader's ``formgrader.base`` module, when this process is
    a formgrader) render with the labels (idempotent)."""
    if base is not None and not getattr(base.BaseHandler.render, "selfattn", False):
        base.BaseHandler.render = _labelling(base.BaseHandler.render)
