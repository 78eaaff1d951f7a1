"""The README describes the repository as it is: every make target, every front-end package."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _vendor_sources() -> list[Path]:
    spec = importlib.util.spec_from_file_location("vendor_assets", ROOT / "scripts" / "vendor_assets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.COPIES)


def test_readme_names_every_make_target() -> None:
    phony = re.search(r"^\.PHONY:((?:.*\\\n)*.*)$", (ROOT / "Makefile").read_text(encoding="utf-8"), flags=re.M)
    targets = set(phony.group(1).replace("\\\n", " ").split()) - {"all"}  # `all` is `make` alone, as `make book`
    missing = sorted(t for t in targets if not re.search(rf"`make {re.escape(t)}(\s[^`]*)?`", README))
    assert not missing, f"README does not mention make targets: {missing}"


def test_every_npm_dependency_is_served_by_the_site() -> None:
    """A package in package.json that scripts/vendor_assets.py copies nothing of is dead weight."""
    deps = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["dependencies"]
    sources = [src.relative_to(ROOT / "node_modules").as_posix() for src in _vendor_sources()]
    unused = sorted(d for d in deps if not any(s.startswith(f"{d}/") for s in sources))
    assert not unused, f"package.json lists packages the site never loads: {unused}"


def test_readme_names_no_front_end_library_the_site_does_not_ship() -> None:
    deps = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["dependencies"]
    for name in ("RequireJS", "jQuery", "MathJax"):
        if name.lower() not in {d.lower() for d in deps}:
            assert name not in README, f"README says the site uses {name}, which package.json does not ship"
