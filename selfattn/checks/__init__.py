"""The exercise checks, shared by the notebooks and the autograder, imported in one direction.

Each module imports only those listed before it:

- :mod:`~selfattn.checks.calling`: calling student code, results as arrays (stdlib and NumPy only:
  the grading sandbox runs it as a top-level module);
- :mod:`~selfattn.checks.findings`: what a failed check found, as data;
- :mod:`~selfattn.checks.problem20`: reading Problem 20's matrices (their shapes, what they do on a
  sequence), for its checks and for ``compare()``;
- :mod:`~selfattn.checks.identities`: a wrong result that is the right one transposed, negated, times a
  constant, shifted, rounded, wrapped around or squeezed (NumPy only);
- :mod:`~selfattn.checks.record`: the records (``Exercise``, ``Check``, the registry) and the comparisons
  verifiers use;
- :mod:`~selfattn.checks.judging`: deciding a check from its calls' outcomes (notebook and grader alike);
- :mod:`~selfattn.checks.fair_blame`: one mistake, one deduction;
- :mod:`~selfattn.checks.exercises`: the course's exercises (importing it registers the public checks);
- :mod:`~selfattn.checks.kernel_cells`: which text the grader reads for a function in a notebook kernel;
- :mod:`~selfattn.checks.module_state`: the kernel's state that grading starts without (module attributes,
  NumPy's error handling, the working folder), put back while a check runs as graded;
- :mod:`~selfattn.checks.notebook`: ``check()`` and ``summary()``.

Released notebooks import ``selfattn.checking`` and ``selfattn.exercise_checks``, which re-export
these. This package's own ``__init__`` imports nothing, so the sandbox's ``calling`` and the
grader's imports load only what they use.
"""
