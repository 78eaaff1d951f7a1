"""The class report, the hand-grading queue, the feedback's grades digest and the LMS exports read
nbgrader's gradebook in a few queries (not one per student, notebook, grade and comment) and read
what walking nbgrader's objects reads."""

from __future__ import annotations

import warnings
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.exc import SAWarning

from autograder.nbgrader_ext import gradebook_engine, gradebook_schema
from autograder.nbgrader_ext.course_folders import course_directory
from autograder.reporting import class_report
from autograder.reporting.class_report import ClassData, final_score
from autograder.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]


STUDENTS = ("ada", "ben", "cy")


def _gradebook(work: Path, notebooks: int, cells: int, students: tuple[str, ...] = STUDENTS) -> tuple[Workspace, str]:
    """A gradebook of ``students``, each with ``notebooks`` notebooks of ``cells`` graded cells."""
    from nbgrader.api import Gradebook

    from autograder.course.ids import COURSE_ID

    gradebook_schema.install()
    gradebook_engine.install()
    ws = Workspace(work=work, course=ROOT)
    ws.gradebook.parent.mkdir(parents=True, exist_ok=True)
    url = course_directory(ws)["db_url"]
    # nbgrader's add_submission warns about its own ORM use (as make grade's steps filter it)
    with warnings.catch_warnings(), Gradebook(url, COURSE_ID) as gb:
        warnings.simplefilter("ignore", SAWarning)
        gb.add_assignment("attention")
        for n in range(notebooks):
            gb.add_notebook(f"nb{n}", "attention")
            for c in range(cells):
                gb.add_grade_cell(f"c{c}", f"nb{n}", "attention", max_score=c + 1, cell_type="code")
                gb.add_solution_cell(f"a{c}", f"nb{n}", "attention")  # a comment per submission
        for i, student in enumerate(students):
            gb.add_student(student, first_name=student.title())
            gb.add_submission("attention", student)
            for n in range(notebooks):
                gb.find_submission_notebook(f"nb{n}", "attention", student).late_submission_penalty = 0.5 * i
                for c in range(cells):
                    grade = gb.find_grade(f"c{c}", f"nb{n}", "attention", student)
                    grade.auto_score = (i + c) % (c + 2)
                    if i == 2 and c == 0:
                        grade.manual_score = 0.25
                    gb.find_comment(f"a{c}", f"nb{n}", "attention", student).manual_comment = f"{student} {n} {c}"
        gb.db.commit()
    return ws, url


def _walked(url: str) -> tuple[dict, dict, list]:
    """The scores and the hand-grading queue as walking nbgrader's objects reads them (what the
    report did before)."""
    from nbgrader.api import Grade, Gradebook

    from autograder.course.ids import COURSE_ID
    from autograder.nbgrader_ext.gradebook_state import Awaiting

    notebooks, cells = {}, {}
    with Gradebook(url, COURSE_ID) as gb:
        queue = sorted(Awaiting(g.notebook.assignment.student.id, g.notebook.assignment.name, g.notebook.name, g.name)
                       for g in gb.db.query(Grade).filter(Grade.needs_manual_grade.is_(True)))
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                for nb in sub.notebooks:
                    notebooks[(sub.student.id, assignment.name, nb.name)] = (
                        final_score(nb.score, nb.late_submission_penalty), nb.max_score)
                    for g in nb.grades:
                        cells[(sub.student.id, assignment.name, nb.name, g.name)] = (g.score, g.max_score)
    return notebooks, cells, queue


def _read(ws: Workspace, url: str) -> tuple[ClassData, int]:
    """The report's reading of the gradebook, and the number of SQL statements it ran."""
    statements = []
    engine = gradebook_engine.shared_engine(url, echo=False, future=True)
    listen = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", listen)
    try:
        data = ClassData(ws=ws)
        class_report._gradebook(data)
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    return data, len(statements)


def test_the_report_reads_the_scores_walking_nbgrader_s_objects_reads(tmp_path):
    ws, url = _gradebook(tmp_path, notebooks=3, cells=4)
    data, _ = _read(ws, url)
    notebooks, cells, queue = _walked(url)
    assert len(cells) == 3 * 3 * 4 and queue
    assert data.awaiting == queue
    assert data.notebook_scores == notebooks
    assert data.cell_scores == cells
    assert data.names == {"ada": "Ada", "ben": "Ben", "cy": "Cy"}


def test_the_report_s_queries_do_not_grow_with_notebooks_and_grades(tmp_path):
    small, big = tmp_path / "small", tmp_path / "big"
    _, few = _read(*_gradebook(small, notebooks=1, cells=1))
    _, many = _read(*_gradebook(big, notebooks=4, cells=5))
    assert many == few, f"{few} statements for 3 grades per student, {many} for 20"


