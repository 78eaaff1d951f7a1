# Two commands for a newcomer:  `make book`  and  `make test`.
# Everything is installed from the project's own files: requirements.txt (pinned PyPI
# packages, into .venv), package.json + package-lock.json (front-end assets, via npm ci)
# and scripts/install-system-deps.sh (Debian packages: chromium, bubblewrap).

# The system Python (Debian 12: 3.11.2) by default, so a fresh machine needs nothing else;
# the pins in requirements.txt install on Python 3.10-3.13.
PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || command -v python3)
VENV   := .venv
BIN    := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# A Jupyter/nbgrader configuration file that raises is an error, not skipped: nbgrader would go on
# with its defaults (make release would generate from the wrong folders; autograde would execute).
export TRAITLETS_APPLICATION_RAISE_CONFIG_FILE_ERROR := 1
# One BLAS thread per process (unless set already), as autograder/threads.py gives the sandbox and the
# hub: the book's kernels, the grader and the two test workers each run beside other processes on two
# cores, where a second OpenBLAS thread spins more than it helps (benchmarks/blas_threads.py).
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

VENV_STAMP   := $(VENV)/.installed
NODE_STAMP   := node_modules/.installed
ASSETS_STAMP := _assets/vendor/.copied
SYS_STAMP    := .sysdeps-ok
PYTEST_ARGS  ?=

# HUB=/srv/selfattn-hub (a hub's state folder; COURSE=ID for a hub that serves several courses, default
# this course or the hub's first): the guide's commands below do their work in that hub's course copy
# (STATE/courses/ID), as its grader account, with the graders' environment and the term's settings
# (autograder/hub/on_hub.py; run as root from the repository). Without HUB, in this repository.
ON_HUB = $(BIN)/python -m autograder.hub.on_hub --hub '$(HUB)' $(if $(COURSE),--course '$(COURSE)')
PY     = $(if $(HUB),$(ON_HUB) -- python,$(BIN)/python)

.PHONY: all assets book pdf test test-fast test-nbgrader test-exercise lint bench mutation clean distclean setup release grade grades-final due-date extension report student formgrader dask-certs \
        nbgrader collect intake site-address hub hub-stop hub-roster hub-end-term hub-test-envs publish

all: book

setup: assets $(SYS_STAMP)

# The Python environment and the front-end packages are installed side by side (the Python installer
# and npm each keep one core busy), then the assets are copied out of both.
assets:
	@$(MAKE) --no-print-directory -j2 $(VENV_STAMP) $(NODE_STAMP)
	@$(MAKE) --no-print-directory $(ASSETS_STAMP)

$(VENV_STAMP): requirements.txt requirements-setup.txt pyproject.toml scripts/make-venv.sh scripts/install_requirements.py
	@test -x $(VENV)/bin/python || bash scripts/make-venv.sh $(PYTHON) $(VENV)
	@# uv where it can, else pip; then byte-compiled on every core (where PYTHONDONTWRITEBYTECODE is set,
	@# nothing would write the .pyc files later)
	$(VENV)/bin/python scripts/install_requirements.py $(VENV) requirements.txt
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@# the package installs selfattn only; the grading code is imported from the checkout
	$(VENV)/bin/python -c "import sysconfig, pathlib; pathlib.Path(sysconfig.get_paths()['purelib'], 'selfattn-course-root.pth').write_text('$(CURDIR)\n')"
	@touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

$(ASSETS_STAMP): $(NODE_STAMP) scripts/vendor_assets.py $(VENV_STAMP)
	$(VENV)/bin/python scripts/vendor_assets.py

$(SYS_STAMP): scripts/install-system-deps.sh
	bash scripts/install-system-deps.sh
	@touch $@

# jupyter-cache keys executed notebooks on their own text only: when the helper package or the
# released notebooks (the chapters' exercise blocks quote them) change, the cached outputs are
# stale, so drop them.
CODE_STAMP := _build/.selfattn-code
$(CODE_STAMP): $(wildcard selfattn/*.py selfattn/*/*.py notebooks/*/*.ipynb)
	rm -rf _build/.jupyter_cache _build/jupyter_execute
	@mkdir -p _build && touch $@

# The student bundle is published with the site (its chapters link it): built when what it holds changed,
# copied to _build/html/ by Sphinx (html_extra_path in _config.yml; a missing zip fails the build).
BUNDLE_ZIP := _build/student/selfattn-course.zip
$(BUNDLE_ZIP): $(VENV_STAMP) $(wildcard notebooks/*/*.ipynb student/* selfattn/*.py selfattn/*/*.py) pyproject.toml \
               scripts/build_student.py scripts/student_package.py autograder/intake/stored_outputs.py autograder/course/ids.py
	$(BIN)/python scripts/build_student.py

