"""Nothing a student receives answers an exercise: the leak test by meaning, not by text.

For every graded function (the answer cells' grade ids), every function defined in the student
wheel (``scripts/build_student.py``) and every code block of the built site, pasted as that
function's answer, must fail its hidden checks. A pasted answer runs as grading runs an answer
cell: in a fresh namespace with NumPy only, no import of the course package; its calls go through
the grader's own calling and judging code (``selfattn.checks.calling.call_cases``, then
``autograder.verdicts.decide._judged`` on the outcomes, as a sandboxed run returns them). The pasted
code is ours (the wheel's and the site's), so it runs in this process, each call stopped after
:data:`SECONDS`.

A block is pasted with its context: a module (or a site block) runs statement by statement (one
failing statement does not stop the next), then each function or lambda in it is bound to the
graded name; a top-level assignment of a site block is also tried as the whole body of the graded
function returning what it assigns (``Q, K, V = X @ W_Q, ...`` answers ``project``).

The control test pastes the repository's own ``selfattn`` the same way: it must answer the graded
functions, or this test could not fail. Then the student package's ``check()`` and ``compare()``
must say what the full package says on the catalogues.
"""

from __future__ import annotations

import ast
import contextlib
import html
import io
import json
import re
import struct
import subprocess
import sys
import textwrap
import warnings
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
TESTS = ROOT / "tests"
#: Seconds a pasted function may run on all its hidden inputs (the package's own implementations
#: need at most 10 ms: a margin of 50).
SECONDS = 0.5


def _graded() -> dict[str, str]:
    """Graded function -> its parameters, from the released notebooks' answer cells (``def f(...)``)."""
    out = {}
    for path in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
                found = re.search(rf"def {re.escape(gid)}\((.*?)\):", cell.source, re.S)
                assert found, f"{path.name}: the answer cell {gid} defines no function {gid}"
                out[gid] = " ".join(found.group(1).split())
    return out


GRADED = _graded()


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    from selfattn.checks.calling import allowed_imports_only

    sink = io.StringIO()
    with (allowed_imports_only(), warnings.catch_warnings(), contextlib.redirect_stdout(sink),
          contextlib.redirect_stderr(sink), np.errstate(all="ignore")):
        warnings.simplefilter("ignore")
        yield


def passes_hidden_checks(function: str, fn: Callable[..., Any], seed: int = 0) -> bool:
    """Whether ``fn``, as the answer ``function``, passes its hidden checks and its public ones
    (grading's verdict); a function without inputs (``shape_answers``) has public checks only."""
    import autograder.hidden_checks  # noqa: F401 - attaches the hidden checks
    from autograder import sandbox
    from autograder.verdicts import decide as verdicts
    from selfattn.checks.calling import TimeLimit, call_cases
    from selfattn.checks.exercises import EXERCISES
    from selfattn.checks.notebook import time_limit

    checks = EXERCISES[function].checks
    ids, hidden = [c.id for c in checks], {c.id for c in checks if c.hidden}
    assert hidden or all(not case.args for c in checks for case in c.cases(np.random.default_rng(0))), \
        f"{function} has no hidden check"
    cases = {c.id: c.cases(np.random.default_rng(seed)) for c in checks}
    # Grading runs every case in one sequence and judges each check on its own slice of it; the
    # candidate fails at its first failing check, so the checks after it need not run (every check
    # passed means every case ran, in grading's order).
    try:
        with _quiet(), time_limit(SECONDS):
            for cid in ids:
                outcomes = call_cases(fn, cases[cid])
                found = verdicts._judged(sandbox.RunResult(outcomes, None, [], 0.0), [cid], cases, hidden)
                if found[cid] is not None:
                    return False
    except TimeLimit:  # stopped between two calls: as in grading, too slow is no answer
        return False
    return True


