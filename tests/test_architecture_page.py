"""The architecture page matches the code: every repository path it cites exists, every file it names
by itself is somewhere in the repository, every function it cites with ``()`` is defined, and every
dotted ``selfattn.``/``autograder.`` name resolves (generated files of the work folder aside)."""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
#: files and folders the page names that runs make (the work folder, the wheel's table)
GENERATED = {".grading/history/", ".intake/taken.json", "due-dates.csv", "exports/canvas.csv", "exports/moodle.csv",
             "grades.csv", "grading-summary.txt", "report/index.html", "roster.csv", "selfattn/withheld.npz",
             "submitted/", "timestamp.txt"}
CODE_FOLDERS = ("autograder", "selfattn", "scripts", "student", "benchmarks", "tests")


def _cited() -> set[str]:
    return {t for t in re.findall(r"`([^`\n]+)`", PAGE.read_text(encoding="utf-8")) if "<" not in t and "..." not in t}


def _files() -> set[str]:
    return {p.name for p in ROOT.rglob("*") if ".git" not in p.parts and "node_modules" not in p.parts
            and ".venv" not in p.parts and "_build" not in p.parts}


def test_every_path_the_page_cites_exists():
    names = _files()
    missing = []
    for token in _cited():
        if token in GENERATED or not re.fullmatch(r"[\w.\-/]+\.(py|md|j2|json|csv|txt|ipynb|sh|yml|toml|html)|[\w.\-]+/"
                                                  r"[\w.\-/]*", token):
            continue
        if "/" in token.rstrip("/"):
            first = token.split("/")[0]
            if not (first.startswith(".") or (ROOT / first).exists() or (ROOT / "autograder" / first).exists()
                    or "." in token.rsplit("/", 1)[-1]):
                continue  # not a path of this repository (a MathJax extension's name, say)
            if not any((base / token.rstrip("/")).exists() for base in (ROOT, ROOT / "autograder")):
                missing.append(token)
        elif token.rstrip("/") not in names:
            missing.append(token)
    assert not missing, f"docs/architecture.md cites what the repository does not have: {sorted(missing)}"


def test_every_function_and_module_the_page_cites_exists():
    code = "\n".join(p.read_text(encoding="utf-8") for d in CODE_FOLDERS for p in (ROOT / d).rglob("*.py"))
    missing = []
    for token in _cited():
        if m := re.fullmatch(r"([A-Za-z_][\w.]*)\(\)", token):
            name = m.group(1).rsplit(".", 1)[-1]
            if not re.search(rf"\bdef {re.escape(name)}\b", code):
                missing.append(token)
        elif re.fullmatch(r"(selfattn|autograder)(\.\w+)+", token):
            module, _, attribute = token.rpartition(".")
            try:
                importlib.import_module(token)
            except ImportError:
                try:
                    getattr(importlib.import_module(module), attribute)
                except (ImportError, AttributeError):
                    missing.append(token)
    assert not missing, f"docs/architecture.md cites names the code does not define: {sorted(missing)}"


#: names the page cites that belong to Python, the kernel, nbgrader or the browser, not to this
#: repository (each looked up here by hand: a name of the repository must not be listed)
EXTERNAL = {
    "NotImplementedError": "Python's", "os._exit": "Python's", "sys.exit": "Python's", "sys.modules": "Python's",
    "RLIMIT_NPROC": "the kernel's rlimit", "RWF_NOWAIT": "the kernel's preadv2 flag", "io_uring": "a system call",
    "O_NOFOLLOW | O_NONBLOCK": "open(2) flags", "allow_pickle=False": "NumPy's np.load argument",
    "submitted_directory": "nbgrader's trait", "generate_feedback": "nbgrader's step",
    "release_feedback": "nbgrader's step", "metadata.selfattn.notes": "a notebook's metadata key",
    "remove-input": "a Jupyter Book cell tag", "text-align": "a CSS property", "selfattn-sandbox": "a system user",
    "data:image/png|jpeg|gif": "URL schemes", "help=": "traitlets' argument",
    "doe_jane": "an example of a folder's name",
}


#: a file's name (the path test above checks those)
FILE = re.compile(r"[\w.\-/]+\.(py|md|j2|json|csv|txt|ipynb|sh|yml|toml|html|npz)")


