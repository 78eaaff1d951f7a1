"""Lay out the hub's state folder (:mod:`autograder.hub.layout`): for each course, the course
copy its grader account owns, its exchange folder and its formgrader's nbgrader settings; the
students' nbgrader settings.

Nothing that exists is replaced: a course copy (with its gradebook, hand grades, submissions) and
the exchange survive every ``make hub``; a changed course is copied in by removing
``STATE/courses/ID`` first (after saving what it holds).
"""

from __future__ import annotations

import csv
import grp
import io
import os
import pwd
import shutil
import subprocess
import time
from pathlib import Path

from autograder.course.ids import COURSE_ID, COURSE_ID_FILE
from autograder.hub.acl import share_with_group
from autograder.hub.layout import HubLayout
from autograder.hub.records import Records
from autograder.outputs.atomic import write_text
from autograder.workspace import ROOT

#: copied beside the tracked files: the vendored MathJax formgrader serves (made by make setup)
GENERATED = ("_assets/vendor",)


def _tracked_files(root: Path) -> list[str]:
    done = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{root}: not a git checkout, so the course files cannot be listed ({done.stderr.strip()})")
    return [name for name in done.stdout.split("\0") if name]


def copy_course(dest: Path, root: Path = ROOT) -> bool:
    """Copy the course (tracked files and :data:`GENERATED`) to ``dest`` unless it exists."""
    if dest.exists():
        return False
    aside = dest.with_name(dest.name + ".copying")
    shutil.rmtree(aside, ignore_errors=True)
    for name in _tracked_files(root):
        src = root / name
        if src.is_file():
            (aside / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, aside / name)
    for name in GENERATED:
        if not (root / name).exists():
            raise RuntimeError(f"{root / name} is missing: run `make setup` first")
        shutil.copytree(root / name, aside / name, dirs_exist_ok=True)
    aside.rename(dest)
    return True


def _own(path: Path, user: str, group: str, mode: str) -> None:
    subprocess.run(["chown", "-R", f"{user}:{group}", str(path)], check=True)
    subprocess.run(["chmod", "-R", mode, str(path)], check=True)


def own_course_copy(copy: Path, grader: str, graders: str) -> None:
    """The course copy ``copy`` owned by ``grader`` and the graders' group ``graders``, read and written
    by both (2770), and everything made in it later shared with that group whatever its maker's umask
    (a default ACL on every folder: :mod:`autograder.hub.acl`)."""
    _own(copy, grader, graders, "u+rwX,g+rwX,o-rwx")
    copy.chmod(0o2770)
    share_with_group(copy, grp.getgrnam(graders).gr_gid)


def student_settings(layout: HubLayout) -> str:
    """The students' ``nbgrader_config.py``: the exchange, the courses the hub's groups give the
    student (nbgrader's JupyterHub plugin reads ``nbgrader-ID``), each course's assignments in a
    folder of that course (two courses may both release ``attention``), whole check messages."""
    return (f'"""nbgrader settings of the students\' servers on the course hub (autograder/hub/prepare.py)."""\n'
            "c = get_config()  # noqa: F821\n"
            f"c.Exchange.root = {str(layout.exchange)!r}\n"
            "c.Authenticator.plugin_class = 'nbgrader.auth.JupyterHubAuthPlugin'\n"
            "c.Exchange.path_includes_course = True\n"
            "c.Validator.width = 120\n")


def term_settings(course: str) -> str:
    """The first text of ``course``'s term settings on the hub (:meth:`HubLayout.term_settings`)."""
    return (f'"""The nbgrader settings of the course {course} for this term on this hub: yours to edit.\n\n'
            "Instructors and TAs may edit it; make hub never replaces it. Formgrader and every nbgrader\n"
            "command run as the course's grader account read it, and it wins over what make hub writes\n"
            "beside it, in hub/. The late policy, for example (docs/instructors.md, late work):\n\n"
            "    c.LateSubmissionPlugin.penalty_method = 'percent'\n"
            "    c.LateSubmissionPlugin.percent = 10\n"
            '"""\n'
            "c = get_config()  # noqa: F821\n")


#: what a student's JupyterLab on the hub leaves out: the instructors' panels (formgrader, Create
#: Assignment, the course list of formgraders) and JupyterLab's news pop-up
STUDENT_LAB_DISABLED = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                        "@jupyter/nbgrader:course-list", "@jupyterlab/apputils-extension:announcements")
def student_lab_settings() -> dict[str, str]:
    """File name (under the students' config folder) -> JSON text: JupyterLab's page settings, leaving
    out what :data:`STUDENT_LAB_DISABLED` names. (The server's own settings are left alone: a value
    set here would replace a student's, so a server extension of her own would be dropped, which
    hides what the hub's origins must hold against, and nothing is gained: her server is hers.)"""
    import json

    page = {"disabledExtensions": {name: True for name in STUDENT_LAB_DISABLED}}
    return {"labconfig/page_config.json": json.dumps(page, indent=1) + "\n"}