def _run_statements(tree: ast.Module, namespace: dict[str, Any], label: str) -> None:
    """Each top-level statement of ``tree`` as an answer cell would run it, failures ignored; the
    package's relative imports are dropped (grading has no package)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.level:
            continue
        try:
            with _quiet():
                exec(compile(ast.Module([stmt], []), label, "exec"), namespace)
        except BaseException:
            continue


def pasted(source: str, label: str, assignments: bool = False) -> Iterator[tuple[str, str | None, Any]]:
    """(where, the graded function it is tried as or ``None`` for all, function) for every function
    and lambda of ``source`` run as an answer cell, and with ``assignments`` every top-level
    assignment made the body of each graded function."""
    from selfattn.checks.calling import fresh_namespace

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    namespace = fresh_namespace()
    _run_statements(tree, namespace, label)
    top = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            where = f"{label}:{node.lineno} {getattr(node, 'name', 'lambda')}"
            if id(node) in top and callable(namespace.get(node.name)):
                yield where, None, namespace[node.name]
                continue
            segment = ast.get_source_segment(source, node)
            if segment is None:
                continue
            scope = dict(namespace)
            try:
                with _quiet():
                    if isinstance(node, ast.Lambda):
                        fn = eval(compile(segment, label, "eval"), scope)
                    else:
                        exec(compile(textwrap.dedent(segment), label, "exec"), scope)
                        fn = scope[node.name]
            except BaseException:
                continue
            yield where, None, fn
    if not assignments:
        return
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = ast.get_source_segment(source, stmt.targets[0])
            body = textwrap.indent(ast.get_source_segment(source, stmt) or "", "    ")
            for function, params in GRADED.items():
                scope = dict(namespace)
                try:
                    with _quiet():
                        exec(f"def {function}({params}):\n{body}\n    return {target}\n", scope)
                except BaseException:
                    continue
                yield f"{label}:{stmt.lineno} assignment", function, scope[function]


def answers_given(candidates: Iterator[tuple[str, str | None, Any]]) -> list[str]:
    """Where a candidate passes the hidden checks of a graded function."""
    found = []
    for where, only, fn in candidates:
        for function in [only] if only else GRADED:
            if passes_hidden_checks(function, fn):
                found.append(f"{where} answers {function}")
    return found


def _python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.fixture(scope="module")
def bundle(student_bundle) -> Path:
    """The student bundle's archive, built as ``make student`` builds it (wheel included)."""
    return student_bundle / "selfattn-course.zip"


@pytest.fixture(scope="module")
def wheel(bundle, tmp_path_factory) -> Path:
    """The student wheel of the bundle, unpacked."""
    out = tmp_path_factory.mktemp("wheel")
    with zipfile.ZipFile(bundle) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".whl")]
        (out / "selfattn.whl").write_bytes(z.read(name))
    with zipfile.ZipFile(out / "selfattn.whl") as z:
        z.extractall(out / "unpacked")
    return out / "unpacked"


# ------------------------------------------------------------------ no encoding of an answer ships
def shipped(data: bytes, where: str) -> Iterator[tuple[str, bytes]]:
    """(where, bytes) of ``data`` and, when it is a zip (the bundle, the wheel, an ``.npz``), of
    every member inside, recursively, uncompressed."""
    yield where, data
    if data[:4] != b"PK\x03\x04":
        return
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for name in z.namelist():
            yield from shipped(z.read(name), f"{where}!{name}")


_HASHES = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "blake2s", "sha3_256", "sha3_512")
_DTYPES = tuple(f"{order}{kind}" for order in "<>" for kind in ("i2", "i4", "i8", "u2", "u4", "u8", "f4", "f8"))