def _walked_digest(url: str, student: str) -> str:
    """The grades digest as walking nbgrader's objects computed it (before the eager loads)."""
    import hashlib

    from nbgrader.api import Gradebook

    from autograder.course.ids import COURSE_ID

    with Gradebook(url, COURSE_ID) as gb:
        submission = gb.find_submission("attention", student)
        rows = [str(submission.timestamp), str(submission.late_submission_penalty)]
        for nb in sorted(submission.notebooks, key=lambda n: n.name):
            rows += [f"{nb.name}:{g.name}:{g.auto_score}:{g.manual_score}:{g.extra_credit}:{g.needs_manual_grade}"
                     for g in sorted(nb.grades, key=lambda g: g.name)]
            rows += [f"{nb.name}:{c.name}:{c.auto_comment}:{c.manual_comment}"
                     for c in sorted(nb.comments, key=lambda c: c.name)]
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def _digest_statements(url: str, student: str) -> tuple[str | None, int]:
    from autograder.course.ids import COURSE_ID
    from autograder.nbgrader_ext.gradebook_state import grades_digest

    statements = []
    engine = gradebook_engine.shared_engine(url, echo=False, future=True)
    listen = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", listen)
    try:
        digest = grades_digest(url, COURSE_ID, student, "attention")
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    return digest, len(statements)


def test_the_grades_digest_is_the_one_stored_runs_hold_in_queries_that_do_not_grow(tmp_path):
    _, small = _gradebook(tmp_path / "small", notebooks=1, cells=1)
    _, big = _gradebook(tmp_path / "big", notebooks=4, cells=5)
    for student in ("ada", "cy"):
        assert _digest_statements(big, student)[0] == _walked_digest(big, student)
    assert _digest_statements(big, "ada")[0] != _digest_statements(big, "cy")[0]
    few, many = _digest_statements(small, "ada")[1], _digest_statements(big, "ada")[1]
    assert many == few, f"{few} statements for one notebook of one grade, {many} for four of five"


def _manual(url: str, student: str) -> dict[tuple[str, str], tuple]:
    from nbgrader.api import Gradebook

    from autograder.course.ids import COURSE_ID

    with Gradebook(url, COURSE_ID) as gb:
        return {(nb.name, g.name): (g.manual_score, g.needs_manual_grade)
                for nb in gb.find_submission("attention", student).notebooks for g in nb.grades}


def test_hand_grades_are_settled_from_one_query_as_before(tmp_path):
    from nbgrader.api import Gradebook

    from autograder.course.ids import COURSE_ID
    from autograder.nbgrader_ext.gradebook_state import settle_hand_grades

    ws, url = _gradebook(tmp_path, notebooks=2, cells=2)
    answers = {f"nb{n}": {f"c{c}": f"answer {n} {c}" for c in range(2)} for n in range(2)}
    # cy's c0 of each notebook has a hand score in the queue, no record: taken as given for this answer
    assert settle_hand_grades(url, COURSE_ID, "cy", "attention", answers, ws) == (2, 0)
    assert settle_hand_grades(url, COURSE_ID, "cy", "attention", answers, ws) == (0, 0)  # settled now
    with Gradebook(url, COURSE_ID) as gb:  # an autograde puts both back in the queue
        for n in range(2):
            gb.find_grade("c0", f"nb{n}", "attention", "cy").needs_manual_grade = True
        gb.db.commit()
    answers["nb1"]["c0"] = "changed"
    before = _manual(url, "cy")
    assert settle_hand_grades(url, COURSE_ID, "cy", "attention", answers, ws) == (1, 1)
    manual = _manual(url, "cy")
    assert manual[("nb0", "c0")] == (0.25, False)  # the same answer: settled again
    assert manual[("nb1", "c0")] == (None, True)  # a changed answer: back in the queue, unscored
    assert {k: v for k, v in manual.items() if k[1] != "c0"} == {k: v for k, v in before.items() if k[1] != "c0"}
    # ada has no hand grade: nothing read per grade, for a small or a big class
    small_ws, small = _gradebook(tmp_path / "small", notebooks=1, cells=1)
    big_ws, big = _gradebook(tmp_path / "big", notebooks=4, cells=5)
    counts = []
    for w, u in ((small_ws, small), (big_ws, big)):
        engine = gradebook_engine.shared_engine(u, echo=False, future=True)
        seen = []
        listen = lambda *args, seen=seen: seen.append(1)  # noqa: E731
        event.listen(engine, "before_cursor_execute", listen)
        try:
            settle_hand_grades(u, COURSE_ID, "ada", "attention", {}, w)
        finally:
            event.remove(engine, "before_cursor_execute", listen)
        counts.append(len(seen))
    assert counts[0] == counts[1], counts