def grader_settings(layout: HubLayout) -> str:
    """A formgrader service's user-level ``nbgrader_config.py``: the exchange."""
    return (f'"""nbgrader settings of a formgrader service (autograder/hub/prepare.py)."""\n'
            "c = get_config()  # noqa: F821\n"
            f"c.Exchange.root = {str(layout.exchange)!r}\n")


def prepare(layout: HubLayout, log=print) -> None:
    """Make the state folder as :mod:`autograder.hub.layout` describes for every course with a
    roster in ``layout.rosters`` (their accounts must exist, made by this hub)."""
    layout.state.mkdir(parents=True, exist_ok=True)
    layout.state.chmod(0o755)
    layout.hub.mkdir(exist_ok=True)
    layout.hub.chmod(0o700)
    # nbgrader's exchange: 0777, the mode nbgrader's release insists on, and sticky (as /tmp), so
    # nobody removes or renames what another made in it
    layout.exchange.mkdir(exist_ok=True)
    layout.exchange.chmod(0o1777)
    layout.student_config.mkdir(parents=True, exist_ok=True)
    write_text(layout.student_config / "nbgrader_config.py", student_settings(layout))
    for name, text in student_lab_settings().items():
        (layout.student_config / name).parent.mkdir(parents=True, exist_ok=True)
        write_text(layout.student_config / name, text)
    layout.state.joinpath("config").chmod(0o755)
    subprocess.run(["chmod", "-R", "a+rX", str(layout.student_config)], check=True)
    layout.course(COURSE_ID).parent.mkdir(exist_ok=True)
    layout.course(COURSE_ID).parent.chmod(0o755)
    for course in layout.courses():
        _prepare_course(layout, course, log)


def _prepare_course(layout: HubLayout, course: str, log) -> None:
    grader, graders, students = layout.grader_user(course), layout.graders_group(course), layout.students_group(course)
    records = Records.load(layout.records)
    if records.user(grader) is None or records.group(graders) is None or records.group(students) is None:
        raise RuntimeError(f"{course}: its grader account and groups are not this hub's (make them first: "
                           "autograder.hub.accounts.ensure_accounts)")
    copy = layout.course(course)
    if copy_course(copy):
        from autograder.hub.release import record_release

        record_release(copy, ROOT)  # what the first make publish replaces
        log(f"copied the course into {copy}")
    write_text(copy / "autograder" / COURSE_ID_FILE, course + "\n")
    own_course_copy(copy, grader, graders)
    # the course's exchange folder: its grader releases and collects; only its students pass
    exchange = layout.course_exchange(course)
    key = f"exchange/{course}"
    _refuse_squatter(layout, exchange, grader, log, made=records.is_folder(key, exchange))
    exchange.mkdir(exist_ok=True)
    if not records.is_folder(key, exchange):  # made now, or kept as the grader account's
        records.made_folder(key, exchange)
    os.chown(exchange, pwd.getpwnam(grader).pw_uid, grp.getgrnam(students).gr_gid)
    exchange.chmod(0o750)
    config = layout.grader_config(course)
    layout.hub_settings(course).mkdir(parents=True, exist_ok=True)
    write_text(layout.hub_settings(course) / "nbgrader_config.py", grader_settings(layout))
    if not layout.term_settings(course).exists():  # the instructors': made once, never replaced
        write_text(layout.term_settings(course), term_settings(course))
    _own(config, grader, graders, "u+rwX,g+rX,o-rwx")
    config.chmod(0o2770)  # its instructors and TAs edit the term's settings
    layout.term_settings(course).chmod(0o660)
    Path(pwd.getpwnam(grader).pw_dir).chmod(0o700)