def _forms(a: np.ndarray) -> list[bytes]:
    """Byte strings a package could store ``a`` as: its bytes in each integer and float type
    (both byte orders), its text forms, and the digest scheme the withheld records once used
    (shape, then float64 bytes)."""
    a = np.asarray(a)
    out = [np.ascontiguousarray(a.astype(dt)).tobytes() for dt in _DTYPES]
    out += [repr(a.shape).encode() + np.ascontiguousarray(a.astype(np.float64)).tobytes()]
    values = a.astype(int).tolist() if (a == np.round(a)).all() else a.tolist()
    out += [t.encode() for t in (str(values), json.dumps(values), repr(a), str(a), np.array2string(a, separator=","))]
    return out


def _digests(form: bytes) -> list[bytes]:
    """Every digest of ``form`` in every common hash, as raw bytes, hex (both cases) and base64."""
    import base64
    import hashlib

    out = []
    for name in _HASHES:
        raw = hashlib.new(name, form).digest()
        out += [raw, raw.hex().encode(), raw.hex().upper().encode(), base64.b64encode(raw).rstrip(b"=")]
    return out


def value_answers() -> dict[str, np.ndarray]:
    """Graded function -> its answer, for every exercise whose answer is a value (a function
    without inputs: ``shape_answers``), from the repository's own package."""
    import autograder.hidden_checks  # noqa: F401 - a value's checks are hidden too
    from selfattn.checks.calling import to_arrays
    from selfattn.checks.exercises import EXERCISES

    return {e.function: to_arrays(e.reference())[0] for e in EXERCISES.values()
            if e.takes_no_input and e.reference is not None}


def answer_needles(answer: np.ndarray) -> dict[bytes, str]:
    """Byte string -> what it encodes: the whole answer in every form of :func:`_forms` and every
    digest of those forms, and every digest of each of its rows (a row alone is too short to
    look for as it is: its bytes occur by chance)."""
    needles = {}
    for i, form in enumerate(_forms(answer)):
        needles[form] = f"the answer (form {i})"
        needles.update({d: f"a digest of the answer (form {i})" for d in _digests(form)})
    for r, row in enumerate(answer if answer.ndim > 1 else []):
        for i, form in enumerate(_forms(row)):
            needles.update({d: f"a digest of row {r} (form {i})" for d in _digests(form)})
    return needles


def answers_found(items: Iterator[tuple[str, bytes]], answers: dict[str, np.ndarray]) -> list[str]:
    """Where an encoding of a value answer occurs among ``items``, and what a brute force over
    the answer's small space recovers from the hexadecimal tokens shipped (each row of
    ``shape_answers`` is two small integers: every pair below 1024 is hashed as the withheld
    records once hashed a row, and as int64 bytes, and looked up among those tokens)."""
    import hashlib

    items = list(items)
    found = []
    needles = {n: f"{fn}: {what}" for fn, a in answers.items() for n, what in answer_needles(a).items()}
    tokens = set()
    for where, data in items:
        found += [f"{where}: {what}" for n, what in needles.items() if n in data]
        tokens |= {t.lower() for t in re.findall(rb"[0-9A-Fa-f]{32,128}", data)}
    small = {fn: a for fn, a in answers.items() if a.ndim == 2 and a.shape[1] == 2 and (a == np.round(a)).all()
             and 0 <= a.min() and a.max() < 1024}
    if small and tokens:
        prefix = repr((2,)).encode()
        for x in range(1024):
            for y in range(1024):
                for form in (prefix + struct.pack("<dd", x, y), struct.pack("<qq", x, y)):
                    if hashlib.sha256(form).hexdigest().encode() in tokens:
                        found.append(f"brute force: a digest of the row ({x}, {y}) is shipped")
    return found


