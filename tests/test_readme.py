"""The README and the guides describe the repository as it is.

Every make target is named in some guide and every one named exists; every module, script and test
file named exists; every relative link resolves (to a heading, where it names one); instructors type
nbgrader through the course's wrapper; the README's first screen names each guide; the students'
guide is what the bundle ships; and no guide names a front-end library the site does not ship.
"""

from __future__ import annotations

import importlib.util
import json
import re
import runpy
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from guides_support import README, ROOT, STUDENT_GUIDE, anchors, code, documents, guides, links, name, text

from autograder.course.ids import COURSE_ID
from autograder.hub import layout

#: how many lines a newcomer sees of the README before scrolling
FIRST_SCREEN = 40
#: the README says what the project is, the two commands and where to go next; the rest is in a guide
README_LINES = 60


def _vendor_sources() -> list[Path]:
    spec = importlib.util.spec_from_file_location("vendor_assets", ROOT / "scripts" / "vendor_assets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.COPIES)


def _makefile() -> str:
    return (ROOT / "Makefile").read_text(encoding="utf-8")


def _phony_targets() -> set[str]:
    phony = re.search(r"^\.PHONY:((?:.*\\\n)*.*)$", _makefile(), flags=re.M)
    return set(phony.group(1).replace("\\\n", " ").split()) - {"all"}  # `all` is `make` alone, as `make book`


def _made(document: Path) -> list[str]:
    """The targets of every ``make TARGET`` the document names as code."""
    return [t for snippet in code(text(document)) for t in re.findall(r"(?<![\w-])make +([a-z][\w-]*)", snippet)]


def test_every_make_target_is_named_in_a_guide() -> None:
    named = {t for document in documents() for t in _made(document)}
    missing = sorted(_phony_targets() - named)
    assert not missing, f"no guide (README.md, docs/, student/START_HERE.md) names these make targets: {missing}"


def test_every_make_target_a_guide_names_exists() -> None:
    rules = set(re.findall(r"^([a-z][\w-]*) *:(?!=)", _makefile(), flags=re.M))
    unknown = sorted({f"{name(d)}: make {t}" for d in documents() for t in _made(d) if t not in rules})
    assert not unknown, f"guides name make targets the Makefile does not have: {unknown}"


def test_every_python_module_a_guide_runs_exists() -> None:
    modules = {(name(d), m) for d in documents() for snippet in code(text(d))
               for m in re.findall(r"\bpython3? +-m +([A-Za-z_][\w.]*)", snippet)}
    assert len(modules) > 5, modules  # the guides do run modules: a parser that finds none is broken
    missing = sorted(f"{where}: python -m {m}" for where, m in modules if importlib.util.find_spec(m) is None)
    assert not missing, f"guides run modules that do not exist: {missing}"


def _named_files(document: Path) -> set[str]:
    """Repository files the document names as code: a path under one of the repository's folders
    that ends in a file name with an extension (no placeholder such as ``<notebook>`` or ``*``)."""
    folders = "|".join(p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
                       and p.name not in ("node_modules",))
    found = set()
    for snippet in code(text(document)):
        for path in re.findall(rf"(?<![\w./-])((?:{folders})/[\w./-]*\.[A-Za-z0-9]+)(?![\w./-])", snippet):
            found.add(path)
    return found


def test_every_file_a_guide_names_exists() -> None:
    named = {(name(d), p) for d in documents() for p in _named_files(d)}
    assert len(named) > 30, named  # the guides name many files: a parser that finds none is broken
    absent = sorted({p for _, p in named if not (ROOT / p).exists()})
    # files a run or a build makes (grades.csv, the report, withheld.npz) are git-ignored or made in a copy
    ignored = set(subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(absent),
                                 capture_output=True, text=True).stdout.split())
    generated = {"selfattn/withheld.npz"}  # written into the student package's copy of selfattn/ only
    missing = sorted(f"{where}: {p}" for where, p in named if p in set(absent) - ignored - generated)
    assert not missing, f"guides name files that do not exist: {missing}"


def test_every_relative_link_resolves() -> None:
    broken = []
    checked = 0
    for document in documents():
        for target in links(text(document)):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not the repository's
                continue
            checked += 1
            path, _, fragment = target.partition("#")
            linked = (document.parent / path).resolve() if path else document
            if not linked.exists():
                broken.append(f"{name(document)}: {target} (no such file)")
            elif fragment and linked.suffix == ".md" and fragment not in anchors(text(linked)):
                broken.append(f"{name(document)}: {target} (no such heading in {name(linked)})")
    assert checked > 10, checked
    assert not broken, "\n".join(broken)


