"""Is the published site's address set? (``make release`` and ``make student`` ask first.)

Released notebooks and the feedback link to the course site at ``html: baseurl:`` of
``_config.yml``. The repository ships a placeholder under ``.invalid`` (a top-level domain that
never resolves): until it is replaced, every such link is dead. This prints one warning line naming
the setting (handing out notebooks while developing stays possible); with ``--strict``
(``make release REQUIRE_SITE=1``) it refuses instead, exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from autograder.errors import command_line
from autograder.workspace import from_environment

#: top-level domains that never resolve (RFC 2606)
RESERVED_TOP_LEVEL = frozenset({"invalid", "example", "test"})


def configured(config: Path) -> str:
    """The ``html: baseurl:`` of ``config`` ("" when missing)."""
    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    return str((data.get("html") or {}).get("baseurl") or "")


def is_placeholder(url: str) -> bool:
    """True when ``url`` cannot be the published site: empty, no host, or a host under a name
    reserved for documentation and tests (``.invalid``, ``.example``, ``.test``, ``example.com``...)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    labels = host.split(".")
    return not host or labels[-1] in RESERVED_TOP_LEVEL or (len(labels) >= 2 and labels[-2] == "example")


def problem(config: Path) -> str | None:
    """One line saying what is wrong with the site address, or None when it is set."""
    url = configured(config)
    if not is_placeholder(url):
        return None
    shown = f"is the placeholder {url!r}" if url else "is not set"
    return (f"the site address (html: baseurl: in {config.name}) {shown}: released notebooks and feedback "
            "link there; set it to the course site's address")


@command_line
def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--strict", action="store_true", help="refuse (exit 1) instead of warning")
    p.add_argument("--config", type=Path, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    line = problem(a.config or from_environment().course / "_config.yml")  # the course this run names
    if line is None:
        return 0
    print(("error: " if a.strict else "warning: ") + line, file=sys.stderr)
    return 1 if a.strict else 0


if __name__ == "__main__":
    sys.exit(main())