book: assets $(CODE_STAMP) $(BUNDLE_ZIP)
	@# --all: Sphinx copies static files only when some page is out of date, so an edited
	@# asset alone would never reach the site. Execution stays cached (jupyter-cache); chapters missing
	@# from the cache run side by side, one kernel per core (book/_ext/parallel_execution.py).
	$(BIN)/jupyter-book build . --all -W -n --keep-going

# The whole book as one PDF, printed from the built pages by headless Chromium (offline), joined by
# scripts/pdf_assemble.py (pypdf: links and outline); the site's front page links it.
PDF := _build/html/self-attention.pdf
pdf: book $(SYS_STAMP)
	$(BIN)/python scripts/book_pdf.py _build/html $(PDF)

# Three pytest-xdist workers on two cores: the hub, formgrader, Slurm and browser tests wait on servers
# and page loads, and a third worker fills that wait (both cores about 99 % busy instead of about 90 %;
# pytest 704 s against 820 s with two, docs/contributing.md). --dist loadscope with the units
# tests/conftest.py defines: the tests that use what the machine has one of (system accounts, Slurm,
# the hub, Dask) run one after another on one worker, every other file whole on one worker, and the
# tests that only read the built site one by one on any. --durations: the slowest tests are printed at
# the end of every run (the suite's time budget starts there).
test: setup
	@# the site and its PDF, and beside them the hub tests' two environments (tests/test_hub.py): the book
	@# keeps one core busy while its longest chapter runs, the environments use the other
	$(MAKE) --no-print-directory -j2 --output-sync=target pdf hub-test-envs
	$(BIN)/ruff check .
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n 3 --dist loadscope --durations=40 $(PYTEST_ARGS)

# The hub tests' environments (students' and graders', tests/test_hub.py), each rebuilt only when what it is
# made of changed; kept in SELFATTN_HUB_TEST_ENVS (default /var/tmp/selfattn-hub-envs) between runs. A build
# that fails here stops nothing else: tests/test_hub.py builds what is still missing and fails saying why.
export SELFATTN_HUB_TEST_ENVS ?= /var/tmp/selfattn-hub-envs
hub-test-envs: $(VENV_STAMP) $(SYS_STAMP)
	-SELFATTN_HUB_ENVS='$(SELFATTN_HUB_TEST_ENVS)' $(BIN)/python -m autograder.hub.control environments

# The fast lane for a developer's loop: ruff and the unit tests (tests/conftest.py, LANES); no book,
# no browser, no graded class, no new environment, no many-seed sweep (the sweep lane, in make test).
# About 45 s on two quiet cores (docs/contributing.md). Two pytest-xdist workers; bytecode is written even where PYTHONDONTWRITEBYTECODE is set, since
# without the cached pyc files pytest re-rewrites every test module's asserts on every run.
test-fast: $(VENV_STAMP) $(SYS_STAMP)
	$(BIN)/ruff check .
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -m unit -n 2 $(PYTEST_ARGS)

# nbgrader's own tests of the steps the course touches (autograde, feedback, collect, release, fetch, submit,
# generate, export, the gradebook, the preprocessors), run side by side on vanilla nbgrader and with the
# course's drop-ins, compared test by test: a difference not listed with its reason in
# tests/nbgrader_suite/differences.json fails it (tests/nbgrader_suite/run.py). Its own lane, run before any
# nbgrader upgrade (too long for make test); the two runs' JUnit files and logs go to _build/nbgrader-suite/.
test-nbgrader: $(VENV_STAMP)
	$(BIN)/python tests/nbgrader_suite/run.py

# The tests that cover one exercise (its checks, hidden draws, float32 answers, compare() example,
# notebook/grader agreement, and every catalogue entry replacing its cell), in the unit, sweep and pipeline
# lanes: make test-exercise FN=softmax (scripts/exercise_tests.py chooses them).
test-exercise: $(VENV_STAMP)
	@test -n '$(FN)' || { echo 'usage: make test-exercise FN=softmax' >&2; exit 2; }
	@K="$$($(BIN)/python scripts/exercise_tests.py '$(FN)')" && \
	  $(BIN)/python -m pytest -m "unit or pipeline or sweep" -k "$$K" $(PYTEST_ARGS)