def test_the_readme_first_screen_names_every_guide() -> None:
    first = "\n".join(text(README).splitlines()[:FIRST_SCREEN])
    linked = {(README.parent / target.partition("#")[0]).resolve() for target in links(first)}
    missing = [name(g) for g in guides() if g.resolve() not in linked]
    assert not missing, f"the README's first {FIRST_SCREEN} lines link no {missing}"
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    folders = sorted({line.split("/")[0] for line in tracked.splitlines() if "/" in line} - {".ci"})
    assert "autograder" in folders, folders
    unnamed = [f for f in folders if f"`{f}/`" not in first]
    assert not unnamed, f"the README's first {FIRST_SCREEN} lines do not say what these folders hold: {unnamed}"


def test_the_readme_stays_a_front_door() -> None:
    lines = text(README).splitlines()
    sections = [line for line in lines if line.startswith("## ")]
    expected = ["## Where to go next", "## Two commands", "## Security, in brief"]
    assert len(lines) <= README_LINES and sections == expected, (
        f"README.md has {len(lines)} lines (at most {README_LINES}) and sections {sections}: "
        "put what instructors, students or contributors need into their guide (docs/, student/START_HERE.md)")


def test_instructors_type_every_nbgrader_command_through_the_wrapper() -> None:
    instructor_commands = runpy.run_path(str(ROOT / "nbgrader_config.py"))["INSTRUCTOR_COMMANDS"]
    commands = [(name(d), c) for d in documents() for snippet in code(text(d))
                for c in re.findall(r"((?:runuser -u \S+ -- )?(?:\./|\S*/)?nbgrader [a-z_]+[^\n`]*)", snippet)]
    # on the hub (docs/instructors.md, "Running the course on JupyterHub") the grader account runs
    # nbgrader from the graders' environment, where the course's configuration is nbgrader's own
    hub = tuple(f"runuser -u {account} -- nbgrader " for account in (HUB_GRADER,))
    instructor = [(where, c.split(" -- ")[-1], c) for where, c in commands
                  if c.split(" -- ")[-1].split()[1] in instructor_commands]
    unwrapped = sorted({f"{where}: {c}" for where, bare, c in instructor
                        if bare.split()[0] not in ("./nbgrader", "/path/to/repo/nbgrader") and not c.startswith(hub)})
    assert len(instructor) > 5 and not unwrapped, unwrapped


def test_the_students_guide_is_what_the_bundle_ships() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import build_student
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    notebooks = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
    shipped = build_student.start_here(notebooks)
    guide = text(STUDENT_GUIDE)
    before, marker, after = guide.partition(build_student.POINTS_MARKER)
    assert marker and shipped.startswith(before) and shipped.endswith(after), "START_HERE.md is not the guide"
    assert marker not in shipped
    for path in notebooks:
        assert f"| `{path.parent.name}/{path.name}` |" in shipped, path.name
    total = sum(float(c.metadata["nbgrader"].get("points", 0)) for p in notebooks
                for c in nbformat.read(p, as_version=4).cells if c.metadata.get("nbgrader", {}).get("grade"))
    assert f"Total: {total:g} points" in shipped


def test_a_guide_without_its_points_marker_is_refused_in_one_line(tmp_path, monkeypatch) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import build_student
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    broken = tmp_path / "START_HERE.md"
    broken.write_text("# START HERE\n\nno table here\n", encoding="utf-8")
    monkeypatch.setattr(build_student, "START_HERE", broken)
    monkeypatch.setattr(build_student, "ROOT", tmp_path)
    with pytest.raises(ValueError, match=r"^START_HERE\.md: needs the line .* exactly once$"):
        build_student.start_here(sorted((ROOT / "notebooks").glob("*/*.ipynb")))


#: npm packages the project runs as programs rather than serves, each with the file that runs it
NPM_TOOLS = {"configurable-http-proxy": "autograder/hub/jupyterhub_config.py"}
HUB_GRADER = layout.grader_user("HUB", COURSE_ID)  # the hub's grader account, as the guide writes it (HUB: its id)


def test_every_npm_dependency_is_served_by_the_site() -> None:
    """A package in package.json that scripts/vendor_assets.py copies nothing of is dead weight."""
    deps = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["dependencies"]
    sources = [src.relative_to(ROOT / "node_modules").as_posix() for src in _vendor_sources()]
    unused = sorted(d for d in deps if not any(s.startswith(f"{d}/") for s in sources) and d not in NPM_TOOLS)
    assert not unused, f"package.json lists packages the site never loads: {unused}"
    for tool, user in NPM_TOOLS.items():  # a tool is listed only while the code that runs it names it
        assert tool in (ROOT / user).read_text(encoding="utf-8"), f"{user} no longer runs {tool}: drop it"


def test_no_guide_names_a_front_end_library_the_site_does_not_ship() -> None:
    deps = {d.lower() for d in json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["dependencies"]}
    for document in documents():
        for library in ("RequireJS", "jQuery", "MathJax"):
            if library.lower() not in deps:
                assert library not in text(document), \
                    f"{name(document)} says the site uses {library}, which package.json does not ship"
