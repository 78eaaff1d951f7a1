"""Every reliance on nbgrader's, nbconvert's, traitlets' and Sphinx's internals listed in
:mod:`autograder.nbgrader_ext.nbgrader_internals` still holds with the pinned versions: the name
exists, its signature is the one the course was written for, and a body the course copied or
re-implemented is still nbgrader's (its digest). An upgrade that changes one fails here with one
line naming it."""

from __future__ import annotations

import hashlib

import pytest

from autograder.nbgrader_ext import nbgrader_internals as internals
from autograder.nbgrader_ext.nbgrader_internals import BODY_KINDS, RELIANCES, Reliance, problem


@pytest.mark.parametrize("reliance", RELIANCES, ids=lambda r: r.target)
def test_each_reliance_on_their_internals_still_holds(reliance: Reliance):
    assert problem(reliance) is None, problem(reliance)


def test_every_copied_or_re_implemented_body_is_pinned_by_a_digest_and_says_why():
    for r in RELIANCES:
        assert r.kind in ("patched", "overridden", "wrapped", "read", "default", *BODY_KINDS), r.target
        assert r.where and r.why and r.saves, f"{r.target}: where, why and what it buys"
        if r.kind in BODY_KINDS:
            assert r.digest is not None and len(r.digest) == 64, f"{r.target}: a {r.kind} body needs a digest"
    assert len({r.target for r in RELIANCES}) == len(RELIANCES), "a reliance listed twice"


def test_a_changed_body_fails_with_one_line_naming_it(monkeypatch):
    """nbgrader's OverwriteCells.preprocess with a step added (as an upgrade might): the pin names it."""
    from nbgrader.preprocessors import OverwriteCells

    copied = next(r for r in RELIANCES if r.target == "nbgrader.preprocessors.OverwriteCells.preprocess")
    assert problem(copied) is None
    original = OverwriteCells.preprocess

    def preprocess(self, nb, resources):
        nb, resources = original(self, nb, resources)
        self.log.info("a new step")
        return nb, resources

    monkeypatch.setattr(OverwriteCells, "preprocess", preprocess)
    line = problem(copied)
    assert line is not None and "\n" not in line
    assert line.startswith("nbgrader.preprocessors.OverwriteCells.preprocess: its body changed")
    assert "preloaded.py OverwriteCellsPreloaded.preprocess" in line


def test_a_changed_signature_or_a_missing_name_fails_with_one_line_naming_it():
    validate = next(r for r in RELIANCES if r.target == "traitlets.TraitType._validate")
    assert problem(validate, signature="(self, value)") == (
        "traitlets.TraitType._validate: signature is (self, obj, value), the course (autograder/settings.py) "
        "was written for (self, value)")
    gone = Reliance("nbgrader.converters", "Autograde", "_gone", "read", "here", "why", "what")
    assert problem(gone) == "nbgrader.converters.Autograde._gone: no such attribute any more"
    missing = Reliance("nbgrader.converters", "NoSuchConverter", "start", "read", "here", "why", "what")
    assert "is gone" in problem(missing)


def test_the_digest_ignores_docstrings_comments_and_layout_but_not_code():
    def one(x):
        """Doc."""
        # a comment
        return x + 1

    def two(x):
        return (x
                + 1)

    def three(x):
        return x + 2

    assert internals.normalised_source(one).replace("one", "two") == internals.normalised_source(two)
    assert internals.source_digest(three) != internals.source_digest(two)
    assert internals.source_digest(two) == hashlib.sha256(internals.normalised_source(two).encode()).hexdigest()