def test_the_scan_finds_an_answer_stored_in_any_encoding():
    """Control: planted in a zip inside a zip, each way of storing the answer is found, and the
    brute force recovers a row from a digest alone (the wheel once shipped such digests)."""
    import hashlib

    answers = value_answers()
    assert set(answers) == {"shape_answers"}, answers
    answer = answers["shape_answers"]

    def zipped(payload: bytes) -> bytes:
        inner, outer = io.BytesIO(), io.BytesIO()
        with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("withheld.npz", payload)
        with zipfile.ZipFile(outer, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("wheels/selfattn.whl", inner.getvalue())
        return outer.getvalue()

    assert answers_found(shipped(zipped(b"nothing here"), "clean"), answers) == []
    planted = [*_forms(answer)[:: 3], _digests(_forms(answer)[-1])[1], _digests(_forms(answer[3])[0])[0]]
    for payload in planted:
        assert answers_found(shipped(zipped(b"x" + payload + b"y"), "planted"), answers), payload
    row = hashlib.sha256(repr((2,)).encode() + np.array([7.0, 300.0]).tobytes()).hexdigest()
    found = answers_found(shipped(zipped(json.dumps({"rows": [row]}).encode()), "digest"), {"shape_answers": answer})
    assert found == ["brute force: a digest of the row (7, 300) is shipped"], found


def test_no_value_digest_or_encoding_of_an_answer_is_in_the_student_bundle(bundle):
    """Everything the bundle holds (notebooks, the wheel and every file in it, the withheld
    records' arrays and index) is scanned for every encoding and digest of every answer that is
    a value, and the brute force over its small space recovers nothing."""
    found = answers_found(shipped(bundle.read_bytes(), bundle.name), value_answers())
    assert not found, "\n".join(found[:20])


def test_the_leak_test_finds_the_repositorys_own_implementations():
    """Control: the full package, pasted the same way, answers the graded functions it implements."""
    found = []
    for path in _python_files(ROOT / "selfattn"):
        found += answers_given(pasted(path.read_text(), f"selfattn/{path.name}"))
    answered = {line.rpartition(" answers ")[2] for line in found}
    assert {"softmax", "attention", "causal_mask", "padding_mask", "scaled_scores", "softmax_jacobian",
            "attention_flops", "crossover_length", "embed", "project", "permutation_matrix"} <= answered, found


def test_no_function_of_the_student_wheel_answers_an_exercise(wheel):
    files = _python_files(wheel / "selfattn")
    assert len(files) > 15 and (wheel / "selfattn" / "withheld.npz").exists()
    found = []
    for path in files:
        found += answers_given(pasted(path.read_text(), f"wheel:selfattn/{path.name}"))
    assert not found, "\n".join(found)


def test_the_student_wheels_graded_functions_are_stubs(wheel):
    """Called from a student's code, on any input (the checks' own too), the package's graded
    functions raise one line saying why."""
    script = textwrap.dedent("""
        import numpy as np, selfattn
        calls = [lambda: selfattn.softmax(np.ones((2, 3))), lambda: selfattn.attention(*np.ones((3, 2, 2))),
                 lambda: selfattn.causal_mask(3), lambda: selfattn.padding_mask([1], 2),
                 lambda: selfattn.scaled_scores(np.ones((2, 2)), np.ones((2, 2))),
                 lambda: selfattn.softmax_jacobian(np.ones(2) / 2), lambda: selfattn.attention_flops(3, 4),
                 lambda: selfattn.crossover_length(3), lambda: selfattn.embed(np.eye(3), [1]),
                 lambda: selfattn.lecture_shapes(T=3), lambda: selfattn.score_stds(np.ones((2, 2)), np.ones((2, 2))),
                 lambda: selfattn.causal_mask(4), lambda: selfattn.lecture_shapes()]  # inputs the checks use
        for call in calls:
            try:
                call()
                print("answered")
            except NotImplementedError as exc:
                print(type(exc).__name__, exc)
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=wheel, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(wheel), "PATH": "/usr/bin:/bin"})
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and len(lines) == 13, run.stdout + run.stderr
    for line in lines:
        assert line.startswith("Withheld ") and "does not give away graded functions" in line, line


def _site_blocks() -> Iterator[tuple[str, str]]:
    """(where, code) of every code block the built site holds: ``<pre>`` blocks of its pages and
    the code cells of any source it ships (``.md``, ``.ipynb``, ``.py``)."""
    for path in sorted(SITE.rglob("*")):
        rel = str(path.relative_to(SITE))
        if path.suffix == ".html":
            for i, block in enumerate(re.findall(r"<pre[^>]*>(.*?)</pre>", path.read_text(errors="replace"), re.S)):
                yield f"{rel}#pre{i}", html.unescape(re.sub(r"<[^>]+>", "", block))
        elif path.suffix == ".ipynb":
            for i, cell in enumerate(nbformat.reads(path.read_text(errors="replace"), as_version=4).cells):
                if cell.cell_type == "code":
                    yield f"{rel}#cell{i}", cell.source
        elif path.suffix in (".md", ".txt") and "code-cell" in (text := path.read_text(errors="replace")):
            for i, block in enumerate(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S)):
                yield f"{rel}#cell{i}", re.sub(r"(?m)^:\w[^\n]*\n", "", block)
        elif path.suffix == ".py":
            yield rel, path.read_text(errors="replace")


def test_no_code_block_of_the_site_answers_an_exercise():
    assert (SITE / "index.html").exists(), "the site is not built: run `make book` first"
    blocks = list(_site_blocks())
    assert len(blocks) > 20, f"only {len(blocks)} code blocks found on the site"
    found = []
    for where, code in blocks:
        found += answers_given(pasted(code, where, assignments=True))
    assert not found, "\n".join(found)


# ------------------------------------------------------------------ check() and compare() unchanged
_VERDICTS = textwrap.dedent("""
    import json, sys
    import numpy as np
    from selfattn.checks.calling import fresh_namespace
    from selfattn.checks.judging import run_check
    from selfattn.checks.record import REGISTRY
    from selfattn.compare import EXAMPLES, compare
    import selfattn.exercise_checks

    out = {}
    for name, function, context, source in json.load(sys.stdin):
        ns = fresh_namespace()
        for cell in context:
            exec(cell, ns)
        exec(source, ns)
        fn = ns[function]
        said = [str(run_check(c, fn)) for c in REGISTRY.values() if c.function == function and not c.hidden]
        if function in EXAMPLES:
            said.append(compare(fn, name=function).verdict)
        out[name] = said
    print(json.dumps(out))
""")


def _entries() -> list[tuple[str, str, list[str], str]]:
    """(name, function, cells it calls, answer) of each catalogue answer that is a plain cell."""
    from grading_support import SOLUTIONS, read_entry

    from selfattn.checks.exercises import EXERCISES

    solved = {}
    for path in SOLUTIONS.glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code":
                solved[cell.metadata["nbgrader"]["grade_id"]] = cell.source
    out = []
    for folder in ("correct", "wrong"):
        for path in sorted((TESTS / "catalogue" / folder).glob("*.py")):
            entry = read_entry(path)
            if entry.kind != "cell" or entry.replace not in EXERCISES:
                continue
            context = [solved[d] for d in EXERCISES[entry.replace].dependency_names]
            out.append((f"{folder}/{path.name}", entry.replace, context, path.read_text()))
    return out


def _verdicts(entries: list, pythonpath: Path) -> dict[str, list[str]]:
    run = subprocess.run([sys.executable, "-c", _VERDICTS], input=json.dumps(entries), capture_output=True,
                         text=True, timeout=900, cwd=pythonpath,
                         env={"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"})
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def test_check_and_compare_say_in_the_student_package_what_they_say_today(wheel):
    entries = _entries()
    assert len(entries) > 40
    full, student = _verdicts(entries, ROOT), _verdicts(entries, wheel)
    differ = {k: (full[k], student[k]) for k in full if full[k] != student[k]}
    assert not differ, json.dumps(differ, indent=1, ensure_ascii=False)[:4000]
    assert any(v[0] == "None" for v in full.values()) and any(v[0] != "None" for v in full.values())