def _lms_table(url: str) -> tuple[tuple, int]:
    """The LMS exports' table of the gradebook, and the number of SQL statements it ran."""
    from autograder.course.ids import COURSE_ID
    from autograder.outputs.lms_export import class_table

    statements = []
    engine = gradebook_engine.shared_engine(url, echo=False, future=True)
    listen = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", listen)
    try:
        table = class_table(url, COURSE_ID, ROOT)
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    return table, len(statements)


def test_the_lms_table_reads_the_scores_walking_nbgrader_s_objects_reads(tmp_path):
    _ws, url = _gradebook(tmp_path, notebooks=2, cells=3)
    (columns, _possible, rows), _ = _lms_table(url)
    notebooks, cells, queue = _walked(url)
    pending = {s: sum(a[0] == s for a in queue) for s in STUDENTS}
    for row in rows:
        s = row["id"]
        assert row["attention status"] == (f"PENDING: {pending[s]} answers to hand-grade" if pending[s] else "final")
        for n in range(2):
            raw = sum(cells[s, "attention", f"nb{n}", f"c{c}"][0] for c in range(3))
            assert float(row[f"attention: nb{n}"]) == raw
            assert notebooks[s, "attention", f"nb{n}"][0] == max(0.0, raw - 0.5 * STUDENTS.index(s))
            for c in range(3):  # no course notebook names the cells' exercises: each is its own column
                assert float(row[f"attention: nb{n}: c{c}"]) == cells[s, "attention", f"nb{n}", f"c{c}"][0]
    assert sorted(r["id"] for r in rows) == list(STUDENTS) and "attention (total)" in columns


def test_the_lms_table_s_queries_do_not_grow_with_the_class(tmp_path):
    """Its columns are read from the course's notebooks and cells (a few queries each, whatever the
    class); its rows, for every student, in a fixed number of queries."""
    _, few = _lms_table(_gradebook(tmp_path / "small", notebooks=2, cells=3, students=STUDENTS[:1])[1])
    _, many = _lms_table(_gradebook(tmp_path / "big", notebooks=2, cells=3, students=(*STUDENTS, "dee", "eve"))[1])
    assert many == few, f"{few} statements for one student, {many} for five"


def _queries(url: str, read) -> tuple[object, int]:
    """What ``read()`` returns, and the number of queries (SELECT statements; writes are one per
    changed row) it ran on the gradebook at ``url``."""
    statements = []
    engine = gradebook_engine.shared_engine(url, echo=False, future=True)
    listen = lambda *args: statements.append(args[2]) if args[2].lstrip().upper().startswith("SELECT") else None  # noqa: E731
    event.listen(engine, "before_cursor_execute", listen)
    try:
        out = read()
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    return out, len(statements)


def _hand_in_late(url: str, students: tuple[str, ...]) -> None:
    """A due date for the assignment, and every submission two days after it (the first a day)."""
    from datetime import datetime

    from nbgrader.api import Gradebook

    from autograder.course.ids import COURSE_ID

    with Gradebook(url, COURSE_ID) as gb:
        gb.find_assignment("attention").duedate = datetime(2026, 11, 1, 12)
        for i, s in enumerate(students):
            gb.find_submission("attention", s).timestamp = datetime(2026, 11, 2 + (i > 0), 13)
        gb.db.commit()


def _walked_finals(url: str, students: tuple[str, ...]) -> dict[str, float]:
    """Each submission's final score, walking nbgrader's objects."""
    from nbgrader.api import Gradebook

    from autograder.course.ids import COURSE_ID

    with Gradebook(url, COURSE_ID) as gb:
        return {f"{s}/attention": round(final_score(sub.score, sub.late_submission_penalty), 6)
                for s in students for sub in [gb.find_submission("attention", s)]}


def test_the_late_penalties_and_final_scores_read_the_class_in_a_fixed_number_of_queries(tmp_path):
    """Every run sets every late notebook's penalty again and compares every final score with the
    last run's: neither may ask the gradebook once per student, notebook or grade."""
    from autograder.course.ids import COURSE_ID
    from autograder.late import penalties
    from autograder.late.policy import Policy

    policy = Policy(method="percent", percent=10.0, per="day", cap=30.0)
    counts = {}
    for name, students in (("small", STUDENTS[:1]), ("big", (*STUDENTS, "dee", "eve"))):
        _ws, url = _gradebook(tmp_path / name, notebooks=2, cells=3, students=students)
        _hand_in_late(url, students)
        finals, counts[name, "final"] = _queries(url, lambda url=url: penalties.final_scores(url, COURSE_ID))
        assert finals == _walked_finals(url, students) and len(finals) == len(students)
        changed, counts[name, "apply"] = _queries(url, lambda url=url: penalties.apply(url, COURSE_ID, policy))
        assert changed == 2 * len(students)  # every notebook late: its penalty set from its score
        assert penalties.final_scores(url, COURSE_ID) == _walked_finals(url, students)
    assert counts["big", "final"] == counts["small", "final"], counts
    assert counts["big", "apply"] == counts["small", "apply"], counts
