"""Copy the front-end assets the site serves itself from node_modules into _assets/vendor.

_assets/ is a Sphinx static path, so its content lands in _build/html/_static/ and no
page loads MathJax, RequireJS or the ipywidgets manager from a CDN.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / "node_modules"
DEST = ROOT / "_assets" / "vendor"

COPIES = {
    NODE / "mathjax" / "es5": DEST / "mathjax",
    NODE / "requirejs" / "require.js": DEST / "require.js",
    NODE / "@jupyter-widgets" / "html-manager" / "dist": DEST / "html-manager",
}


def main() -> int:
    missing = [str(src) for src in COPIES if not src.exists()]
    if missing:
        print(f"missing npm assets (run `npm ci`): {missing}", file=sys.stderr)
        return 1
    if DEST.exists():
        shutil.rmtree(DEST)
    DEST.mkdir(parents=True)
    for src, dst in COPIES.items():
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.map", "*.LICENSE.txt"))
        else:
            shutil.copy2(src, dst)
    (DEST / ".copied").touch()
    print(f"vendored {len(COPIES)} front-end assets into {DEST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