# Released notebooks and feedback link to the site at _config.yml's html: baseurl:. Until it is set,
# make release and make student warn in one line; REQUIRE_SITE=1 makes that an error (for a term's release).
site-address: $(VENV_STAMP)
	@$(PY) -m autograder.course.site_address $(if $(REQUIRE_SITE),--strict)

# Student notebooks (notebooks/) are generated from the instructor's solutions/ by nbgrader, once
# scripts/validate_exercises.py finds every exercise complete (one line per missing piece otherwise);
# generated aside and swapped in (scripts/release.py): a failed release leaves notebooks/ as it was.
release: $(VENV_STAMP) site-address
	$(PY) scripts/validate_exercises.py
	$(PY) scripts/release.py

# What a course hands out: _build/student/selfattn-course/ and .zip (notebooks, wheel, START HERE).
student: $(VENV_STAMP) site-address
	$(BIN)/python scripts/build_student.py

# Any nbgrader command with the course configuration (the same as ./nbgrader ARGS from any folder):
#   make nbgrader ARGS="db student add alice --first-name Alice"
nbgrader: $(VENV_STAMP)
	@test -n '$(ARGS)' || { echo 'usage: make nbgrader ARGS="collect attention"' >&2; exit 2; }
	$(PY) -m autograder.nbgrader_ext.cli $(ARGS)

# nbgrader collect from the exchange into autograder/submitted/ (ASSIGNMENT=attention by default;
# COLLECT_ARGS=--update for resubmissions).
ASSIGNMENT ?= attention
collect: $(VENV_STAMP)
	$(PY) -m autograder.nbgrader_ext.cli collect $(ASSIGNMENT) $(COLLECT_ARGS)

# Handed-in zips (LOGIN.zip, from an LMS download folder) into autograder/submitted/<login>/:
#   make intake ZIPS=~/Downloads/submissions  (INTAKE_ARGS="--login-map logins.csv")
intake: $(VENV_STAMP)
	@test -n '$(ZIPS)' || { echo 'usage: make intake ZIPS=folder-of-zips' >&2; exit 2; }
	$(if $(HUB),$(ON_HUB) --input '$(ZIPS)' -- python,$(BIN)/python) -m autograder.intake.zips '$(ZIPS)' $(INTAKE_ARGS)

# Grade every autograder/submitted/<student>/<assignment>/<notebook>.ipynb -> grades.csv, feedback/.
grade: $(VENV_STAMP) $(SYS_STAMP)
	$(PY) -m autograder.grade $(if $(STUDENT),--student $(STUDENT)) $(GRADE_ARGS)

# Certificates for grading on a Dask cluster over TLS (autograder/.dask-tls/); prints how to start
# the scheduler and workers with them. DASK_CERTS_ARGS="--force" replaces existing ones.
dask-certs: $(VENV_STAMP)
	$(BIN)/python -m autograder.pipeline.dask_tls $(DASK_CERTS_ARGS)

# The class report (also written by make grade): autograder/report/index.html, self-contained.
report: $(VENV_STAMP)
	$(PY) -m autograder.report

# formgrader (JupyterLab, Formgrader tab) on 127.0.0.1: started in autograder/ (the course config)
# with the repository as the server root (formgrader needs the course root inside it).
# MathJax comes from the vendored copy (autograder/formgrader.py), not a CDN.
# PORT=8899 (default: Jupyter's, 8888 or the next free one) and TOKEN=... (default: a random one, printed).
formgrader: assets
	$(BIN)/python -m autograder.formgrader $(if $(PORT),--port $(PORT)) $(if $(TOKEN),--token $(TOKEN))

# Due dates and extensions (autograder/due-dates.csv), then the late penalties, feedback and exports
# again (no sandbox run): make due-date ASSIGNMENT=attention UNTIL="2026-11-01 12:00 UTC",
# make extension STUDENT=carol ASSIGNMENT=attention UNTIL="2026-11-03 12:00 UTC".
due-date: $(VENV_STAMP)
	@test -n '$(UNTIL)' || { echo 'usage: make due-date ASSIGNMENT=attention UNTIL="2026-11-01 12:00 UTC"' >&2; exit 2; }
	$(PY) -m autograder.extension due-date --assignment '$(ASSIGNMENT)' --until '$(UNTIL)'

