"""Can this machine grade? ``python -m autograder.pipeline.node_check`` (run it on a compute node: ``srun ...``).

Checks what a grading worker needs, in the order an instructor would fix it, and prints one line
per check; exits 1 with the first problem named:

1. the course's environment: this interpreter imports NumPy and the grading code of this checkout;
2. the sandbox: bubblewrap runs a known-good answer (unprivileged user namespaces allowed), else
   the run would grade in the weaker fallback mode (``--allow-fallback-sandbox``);
3. with ``--tls DIR`` (a Dask or ``--slurm`` worker): the CA and the worker's certificate and key
   are readable in ``DIR`` (by default ``autograder/.dask-tls/``), and the key by this user only.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path

from autograder.errors import command_line
from autograder.pipeline import dask_tls


def _checks(tls: Path | None) -> list[tuple[str, str | None]]:
    """(what was checked, its problem or None), stopping at the first problem."""
    out: list[tuple[str, str | None]] = []
    from autograder import sandbox
    from autograder.workspace import ROOT

    out.append((f"course environment: {sys.executable}, checkout {ROOT}", None))
    try:
        sandbox.self_test()
        problem = None if sandbox.mode() == "bubblewrap" else (
            "no working bubblewrap here (install the Debian package bubblewrap; unprivileged user namespaces must be "
            "allowed: sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0); only "
            "--allow-fallback-sandbox would grade here, with weaker isolation")
    except Exception as exc:
        problem = str(exc).splitlines()[0][:300]
    out.append((f"sandbox: {sandbox.mode()}", problem))
    if problem or tls is None:
        return out
    for path in (tls / dask_tls.CA, dask_tls.cert_file(tls, "worker"), dask_tls.key_file(tls, "worker")):
        if not os.access(path, os.R_OK):
            return [*out, (f"TLS file {path}", "missing or not readable here (the checkout's autograder/.dask-tls/ "
                                                "must be on a file system the nodes share, or copied)")]
    key = dask_tls.key_file(tls, "worker")
    if key.stat().st_mode & 0o077:
        return [*out, (f"TLS key {key}", f"readable by other users; chmod 600 {key}")]
    return [*out, (f"TLS files in {tls}: ca.pem, worker.pem, worker-key.pem", None)]


@command_line
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tls", nargs="?", type=Path, const=dask_tls.DEFAULT_DIR, default=None, metavar="DIR",
                   help="also check the worker's TLS files (default folder: %(const)s)")
    a = p.parse_args(argv)
    host = socket.gethostname()
    for what, problem in _checks(a.tls):
        if problem:
            print(f"{host}: NOT READY: {what}: {problem}", file=sys.stderr)
            return 1
        print(f"{host}: ok: {what}")
    print(f"{host}: ready to grade")
    return 0


if __name__ == "__main__":
    sys.exit(main())
