"""Copy the front-end assets the site serves itself from node_modules into _assets/vendor.

_assets/ is a Sphinx static path, so its content lands in _build/html/_static/ and no
page loads MathJax or the ipywidgets manager from a CDN.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / "node_modules"
DEST = ROOT / "_assets" / "vendor"

MATHJAX = NODE / "mathjax" / "es5"
MANAGER = NODE / "@jupyter-widgets" / "html-manager" / "dist"

# Only what the pages load (measured in Chromium over every page of the site): MathJax's TeX-to-HTML
# component, its web fonts and the TeX extensions it may autoload; the widget manager's standalone
# bundle (no RequireJS needed) and the web fonts its stylesheet names. Leaving out the rest of the two
# packages (other MathJax components, speech rules, the AMD bundles, source maps) takes the site from
# 47 MB to a fraction of it. Formgrader's grading page (autograder/jupyter_data) also loads MathJax's
# ui/safe filter, which drops links, styles, classes and ids a student's TeX would make.
COPIES = {
    MATHJAX / "tex-chtml.js": DEST / "mathjax" / "tex-chtml.js",
    MATHJAX / "ui" / "safe.js": DEST / "mathjax" / "ui" / "safe.js",
    MATHJAX / "output" / "chtml" / "fonts" / "woff-v2": DEST / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2",
    MATHJAX / "input" / "tex" / "extensions": DEST / "mathjax" / "input" / "tex" / "extensions",
    MANAGER / "embed.js": DEST / "html-manager" / "embed.js",
    **{font: DEST / "html-manager" / font.name for font in sorted(MANAGER.glob("*.woff*"))},
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
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.map", "*.LICENSE.txt"))
        else:
            shutil.copy2(src, dst)
    (DEST / ".copied").touch()
    print(f"vendored {len(COPIES)} front-end assets into {DEST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