def _defined(code: str) -> set[str]:
    """Every name the code defines: functions, classes, module-level and class-level assignments."""
    assigned = re.findall(r"^\s*(\w+(?:\s*,\s*\w+)*)\s*(?::[^=\n]+)?=[^=]", code, re.M)  # a, b = ...
    return set(re.findall(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", code, re.M)) | {
        name.strip() for names in assigned for name in names.split(",")}


def _modules() -> set[str]:
    return set(CODE_FOLDERS) | {p.stem for d in CODE_FOLDERS for p in (ROOT / d).rglob("*.py")} | {
        p.name for d in CODE_FOLDERS for p in (ROOT / d).rglob("*") if p.is_dir()}


def unresolved(token: str, defined: set[str], modules: set[str], targets: set[str], code: str) -> bool:
    """Whether ``token``, a code name, command, flag or variable cited by the page, has nothing
    behind it in the repository (False for what is not such a name: plain words, markup)."""
    if token in EXTERNAL or token in GENERATED:
        return False
    if m := re.fullmatch(r"make ([\w-]+)", token):
        return m.group(1) not in targets
    if m := re.fullmatch(r"python -m ([\w.]+)( .*)?", token):
        return importlib.util.find_spec(m.group(1)) is None
    if m := re.fullmatch(r"--([\w-]+)(\.\*)?", token):
        return f'"--{m.group(1)}"' not in code and f"--{m.group(1)}." not in code
    if m := re.fullmatch(r"\$([A-Z][A-Z0-9_]+)|([A-Z][A-Z0-9_]+)=\w+", token):  # an environment variable
        return f'"{m.group(1) or m.group(2)}"' not in code
    if not re.fullmatch(r"[A-Za-z_]\w*(\.\w+)*(\(\))?", token) or FILE.fullmatch(token):
        return False
    name = token.removesuffix("()")
    if re.fullmatch(r"(selfattn|autograder)(\.\w+)+", name):
        return False  # the dotted test above imports these
    parts = name.split(".")
    if len(parts) == 1 and not ("_" in name or name != name.lower() or token.endswith("()")):
        return False  # a plain lower-case word: prose or a module, not checkable as a name
    return any(p not in defined and p not in modules and p != "c" for p in parts)  # c: nbgrader's config


def test_every_name_command_flag_and_variable_the_page_cites_exists():
    """A class, function or constant (``Workspace``, ``Settings.apply``, ``KEY_EXCLUDED``), a
    ``make`` target, a ``python -m`` module, a flag and an environment variable named by the page
    are each defined in the repository (or listed in EXTERNAL as someone else's)."""
    code = "\n".join(p.read_text(encoding="utf-8") for d in CODE_FOLDERS for p in (ROOT / d).rglob("*.py"))
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    defined, modules = _defined(code), _modules()
    missing = sorted(t for t in _cited() if unresolved(t, defined, modules, targets, code))
    assert not missing, f"docs/architecture.md cites what the repository does not define: {missing}"
    stale = sorted(set(EXTERNAL) - _cited())
    assert not stale, f"EXTERNAL lists names the page no longer cites: {stale}"


def test_the_check_above_finds_what_is_not_there():
    defined, modules, targets = {"Settings", "apply", "KEY_EXCLUDED"}, {"decide", "verdicts"}, {"grade"}
    code = 'p.add_argument("--one")\nos.environ.get("SELFATTN_SANDBOX")'

    def gone(token: str) -> bool:
        return unresolved(token, defined, modules, targets, code)

    assert not any(map(gone, ["Settings.apply", "KEY_EXCLUDED", "make grade", "--one", "SELFATTN_SANDBOX=fallback",
                              "bpf", "python -m autograder.grade --help-config", "verdicts.decide"]))
    assert all(map(gone, ["Settings.resolve", "resolve()", "KEY_KEPT", "Workspace", "make regrade", "--two",
                          "SELFATTN_NOTHING=1", "$AUTOGRADER_NOWHERE", "python -m autograder.nothing"]))


#: what docstrings may cite with a Sphinx role that is not the repository's
OUTSIDE_ROLES = {"csv.QUOTE_ALL", "ast"}
ROLE = re.compile(r":(?:func|class|data|mod|meth|attr|obj|exc):`~?([\w.]+)(?:\(\))?`")
#: the first exception a numpy-style ``Raises`` section names
RAISES = re.compile(r"Raises\n\s*-+\n\s*([\w.]+)\n")


def _resolves(dotted: str) -> bool:
    """Whether ``selfattn.x.y`` (or ``autograder.``) imports, or is an attribute of what does."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, getattr(obj, "__dataclass_fields__", {}).get(attr))
            if obj is None:
                return False
        return True
    return False


def stale_references(text: str, defined: set[str], modules: set[str]) -> list[str]:
    """Names cited with ``:func:``, ``:class:``, ``:data:``... in ``text`` that nothing defines
    (a dotted name of the grader or the course package is imported, any other looked up by part)."""
    return [name for name in ROLE.findall(text) + RAISES.findall(text) if name not in OUTSIDE_ROLES
            and not hasattr(builtins, name) and (
        not _resolves(name) if name.startswith(("selfattn.", "autograder.")) else
        any(part not in defined and part not in modules for part in name.split(".")))]


def test_docstrings_cite_only_names_that_exist():
    """A docstring naming a function, class or constant (``:func:`stage_all```) names one that is
    still defined: a rename or a move updates the docstrings that point to it."""
    sources = {p: p.read_text(encoding="utf-8") for d in CODE_FOLDERS if d != "tests"
               for p in (ROOT / d).rglob("*.py") if "jupyter_data" not in p.parts}
    defined, modules = _defined("\n".join(sources.values())), _modules()
    stale = [f"{p.relative_to(ROOT)}: {name}" for p, text in sorted(sources.items())
             for name in stale_references(text, defined, modules)]
    assert not stale, f"docstrings cite names that are gone: {stale}"
    assert stale_references("see :func:`gone` and :data:`~pkg.KEPT`", {"KEPT"}, {"pkg"}) == ["gone"]
    assert stale_references("Raises\n    ------\n    autograder.errors.Refused\n        why", set(), set()) == [
        "autograder.errors.Refused"]
    assert stale_references(":func:`autograder.sandbox.run` :func:`autograder.sandbox.ran`", set(), set()) == [
        "autograder.sandbox.ran"]
