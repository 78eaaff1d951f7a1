"""What a course hands out (``make student``): nothing secret inside, and it works as delivered.

The leak scan reads every file of the bundle and of the built site, including the files inside
the wheel and the archive. The install test does what START HERE tells a student: the system's
own ``python3`` runs ``install.py`` (a fresh virtual environment, pip only), then every released
notebook runs in a kernel of that environment.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
SYSTEM_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else shutil.which("python3")
#: Lines of solution regions that are plain control flow shared with the public package's own
#: attention (selfattn.numerics): they give nothing away.
GENERIC = {"S = S + mask", "if mask is not None:"}


def _solution_lines() -> set[str]:
    lines = set()
    for path in (ROOT / "solutions").glob("*/*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            inside = False
            for line in cell.source.splitlines():
                if "BEGIN SOLUTION" in line or "END SOLUTION" in line:
                    inside = "BEGIN" in line
                elif inside and line.strip() and line.strip() not in GENERIC:
                    lines.add(line.strip())
    return lines


def _hidden_secrets() -> set[str]:
    """Hidden check ids, the module's name, and every line of it that states an input."""
    import autograder.hidden_checks as hidden
    from selfattn.checks.record import REGISTRY

    # every hidden check's id (importing the module attached them to the exercises); not the bare
    # "/hidden/", which the package's code that names such checks holds
    hidden_ids = {cid for cid in REGISTRY if "/hidden/" in cid}
    assert len(hidden_ids) >= 13, hidden_ids
    secrets = {"hidden_checks"} | hidden_ids
    source = Path(hidden.__file__).read_text()
    secrets |= {ln.strip() for ln in source.splitlines() if "Case(" in ln or "np.array(" in ln}
    return secrets


def _texts(path: Path, name: str):
    """(name, text) of a file, and of every member when it is a zip archive (wheels included)."""
    data = path.read_bytes()
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for member in z.namelist():
                yield f"{name}!{member}", z.read(member).decode("utf-8", "replace")
    else:
        yield name, data.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def bundle(student_bundle) -> Path:
    return student_bundle


def test_the_bundle_holds_what_start_here_promises(bundle):
    folder = bundle / "selfattn-course"
    notebooks = sorted(p.name for p in (folder / "notebooks" / "attention").glob("*.ipynb"))
    assert notebooks == sorted(p.name for p in (ROOT / "notebooks" / "attention").glob("*.ipynb"))
    (wheel,) = (folder / "wheels").glob("selfattn-*.whl")
    members = zipfile.ZipFile(wheel).namelist()
    assert "selfattn/checking.py" in members and not any(m.startswith("autograder/") for m in members)
    # the checks package and the paths released notebooks import (the shims) all ship
    wanted = {f"selfattn/checks/{p.name}" for p in (ROOT / "selfattn" / "checks").glob("*.py")}
    assert wanted and wanted | {"selfattn/exercise_checks.py", "selfattn/compare.py"} <= set(members), (
        sorted(wanted - set(members)))
    start = (folder / "START_HERE.md").read_text()
    for step in ("python3 install.py", "jupyter lab", "nbgrader validate", "hand_in.py"):
        assert step in start
    total = sum(float(c.metadata["nbgrader"].get("points", 0)) for p in (ROOT / "notebooks").glob("*/*.ipynb")
                for c in nbformat.read(p, as_version=4).cells if c.metadata.get("nbgrader", {}).get("grade"))
    assert f"Total: {total:g} points" in start
    assert (bundle / "selfattn-course.zip").stat().st_size < 5_000_000


@pytest.mark.parametrize("where", ["bundle", "site"])
def test_nothing_secret_reaches_students(bundle, where):
    if where == "site":
        if not (SITE / "index.html").exists():
            pytest.skip("the site is not built (make book builds it; make test does so first)")
        files = [(p, str(p.relative_to(SITE))) for p in SITE.rglob("*") if p.is_file()]
    else:
        files = [(p, str(p.relative_to(bundle))) for p in bundle.rglob("*") if p.is_file()]
    secrets = _solution_lines() | _hidden_secrets()
    assert len(secrets) > 40
    leaks = [f"{name}: {secret!r}" for path, rel in files for name, text in _texts(path, rel)
             for secret in secrets if secret in text]
    assert not leaks, "\n".join(leaks[:20])


def test_student_pins_are_the_repositorys(bundle):
    """One version of each package: where both files pin a package for Python >= 3.11, they agree."""
    pin = re.compile(r"^([A-Za-z0-9_.-]+)==([^;\s]+)\s*(;.*)?$")

    def read(path: Path) -> dict[str, str]:
        out = {}
        for line in path.read_text().splitlines():
            if (m := pin.match(line)) and (m.group(3) is None or ">=" in m.group(3)):
                out[m.group(1).lower().replace("_", "-")] = m.group(2)
        return out

    repo, student = read(ROOT / "requirements.txt"), read(ROOT / "student" / "requirements.txt")
    assert {"numpy", "matplotlib", "ipywidgets", "jupyterlab", "nbgrader"} <= set(student)
    assert {k: v for k, v in student.items() if repo.get(k) != v} == {}


@pytest.fixture(scope="module")
def installed(installed_student_course) -> Path:
    """The bundle unpacked from its archive and installed as START HERE says, by the system python3."""
    return installed_student_course