extension: $(VENV_STAMP)
	@test -n '$(UNTIL)' -a -n '$(STUDENT)' || { echo 'usage: make extension STUDENT=carol ASSIGNMENT=attention UNTIL="2026-11-03 12:00 UTC"' >&2; exit 2; }
	$(PY) -m autograder.extension extension --assignment '$(ASSIGNMENT)' --student '$(STUDENT)' --until '$(UNTIL)'

# The course on a JupyterHub on this machine (as root; docs/instructors.md, "Running the course on
# JupyterHub"): accounts from ROSTER (default autograder/roster.csv, with a role column) and, for
# more courses on the same hub, COURSES="ID=ROSTER ..." (each its own grader account, groups and
# formgrader; courses served before stay), SPAWNER=slurm for students' servers as Slurm jobs
# (batchspawner; SPAWNER=local goes back), the two
# environments, state in SELFATTN_HUB_STATE (default /srv/selfattn-hub), listening on 127.0.0.1:8000
# (SELFATTN_HUB_PORT), opened at http://hub.localhost:8000/ (each user's server and formgrader on a
# host of its own; a deployment's address: SELFATTN_HUB_PUBLIC). Restartable: make hub-stop, make hub
# lose nothing.
hub: assets $(SYS_STAMP)
	$(BIN)/python -m autograder.hub.control start $(if $(ROSTER),--roster '$(ROSTER)') \
	    $(foreach course,$(COURSES),--course '$(course)') $(if $(SPAWNER),--spawner '$(SPAWNER)')

hub-stop: $(VENV_STAMP)
	$(BIN)/python -m autograder.hub.control stop

# The rosters applied to the hub's accounts without a restart (ROSTER=new roster, COURSES="ID=ROSTER ..."):
# late enrolments made and added, dropped students locked (login refused, server stopped, exchange
# closed; home, hand-ins and grades kept), returning ones re-enabled; one line per change.
hub-roster: $(VENV_STAMP)
	$(BIN)/python -m autograder.hub.roster_update $(if $(ROSTER),--roster '$(ROSTER)') $(foreach course,$(COURSES),--course '$(course)')

# The end of a term: stop the hub, archive the courses, exchange, term settings, rosters and homes into one
# file (ARCHIVE=..., default beside the state folder), then remove the hub's accounts and groups.
hub-end-term: $(VENV_STAMP)
	$(BIN)/python -m autograder.hub.term_end $(if $(ARCHIVE),--archive '$(ARCHIVE)')

# A change of the course (a new exercise, a fixed check, changed points), made once in this repository,
# onto the hub (as root): make publish HUB=/srv/selfattn-hub [COURSE=ID] copies the tracked files into the
# course copy (its term's state kept), generates its assignments as the grader account, gives that
# course's students the selfattn wheel of the same files and restarts its formgrader (autograder/hub/publish.py).
publish: $(VENV_STAMP)
	@test -n '$(HUB)' || { echo 'usage: make publish HUB=/srv/selfattn-hub [COURSE=ID]' >&2; exit 2; }
	$(BIN)/python -m autograder.hub.publish --hub '$(HUB)' $(if $(COURSE),--course '$(COURSE)')

# After hand-grading the written answers in formgrader: feedback and grades.csv again, nothing re-run.
grades-final: $(VENV_STAMP)
	$(PY) -m autograder.grade finish

lint: $(VENV_STAMP)
	$(BIN)/ruff check .

bench: $(VENV_STAMP)
	$(BIN)/python -m benchmarks

# Mutation scores of the modules that handle student input or decide a grade, each under its own fast
# tests, one module at a time (benchmarks/mutation/; about 15 minutes for all: MODULE=autograder.late.policy
# for one); the accepted survivors and why are in docs/mutation.md.
mutation: $(VENV_STAMP)
	$(BIN)/python -m benchmarks.mutation --survivors $(foreach m,$(MODULE),--only $(m))

clean:
	rm -rf _build .pytest_cache .hypothesis .registered autograder/.grading autograder/autograded autograder/feedback \
	       autograder/gradebook.db autograder/grades.csv autograder/report \
	       autograder/exports autograder/grading-summary.txt

distclean: clean
	rm -rf $(VENV) node_modules _assets/vendor $(SYS_STAMP)