def adopt_older_exchange(layout: HubLayout, course: str, log=print) -> None:
    """Record as this hub's the exchange folder of ``course`` that the grader account of hubs before
    hub ids (``grader-ID``) owns, and give what that account owns in it to this hub's grader
    account (students' files stay theirs): run once, when a state folder made then gets its id, so
    that its released assignments and submissions are not moved aside as a squatter's."""
    exchange = layout.course_exchange(course)
    try:
        older = pwd.getpwnam(f"grader-{course}").pw_uid
        st = exchange.lstat()
    except (KeyError, FileNotFoundError):
        return
    if not (exchange.is_dir() and not exchange.is_symlink() and st.st_uid == older):
        return
    Records.load(layout.records).made_folder(f"exchange/{course}", exchange)
    grader = pwd.getpwnam(layout.grader_user(course)).pw_uid
    for folder, dirs, files in os.walk(exchange):
        for name in [folder, *(os.path.join(folder, n) for n in (*dirs, *files))]:
            if os.lstat(name).st_uid == older:
                os.lchown(name, grader, -1)
    log(f"{exchange}: made by this state folder's hub before hub ids, kept as its own")


#: the roster's columns a course copy's ``autograder/roster.csv`` keeps (nbgrader's and the LMS files')
CLASS_COLUMNS = ("id", "first_name", "last_name", "email", "lms_user_id", "sis_user_id", "sis_login_id", "section")


def class_roster(layout: HubLayout, course: str, kept: Path | None = None) -> str:
    """The students of ``course``'s hub roster as the course copy's ``autograder/roster.csv`` (CSV text:
    :data:`CLASS_COLUMNS` the roster has, a row per student; instructors and TAs are not the class),
    then the rows of ``kept`` (the copy's earlier ``roster.csv``) whose student the roster no longer
    names: a dropped student's grades stay in the gradebook, and the exports still name and match her."""
    def rows_of(path: Path) -> tuple[list[str], list[dict[str, str]]]:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            return list(reader.fieldnames or []), list(reader)

    fields, rows = rows_of(layout.roster(course))
    rows = [row for row in rows if (row.get("role") or "").strip().lower() in ("", "student")]
    if kept is not None and kept.exists():
        listed = {(row.get("id") or "").strip() for row in rows}
        old_fields, old_rows = rows_of(kept)
        fields += old_fields
        rows += [row for row in old_rows if (row.get("id") or "").strip() not in listed]
    columns = [c for c in CLASS_COLUMNS if c in fields]
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: (row.get(k) or "").strip() for k in columns} for row in rows)
    return out.getvalue()


def import_class(layout: HubLayout, log=print) -> None:
    """For each course of the hub: its class (:func:`class_roster`) into the course copy's
    ``autograder/roster.csv``, which the exports read, and into its gradebook (nbgrader's own
    ``db student import``, run as its grader account), so formgrader and the exports name each
    student. Needs the graders' environment (run after it is built)."""
    for course in layout.courses():
        work = layout.course(course) / "autograder"
        grader = layout.grader_user(course)
        roster = class_roster(layout, course, kept=work / "roster.csv")
        write_text(work / "roster.csv", roster)
        subprocess.run(["chown", f"{grader}:{layout.graders_group(course)}", str(work / "roster.csv")], check=True)
        (work / "roster.csv").chmod(0o660)
        env = {**layout.grader_environment(course), "HOME": pwd.getpwnam(grader).pw_dir}
        done = subprocess.run(["runuser", "-u", grader, "--", "env", *(f"{k}={v}" for k, v in env.items()),
                               str(layout.grader_env / "bin" / "nbgrader"), "db", "student", "import", "roster.csv"],
                              cwd=work, capture_output=True, text=True)
        if done.returncode:
            last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
            raise RuntimeError(f"{course}: the roster could not be put in the gradebook: {last}")
        log(f"{course}: {roster.count(chr(10)) - 1} students in the gradebook and roster.csv")


def _refuse_squatter(layout: HubLayout, exchange: Path, grader: str, log, made: bool = False) -> None:
    """A course's exchange folder someone else made first (anyone may make folders in the
    exchange) is moved out of reach, into ``STATE/hub/squatted/``, before the course's is made.
    The folder this hub made (``made``: the very folder its record names) stays, whoever owns it
    now, as does a real folder its grader account owns; every hub has an exchange of its own
    (``STATE/exchange``), so nothing here ever looks at another hub's."""
    try:
        owner = exchange.lstat().st_uid
    except FileNotFoundError:
        return
    real = exchange.is_dir() and not exchange.is_symlink()
    if real and (made or owner == pwd.getpwnam(grader).pw_uid):
        return
    aside = layout.hub / "squatted" / f"{exchange.name}-{time.strftime('%Y%m%dT%H%M%S')}"
    aside.parent.mkdir(mode=0o700, exist_ok=True)
    exchange.rename(aside)
    log(f"{exchange}: made by uid {owner}, not {grader}; moved to {aside} and made anew")