def test_instructor_tools_are_switched_off(installed):
    jupyter = installed / ".venv" / "bin" / "jupyter"
    lab = subprocess.run([str(jupyter), "labextension", "list"], capture_output=True, text=True, cwd=installed)
    listing = re.sub(r"\x1b\[[0-9;]*m", "", lab.stdout + lab.stderr)
    for plugin in ("formgrader", "create-assignment"):
        assert re.search(rf"@jupyter/nbgrader:{plugin}", listing), listing
    disabled = listing[listing.index("Disabled extensions"):] if "Disabled extensions" in listing else ""
    assert "@jupyter/nbgrader:formgrader" in disabled and "@jupyter/nbgrader:create-assignment" in disabled, listing
    server = subprocess.run([str(jupyter), "server", "extension", "list"], capture_output=True, text=True)
    text = re.sub(r"\x1b\[[0-9;]*m", "", server.stdout + server.stderr)
    assert re.search(r"nbgrader\.server_extensions\.formgrader\s+disabled", text), text
    assert not re.search(r"nbgrader\.server_extensions\.formgrader\s+enabled", text), text
    assert re.search(r"nbgrader\.server_extensions\.validate_assignment\s+enabled", text), text


def test_jupyterlab_asks_for_no_news_in_the_students_install(installed):
    """The "Jupyter news" pop-up of every new session is off, as JupyterLab itself reads its settings."""
    probe = ("import json, os\nfrom jupyterlab.commands import get_app_dir\n"
             "from jupyterlab_server.settings_utils import _get_overrides\n"
             "overrides, error = _get_overrides(os.path.join(get_app_dir(), 'settings'))\n"
             "print(json.dumps([overrides.get('@jupyterlab/apputils-extension:notification'), error]))")
    run = subprocess.run([str(installed / ".venv" / "bin" / "python"), "-c", probe], capture_output=True, text=True,
                         cwd=installed)
    assert run.returncode == 0, run.stderr[-2000:]
    settings, error = json.loads(run.stdout)
    assert not error and settings == {"fetchNews": "false", "checkForUpdates": False}, (settings, error)


def test_every_notebook_runs_in_the_students_install(installed):
    out = installed / "executed"
    notebooks = sorted((installed / "notebooks").glob("*/*.ipynb"))  # every assignment's
    assert notebooks and len({p.name for p in notebooks}) == len(notebooks), notebooks  # one output folder
    run = subprocess.run([str(installed / ".venv" / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                          "--allow-errors", "--ExecutePreprocessor.store_widget_state=True", "--output-dir", str(out),
                          *map(str, notebooks)], capture_output=True, text=True, cwd=installed, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    for path in notebooks:
        nb = nbformat.read(out / path.name, as_version=4)
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
        assert not errors, f"{path.name}: a cell raised, so Restart & Run All would stop there: {errors[0].ename}"
        failed = [o.text for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
                  for o in c.get("outputs", []) if o.get("name") == "stderr"]
        assert failed and all(t.startswith("✗ ") for t in failed), path.name  # the stubs fail their checks
        assert any("not written yet" in t for t in failed), path.name
        summary = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
        assert "Public checks pass for exercises worth 0 of" in summary, (path.name, summary)
        assert nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state"), \
            f"{path.name}: the widget was not built"


def _answered(installed: Path, notebook: str, replace: dict[str, str], tag: str) -> Path:
    """A copy of a released notebook with the instructor's answers (and some replaced)."""
    source = nbformat.read(ROOT / "solutions" / "attention" / f"{notebook}.ipynb", as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    answers.update(replace)
    nb = nbformat.read(installed / "notebooks" / "attention" / f"{notebook}.ipynb", as_version=4)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and gid in answers:
            cell.source = answers[gid]
    path = installed / "notebooks" / "attention" / f"{tag}-{notebook}.ipynb"
    nbformat.write(nb, path)
    return path


def test_nbgrader_validate_agrees_and_shows_the_whole_diagnosis(installed):
    nbgrader = str(installed / ".venv" / "bin" / "nbgrader")
    log_of_tril = "def causal_mask(T):\n    return np.log(np.tril(np.ones((T, T))))\n"  # correct, but warns
    warns = _answered(installed, "07-masking", {"causal_mask": log_of_tril}, "warns")
    run = subprocess.run([nbgrader, "validate", str(warns)], capture_output=True, text=True, cwd=installed)
    assert "Success!" in run.stdout, run.stdout[-2000:]
    zero_times_inf = "def causal_mask(T):\n    return np.triu(np.ones((T, T)), k=1) * -np.inf\n"
    nan = _answered(installed, "07-masking", {"causal_mask": zero_times_inf}, "nan")
    run = subprocess.run([nbgrader, "validate", str(nan)], capture_output=True, text=True, cwd=installed)
    flat = " ".join(run.stdout.split())
    assert "Success!" not in run.stdout and "np.where(condition, -np.inf, 0.0)" in flat, run.stdout[-2000:]
    assert "..." not in run.stdout.split("causal_mask")[-1], run.stdout[-2000:]
    warns.unlink()
    nan.unlink()


def test_hand_in_packs_the_layout_grading_accepts(installed):
    # --no-validate: nbgrader validate on every notebook costs minutes and is tested above
    run = subprocess.run([str(installed / ".venv" / "bin" / "python"), "hand_in.py", "--no-validate", "ada"],
                         capture_output=True, text=True, cwd=installed, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    names = zipfile.ZipFile(installed / "ada.zip").namelist()
    assert "ada/attention/03-softmax-attention.ipynb" in names
    assert all(re.fullmatch(r"ada/attention/[^/]+\.ipynb", n) for n in names), names
    json.loads(zipfile.ZipFile(installed / "ada.zip").read("ada/attention/01-embeddings.ipynb"))
