"""Start formgrader (``make formgrader``): Jupyter on 127.0.0.1 in ``autograder/`` (the course's
nbgrader configuration) with the repository as the server root, which formgrader needs.

nbgrader's grading page asks a CDN for MathJax (nbconvert's ``mathjax`` macro). This server puts
``autograder/jupyter_data`` first on ``JUPYTER_PATH``, whose ``mathjax.html.j2`` loads MathJax from
the server itself instead (the copy ``make setup`` vendors into ``_assets/vendor/mathjax``, served
at ``/static/mathjax/``), so formulas render and nothing is fetched from outside. The tests start
formgrader through :func:`command` too.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from autograder.errors import SetupMissing, command_line
from autograder.workspace import AUTOGRADER, ROOT

#: Jupyter data folder whose nbconvert templates override the CDN MathJax macro
TEMPLATES = AUTOGRADER / "jupyter_data"
#: served at /static/: the vendored MathJax (``make setup``)
STATIC = ROOT / "_assets" / "vendor"
#: the server's logger at INFO: formgrader gives nbgrader's commands (Generate, Generate Feedback...) the
#: level of the server's logger, which traitlets leaves at DEBUG (it filters in its handlers), so
#: their dialogs showed every DEBUG line; a grader still sees the INFO lines, warnings and errors
QUIET_LOG = '--ServerApp.logging_config={"loggers": {"ServerApp": {"level": "INFO"}}}'


def environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with the template folder first on JUPYTER_PATH,
    and configuration files that fail to load made errors: nbgrader's handlers would otherwise log
    the error and go on with nbgrader's defaults, whose autograde executes student code in the server."""
    env = dict(os.environ if base is None else base)
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(TEMPLATES), env.get("JUPYTER_PATH", "")) if p)
    env["TRAITLETS_APPLICATION_RAISE_CONFIG_FILE_ERROR"] = "1"
    return env


def command(app: str = "lab", *, root: Path = ROOT, port: int | None = None, token: str | None = None) -> list[str]:
    """The command line of a formgrader server (run it with ``cwd=autograder/`` and :func:`environment`)."""
    for needed in (STATIC / "mathjax" / "tex-chtml.js", STATIC / "mathjax" / "ui" / "safe.js"):
        if not needed.exists():
            raise SetupMissing(f"{needed} is missing: run `make setup` first")
    argv = [str(Path(sys.executable).parent / "jupyter"), app, "--no-browser", "--ip=127.0.0.1",
            f"--ServerApp.root_dir={root}", f"--ServerApp.extra_static_paths={STATIC}", QUIET_LOG]
    if port is not None:
        argv += [f"--port={port}", "--ServerApp.port_retries=0"]
    if token is not None:
        argv.append(f"--IdentityProvider.token={token}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")
    return argv


@command_line
def main(args: list[str] | None = None) -> None:
    """``make formgrader [PORT=..] [TOKEN=..]``: exec the server, in ``autograder/``."""
    import argparse

    p = argparse.ArgumentParser(description="formgrader (JupyterLab) on 127.0.0.1 with the course configuration")
    p.add_argument("--port", type=int, default=None, help="port (default: Jupyter's, 8888 or the next free one)")
    p.add_argument("--token", default=None, help="login token (default: a random one, printed at start)")
    a = p.parse_args(args)
    os.chdir(AUTOGRADER)
    argv = command(port=a.port, token=a.token)
    os.execve(argv[0], argv, environment())


if __name__ == "__main__":
    main()
