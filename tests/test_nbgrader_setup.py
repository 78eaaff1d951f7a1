"""How make grade sets nbgrader up: the course's configuration loads, or grading stops before
anything changes; a new gradebook records nbgrader's schema revision without a second Python."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest.mock
from pathlib import Path

from grading_support import ROOT, SOLUTIONS, place
from nbgrader.dbutil import _temp_alembic_ini
from sqlalchemy import create_engine, text

from autograder import formgrader
from autograder.nbgrader_ext.gradebook_schema import schema_head
from autograder.nbgrader_ext.steps import load_config
from autograder.paths import AUTOGRADER


def test_schema_head_is_what_the_alembic_command_prints():
    alembic = Path(sys.executable).parent / "alembic"
    with _temp_alembic_ini("sqlite:////tmp/unused.db") as ini:
        printed = subprocess.check_output([str(alembic), "-c", ini, "heads"], text=True)
    assert schema_head() == printed.split("\n")[0].split(" ")[0]


def test_a_new_gradebook_records_the_schema_revision_without_a_subprocess(tmp_path):
    from nbgrader.api import Gradebook

    load_config()  # what every process of make grade and formgrader does first
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with unittest.mock.patch("subprocess.check_output", side_effect=AssertionError("alembic was started")):
        Gradebook(url, "self-attention").close()
    with create_engine(url).connect() as db:
        assert db.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [schema_head()]


def _broken_config_dir(tmp_path: Path) -> Path:
    """A user-level Jupyter config folder whose nbgrader_config.py raises when loaded."""
    config_dir = tmp_path / "jupyter"
    config_dir.mkdir()
    (config_dir / "nbgrader_config.py").write_text("c = get_config()\nc.Exchange.root = undefined_name\n")
    return config_dir


def test_formgrader_treats_a_configuration_file_that_fails_to_load_as_an_error(tmp_path):
    """formgrader's handlers load the chain through an nbgrader application. By itself it logs the
    error and goes on (the premise); in the server make formgrader starts, loading fails."""
    load = "from nbgrader.apps.baseapp import NbGrader\nNbGrader().load_config_file()\n"
    base = dict(os.environ, JUPYTER_CONFIG_DIR=str(_broken_config_dir(tmp_path)))
    base.pop("TRAITLETS_APPLICATION_RAISE_CONFIG_FILE_ERROR", None)
    plain = subprocess.run([sys.executable, "-c", load], cwd=AUTOGRADER, env=base, capture_output=True, text=True)
    assert plain.returncode == 0 and "undefined_name" in plain.stderr
    served = subprocess.run([sys.executable, "-c", load], cwd=AUTOGRADER, env=formgrader.environment(base),
                            capture_output=True, text=True)
    assert served.returncode != 0 and "NameError: name 'undefined_name' is not defined" in served.stderr


def test_a_configuration_file_that_fails_to_load_stops_grading_naming_it(tmp_path):
    """nbgrader logs such an error and goes on with its defaults (which would execute student code
    in its own process); make grade stops with one line naming the file, and writes no grade."""
    config_dir = _broken_config_dir(tmp_path)
    work = tmp_path / "work"
    place(work, "alice", "01-embeddings", (SOLUTIONS / "01-embeddings.ipynb").read_text())
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work), JUPYTER_CONFIG_DIR=str(config_dir))
    run = subprocess.run([sys.executable, "-m", "autograder.grade"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last == (f"{config_dir / 'nbgrader_config.py'} failed to load (NameError: name 'undefined_name' is not "
                    "defined); stopped before nbgrader changed anything")
    assert not (work / "grades.csv").exists() and not (work / "gradebook.db").exists()


def test_make_runs_every_recipe_with_configuration_errors_raised(tmp_path):
    """make release calls nbgrader's CLI, which (like formgrader's handlers) only logs a file that
    fails to load; every make recipe runs with the variable that makes it an error."""
    makefile = tmp_path / "probe.mk"
    probe = "probe:\n\t@echo $$TRAITLETS_APPLICATION_RAISE_CONFIG_FILE_ERROR\n"
    makefile.write_text(f"include {ROOT / 'Makefile'}\n{probe}")
    env = {k: v for k, v in os.environ.items() if k != "TRAITLETS_APPLICATION_RAISE_CONFIG_FILE_ERROR"}
    run = subprocess.run(["make", "-s", "-f", str(makefile), "probe"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "1"
