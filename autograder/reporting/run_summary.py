"""What a grading run tells the instructor: progress while it works, and a summary at the end
(printed and written to ``grading-summary.txt`` in the work folder) that lists every anomaly."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.notes import Note, NoteKind
from autograder.outputs import atomic


class Progress:
    """One line per finished notebook (at most about one a second for big classes), with the rate
    and an estimate of the time left."""

    def __init__(self, total: int, log=print, every: float = 1.0):
        self.total, self.done, self.log = total, 0, log
        self.start = self.last = time.perf_counter()
        self.first: float | None = None  # when the first notebook finished
        self.every = every if total > 100 else 0.0
        # step is called as each notebook finishes, from the thread that sees it finish
        self._lock = threading.Lock()

    def step(self, what: str, seconds: float) -> None:
        with self._lock:
            self._step(what, seconds)

    def _step(self, what: str, seconds: float) -> None:
        self.done += 1
        now = time.perf_counter()
        if self.first is None:
            self.first = now
        if now - self.last < self.every and self.done < self.total:
            return
        self.last = now
        line = f"[{self.done}/{self.total}] {what} ({seconds:.1f} s)"
        # the rate counts from the first finished notebook: the start-up before it (workers, the
        # pre-warmed sandboxes) is paid once and would make the first estimates far too long
        if self.done >= 3 and now > self.first:
            rate = (self.done - 1) / (now - self.first)
            line += f" · {rate:.2f} notebooks/s · about {_duration((self.total - self.done) / rate)} left"
        elif self.done < self.total:
            line += " · estimating the time left"
        self.log(line)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


#: the list of the :class:`Summary` a staging note of each kind goes to (a kind not here is a
#: repair); a notebook not handed in is listed in ``missing`` already
NOTE_LISTS: dict[NoteKind, str | None] = {NoteKind.GRADER_ERROR: "sandbox_failures",
                                          NoteKind.UNREADABLE: "unreadable", NoteKind.MISSING: None}


@dataclass
class Summary:
    """Everything an instructor should know after a run; each list holds one line per case."""

    decided: int = 0  # notebooks whose verdict was computed in this run
    reused: int = 0  # notebooks whose verdict still held (same answers, same checks, same settings)
    settings_stale: int = 0  # notebooks graded again only because a grading setting changed
    decided_again_because: list[str] = field(default_factory=list)  # what changed in the code or checks
    settings: str = ""  # the grading settings of this run, as the summary prints them
    students: int = 0
    autograded: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    unknown_students: list[str] = field(default_factory=list)
    late: list[str] = field(default_factory=list)  # autograder.late.penalties.late_lines
    late_policy: str = ""  # the late policy in force, in words (Policy.describe)
    due_dates_set: list[str] = field(default_factory=list)  # due dates and extensions written now
    score_changes: list[str] = field(default_factory=list)  # "alice/attention: 7 -> 10" since the last export
    sandbox_failures: list[str] = field(default_factory=list)
    no_lms_identity: list[str] = field(default_factory=list)  # students Canvas cannot match
    nbgrader_problems: list[str] = field(default_factory=list)
    awaiting: list[str] = field(default_factory=list)  # answers awaiting hand-grading
    ignored: list[str] = field(default_factory=list)
    ignored_notebooks: list[str] = field(default_factory=list)  # autograder.intake.ignored_notebooks
    collect_refused: list[str] = field(default_factory=list)  # the last Collect's refusals (autograder.intake.inbound)
    sandbox_mode: str = ""
    caps: str = ""  # the caps each run had (sandbox.caps_in_force)
    seconds: float = 0.0

    ANOMALIES = (
        ("missing", "notebooks not handed in (scored 0)",
         "check with the student; if it was handed in elsewhere, put it in submitted/ and run make grade"),
        ("unreadable", "notebooks that could not be read (scored 0)",
         "ask for a readable copy, put it in submitted/, run make grade STUDENT=<id>"),
        ("repaired", "notebooks repaired before grading (the note is in the feedback)",
         "nothing to do unless the note surprises you"),
        ("unknown_students", "students not on the roster (no name in the gradebook)",
         "add them: nbgrader db student add <id> --first-name ... --last-name ..."),
        ("no_lms_identity", "students with no LMS identity (empty ID and SIS columns: Canvas cannot match their rows)",
         "give each an lms_user_id, sis_user_id or sis_login_id in autograder/roster.csv, then make grades-final"),
        ("late", "late submissions",
         "the penalty is c.LateSubmissionPlugin.penalty_method in your nbgrader_config.py; an extension: "
         "make extension STUDENT=<id> ASSIGNMENT=<a> UNTIL=<time>"),
        ("sandbox_failures", "notebooks the grader could not process (scored 0)",
         "read the note in their feedback, fix the cause, run make grade STUDENT=<id>"),
        ("nbgrader_problems", "nbgrader steps that failed", "run make grade STUDENT=<id> and read its output"),
        ("awaiting", "written answers awaiting hand-grading (not final; PENDING in the LMS files)",
         "grade them in formgrader (Manual Grading), then make grades-final"),
        ("ignored", "folders in submitted/ refused (not graded; the reason is given)",
         "fix or remove the folder, then run make grade"),
        ("ignored_notebooks", "notebooks handed in that are not the course's (renamed, a copy, extra: not graded)",
         "if a student's work is in one, copy it into the course notebook named (in submitted/), then "
         "make grade STUDENT=<id>"),
        ("collect_refused", "hand-ins the last Collect refused or corrected (from the exchange; the reason is given)",
         "what was collected before is what is graded; a refused folder stays in the exchange's inbound"),
    )

    def add_note(self, where: str, note: Note) -> None:
        """List one staging note of the notebook ``where`` (``student/assignment/notebook``) by its kind."""
        name = NOTE_LISTS.get(note.kind, "repaired")
        if name is not None:
            getattr(self, name).append(f"{where}: {note}")

    def lines(self) -> list[str]:
        out = [f"Grading summary ({time.strftime('%Y-%m-%d %H:%M:%S')}, {self.seconds:.1f} s, "
               f"sandbox: {self.sandbox_mode})",
               f"  submissions: {self.students}; notebooks graded now: {self.decided}, unchanged since "
               f"the last run: {self.reused}; students put through nbgrader autograde: {len(self.autograded)}"]
        if self.settings:
            out.append(f"  grading settings: {self.settings}")
        if self.settings_stale:
            out.append(f"  verdicts made stale by a changed grading setting (graded again): {self.settings_stale}")
        out += [f"  decided again because {line}" for line in self.decided_again_because]
        if self.caps:
            out.append(f"  caps in force: {self.caps}")
        if self.late_policy:
            out.append(f"  late policy: {self.late_policy} (c.LateSubmissionPlugin in your nbgrader_config.py)")
        for line in self.due_dates_set:
            out.append(f"  due date set now (due-dates.csv): {line}")
        out.append(f"  final grades changed since the last export: {len(self.score_changes)}"
                   + ("  -> old -> new, after the late penalty; grades.csv and the LMS files hold the new ones"
                      if self.score_changes else ""))
        out += [f"    - {item}" for item in self.score_changes]
        for name, title, advice in self.ANOMALIES:
            items = getattr(self, name)
            out.append(f"  {title}: {len(items)}" + (f"  -> {advice}" if items else ""))
            out += [f"    - {item}" for item in items[:200]]
            if len(items) > 200:
                out.append(f"    ... and {len(items) - 200} more")
        return out

    def write(self, path: Path, log=print) -> None:
        text = "\n".join(self.lines()) + "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, text)
        log(text.rstrip())
        log(f"(summary written to {path})")
