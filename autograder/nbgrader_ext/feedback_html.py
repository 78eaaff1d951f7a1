"""Feedback pages that load nothing from outside.

nbgrader's feedback template loads MathJax from a CDN, so offline the formulas stay raw and every
student's browser contacts a third party. :class:`OfflineFeedbackExporter` (nbgrader's
``GenerateFeedback.exporter_class``) renders the math of every Markdown cell to MathML at export
(browsers draw MathML themselves) and removes every script or stylesheet the page would fetch from
another server. The instructor's comments (formgrader says they take Markdown and MathJax) are rendered the same
way, and so is math in a heading: the MathML carries no ``xmlns`` (HTML puts ``<math>`` in the
MathML namespace itself), which nbconvert's heading anchors would otherwise re-serialise as
``<ns0:math>``, an unknown element shown as flat text without its subscripts. A formula the
converter cannot read is shown as its TeX source in ``<code>``. Every Markdown cell and comment is
rendered by :mod:`autograder.nbgrader_ext.feedback_text`: the students' within a size cap and a time
budget per notebook, and every one through the allow-list sanitiser
(:func:`autograder.outputs.sanitise.feedback_fragment`).

The page is nbgrader's feedback template extended by ``templates/feedback.html.j2``: a test cell's
link names its exercise ("softmax: hidden checks") and a grade still in the hand-grading queue
reads "awaiting hand-grading" rather than a score of 0.
The page states its language and carries a small stylesheet (:func:`accessible`) so that it passes
axe-core's serious and critical checks: links underlined and dark enough on every panel, code wrapped
instead of scrolling in boxes a keyboard cannot reach. A graded cell's heading (37 px high in nbgrader's
stylesheet) grows to hold its floated score: on a phone the score takes a second line of the heading,
not a place below it in the cell, where it was white on the panel and squeezed the cell's code into a
column a few letters wide. On a phone the page's three nested containers and its panel keep 4 to 6 px
of padding, not 15 px each on both sides, which left the code 65 % of the screen.

nbgrader makes a new exporter for every notebook, and each would compile nbconvert's Jinja
templates again: the compiled templates are kept for the process (a bytecode cache keyed by each
template's source, so an edited template is compiled afresh), and the math of the course's own
Markdown cells, the same text for every student, is converted once. The grades come from the
gradebook in a few queries a notebook, not three a cell
(:mod:`autograder.nbgrader_ext.preloaded`), and nbconvert's last pass over the finished
page (a BeautifulSoup parse, half a page's cost, that changes nothing on these pages but an ``<img>``
without ``alt``) is replaced by :func:`with_alt_text`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import jinja2
from nbconvert.exporters import HTMLExporter
from nbconvert.filters import strip_files_prefix
from nbgrader.preprocessors import GetGrades

from autograder.nbgrader_ext.feedback_text import Budget, render_course, render_student

#: the course's feedback template (nbgrader's, extended)
TEMPLATE = Path(__file__).resolve().parents[1] / "templates" / "feedback.html.j2"
_REMOTE = re.compile(
    r"<script\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>\s*</script>|<link\b[^>]*\bhref\s*=\s*[\"']?(?:https?:)?//[^>]*>",
    re.I)


#: the formgrader server's MathJax loader (autograder/jupyter_data): feedback has its math as MathML
_FORMGRADER_MATHJAX = re.compile(r"<script\b[^>]*\bdata-selfattn-mathjax\b[^>]*>.*?</script>", re.S | re.I)


def strip_remote(page: str) -> str:
    """The page without the scripts and stylesheets it would load from other servers (nor the
    formgrader server's MathJax loader, when the feedback is generated there)."""
    return _FORMGRADER_MATHJAX.sub("", _REMOTE.sub("", page))


#: Every formula is clipped to its own box (a quarter em around it, where glyphs' ink reaches past
#: their boxes), and no wider than the text around it: what a formula draws outside its box
#: (``\\smash``, ``\\raise``, ``\\moveleft``, negative space, however large) is not painted.
#: A displayed formula wider than the page scrolls sideways instead (the sanitiser lets the keyboard
#: focus it: :func:`autograder.outputs.sanitise.bounded_math`).
MATH_CLIP_STYLE = """math { overflow: clip; overflow-clip-margin: 0.25em; max-width: 100%; }
math[display="block" i] { overflow: auto hidden; }
"""
_A11Y_STYLE = """<style data-selfattn-a11y>
a, a:visited { color: #0b4f9c; text-decoration: underline; }
.alert a, .panel-body a { color: #083b75; }
.panel-primary > .panel-heading a, .panel-primary > .panel-heading .pull-right a { color: #ffffff !important; }
.highlight .ne, .highlight .gr, .highlight .gt, .highlight .err { color: #a1281f; }
.highlight .ow, .highlight .nd { color: #6a1b9a; }
.highlight .k, .highlight .kn, .highlight .kc, .highlight .kd, .highlight .nb, .highlight .bp { color: #00600f; }
.highlight .s, .highlight .s1, .highlight .s2, .highlight .sa, .highlight .sd { color: #8f1a1a; }
.highlight .mi, .highlight .mf, .highlight .o { color: #4a4a4a; }
.highlight .nf, .highlight .nc, .highlight .nn { color: #0b3fa8; }
.highlight .si, .highlight .se { color: #7a4400; }
.highlight .c, .highlight .c1, .highlight .ch, .highlight .cm, .highlight .cpf, .highlight .cs { color: #3f5f3f; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
div.nbgrader_cell > .panel-heading { display: flow-root; height: auto; min-height: 37px; }
@media (max-width: 600px) { .container { padding-left: 4px; padding-right: 4px; }
  .panel-default > .panel-body { padding: 6px; } }
""" + MATH_CLIP_STYLE + """</style>
"""
_HTML_TAG = re.compile(r"<html(?![^>]*\blang=)([^>]*)>", re.I)


def accessible(page: str) -> str:
    """The page with ``lang="en"`` on ``<html>`` and the accessibility stylesheet before ``</head>``."""
    page = _HTML_TAG.sub(r'<html lang="en"\1>', page, count=1)
    return page.replace("</head>", _A11Y_STYLE + "</head>", 1) if "data-selfattn-a11y" not in page else page


#: a space after a number and before its unit, or inside a lateness ("2 d 1 h")
_UNIT_SPACE = re.compile(r"(?<=\d) (?=(?:d|h|min|UTC)\b)|(?<=\b[dh]) (?=\d)")


def unbroken(text: str) -> str:
    """``text`` with no-break spaces between each number and its unit of time and inside a lateness, so that
    the due line never puts "2 d 1" on one line and "h late" on the next (it did on a phone)."""
    return _UNIT_SPACE.sub("\u00a0", text)


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled Jinja templates kept in memory for the process (Jinja checks each one's source)."""

    def __init__(self) -> None:
        self._store: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self._store:
            bucket.bytecode_from_string(self._store[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._store[bucket.key] = bucket.bytecode_to_string()


_TEMPLATES = _CompiledTemplates()


class GetGradesWithQueue(GetGrades):
    """nbgrader's ``GetGrades`` (scores and comments from the gradebook into the cells), which also
    marks a grade still in the hand-grading queue: ``nbgrader.awaiting``. Its per-cell questions
    are answered from the notebook's rows read once
    (:class:`~autograder.nbgrader_ext.preloaded.NotebookRows`)."""

    def preprocess(self, nb, resources):
        """nbgrader's, then ``nbgrader.due`` (the student's due date, their extension included) and,
        for a late submission, ``nbgrader.late`` (how late and what it costs, under the course's policy)."""
        from nbgrader.api import Gradebook

        from autograder.late.policy import final_score, lateness, policy_of
        from autograder.nbgrader_ext.preloaded import rows_or_gradebook

        info = resources["nbgrader"]
        self.notebook_id, self.assignment_id = info["notebook"], info["assignment"]
        self.student_id, self.db_url = info["student"], info["db_url"]
        with Gradebook(self.db_url) as gb:
            self.gradebook = rows_or_gradebook(self, gb, self.assignment_id, self.notebook_id, self.student_id)
            nb, resources = super(GetGrades, self).preprocess(nb, resources)  # cell by cell: preprocess_cell
            notebook = gb.find_submission_notebook(self.notebook_id, self.assignment_id, self.student_id)
            late_penalty = notebook.late_submission_penalty or 0
            if notebook.late_submission_penalty is not None:
                self.log.warning(f"Late submission penalty: {late_penalty}")
            info.update(score=final_score(notebook.score, late_penalty), max_score=notebook.max_score,
                        late_penalty=late_penalty)
            sub = notebook.assignment
            due, seconds, extended = sub.duedate, sub.total_seconds_late, bool(sub.extension)
        if due is not None:
            info["due"] = unbroken(due.strftime("%Y-%m-%d %H:%M UTC") + (" (with your extension)" if extended else ""))
        if seconds > 0:
            info["late"] = unbroken(f"handed in {lateness(seconds)} late; {policy_of(self.config).describe()}: "
                                    f"{float(info.get('late_penalty') or 0):g} points taken from this notebook")
        return nb, resources

    def _get_score(self, cell, resources) -> None:
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        cell.metadata.nbgrader["score"] = grade.score
        cell.metadata.nbgrader["points"] = grade.max_score
        cell.metadata.nbgrader["awaiting"] = bool(grade.needs_manual_grade)


def is_student_text(cell) -> bool:
    """Whether a Markdown cell of the autograded notebook holds a student's text (a written answer,
    or the grading notes, which quote it) rather than the course's own."""
    meta = cell.metadata
    return bool(meta.get("grading_notes") or (meta.get("nbgrader") or {}).get("solution"))


def annotate(nb, resources: dict, to_html: Callable[[object, str], str] | None = None, *,
             course: Path | None) -> None:
    """What the course's template shows beyond nbgrader's: each test cell's exercise (from the
    notebook's spec in ``course``, the course of the run; none when ``None``), the points
    awaiting hand-grading, and each Markdown cell and comment as sanitised HTML (``selfattn_html``
    in the cell's metadata, ``comment_html`` beside nbgrader's ``comment``), the students' text within
    one :class:`~autograder.nbgrader_ext.feedback_text.Budget` for the notebook (the comments within
    another). ``to_html(cell, text)``
    renders Markdown (default: nbconvert's renderer without the cell's attachments)."""
    from autograder.course.spec import load_spec

    if to_html is None:
        exporter = HTMLExporter()
        to_html = lambda cell, text: exporter.markdown2html({"cell": cell}, text)  # noqa: E731
    info = resources.setdefault("nbgrader", {})
    try:
        labels = {} if course is None else {
            t.grade_id: t.label for t in load_spec(info["assignment"], info["notebook"], course).tests}
    except (KeyError, OSError, ValueError):
        labels = {}
    info["awaiting_points"] = 0.0
    budget, comments = Budget(), Budget()  # a student's answers cannot spend the instructor's comments' time
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if cell.cell_type == "markdown":
            render = lambda text, c=cell: strip_files_prefix(to_html(c, text))  # noqa: E731
            cell.metadata["selfattn_html"] = (render_student(cell.source, render, budget) if is_student_text(cell)
                                              else render_course(cell.source, render))
        if not meta:
            continue
        gid = meta.get("grade_id")
        if gid in labels:
            meta["exercise"] = labels[gid]
        if meta.get("grade") and meta.get("awaiting"):  # set by GetGradesWithQueue
            info["awaiting_points"] += float(meta.get("points") or 0)
        if meta.get("comment"):
            meta["comment_html"] = render_student(str(meta["comment"]),
                                                  lambda text: strip_files_prefix(to_html({}, text)), comments)


class OfflineFeedbackExporter(HTMLExporter):
    """nbgrader's feedback HTML, with math rendered at export and nothing loaded from outside."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # nbgrader's template (``template_name = "feedback"``) stays the base: ours extends it
        # (template_paths is computed once, at construction: extend it, not extra_template_paths)
        self.template_paths = [*self.template_paths, str(TEMPLATE.parent)]
        self.template_file = TEMPLATE.name

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = _TEMPLATES
        return environment

    def _preprocess(self, nb, resources):
        # after nbgrader's preprocessors: GetGrades has put the scores and comments in the cells
        nb, resources = super()._preprocess(nb, resources)
        annotate(nb, resources, lambda cell, text: self.markdown2html({"cell": cell}, text),
                 course=self.course_of_run())
        return nb, resources

    def course_of_run(self) -> Path | None:
        """The course of the nbgrader converter running this exporter (``generate_feedback``: its
        ``CourseDirectory`` names the workspace); ``None`` outside one, or for a course directory
        laid out otherwise (nbgrader's own tests): no exercise labels, and no course guessed."""
        from autograder.errors import RefusedInput
        from autograder.nbgrader_ext.course_folders import workspace_of

        coursedir = getattr(self.parent, "coursedir", None)
        try:
            return None if coursedir is None else workspace_of(coursedir).course
        except RefusedInput:
            return None

    def from_notebook_node(self, nb, resources=None, **kw):
        # (nbconvert works on its own copy of ``nb``: the annotations never reach the caller's)
        output, resources = self.template_html(nb, resources, **kw)
        return accessible(strip_remote(with_alt_text(output))), resources

    def template_html(self, nb, resources=None, **kw) -> tuple[str, dict]:
        """The page as nbconvert's ``HTMLExporter.from_notebook_node`` makes it, without its last
        pass: parsing the whole page with BeautifulSoup (half the cost of a feedback page) to give
        ``<img>`` without ``alt`` a text (:func:`with_alt_text` does that here) and to make the
        ``.jp-Notebook`` cells of JupyterLab's template focusable (nbgrader's feedback template has
        none). ``tests/test_feedback_page.py`` checks that nbconvert's pass finds nothing to change on
        such a page."""
        from nbconvert.exporters.templateexporter import TemplateExporter
        from nbconvert.filters.highlight import Highlight2HTML
        from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        self.register_filter("highlight_code",
                             self.filters.get("highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)))
        resources = self._init_resources(resources)
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata,
                                                                       parent=self, resources=resources))
        return TemplateExporter.from_notebook_node(self, nb, resources, **kw)


#: an ``<img>`` tag without an ``alt`` attribute
_IMG_WITHOUT_ALT = re.compile(r"<img\b(?![^>]*\balt\s*=)", re.I)
#: nbconvert's text for an image that has none
NO_ALT_TEXT = "No description has been provided for this image"


def with_alt_text(page: str) -> str:
    """``page`` with every ``<img>`` that has no ``alt`` given nbconvert's text for it."""
    return _IMG_WITHOUT_ALT.sub(f'<img alt="{NO_ALT_TEXT}"', page)
