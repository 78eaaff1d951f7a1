"""The class report is data drawn by a template: the template escapes every string of the data
(a hostile student id, name, note, mistake or answer is shown as text, never run or parsed as
markup, never evaluated as a template), it draws every string of every section, each table cell
carries its column's name (the phone layout), and no Python module of the report holds markup."""

from __future__ import annotations

import ast
import dataclasses
import re
from html.parser import HTMLParser

import pytest

from autograder.nbgrader_ext.gradebook_state import Awaiting
from autograder.notes import Note, NoteKind, records
from autograder.outputs.sanitise import REPORT_TAGS
from autograder.reporting import report_html
from autograder.reporting.answer_pairs import FoundPair
from autograder.reporting.class_data import ClassData
from autograder.reporting.report_data import Cell, ReportPage, Span, Table
from autograder.reporting.report_html import render, render_part
from autograder.reporting.report_sections import report_page, similar_answers
from autograder.reporting.similarity import Pair
from autograder.verdicts.record import Verdict
from autograder.workspace import ROOT, Workspace
from selfattn.checks.findings import Finding, Kind

A, NB3, NB7 = "attention", "03-softmax-attention", "07-masking"
IMG = '<img src=x onerror="alert(1)">'
JINJA = "{{ 7*7 }}{% raw %}"
CLOSE = "</table></td><script>alert(2)</script>"
MISTAKE = f"{CLOSE} `x<y` {JINJA}"
ANSWER = f"def attention(Q, K, V):\n    return '{CLOSE}'  # {IMG}\n"


@pytest.fixture()
def page(tmp_path) -> ReportPage:
    """A class whose ids, names, notes, mistakes, grade ids and answers are hostile, with something
    in every section (a queue, late work, an extension, a changed grade, a suspicious pair)."""
    ws = Workspace(tmp_path / "work", ROOT)
    named = Finding.mistake(MISTAKE, "shown").to_json()
    timeout = Finding(f"ran out of time {CLOSE}", Kind.TIME_OUT).to_json()
    sm, at = "softmax/rows-sum-to-one", "attention/no-mask"
    data = ClassData(ws=ws, students=["ann", IMG, JINJA], assignments=[A], names={IMG: JINJA, "ann": CLOSE})
    stored = {("ann", A, NB3): {"checks": {sm: None, at: None}},
              (IMG, A, NB3): {"checks": {sm: named, at: timeout},
                              "notes": records([Note(f"a cell raised {MISTAKE}", NoteKind.CELL_RAISED)])},
              (JINJA, A, NB3): {"checks": {sm: named, at: None}}}
    data.verdicts = {key: Verdict.from_json(v) for key, v in stored.items()}
    data.notebook_scores = {(s, a, nb): (3.0 * i, 6.0) for i, (s, a, nb) in enumerate(data.verdicts)}
    data.cell_scores = {(s, a, nb, "softmax-public"): (sc / 2, mx / 2)
                        for (s, a, nb), (sc, mx) in data.notebook_scores.items()}
    data.late, data.penalties = {(IMG, A): 7200.0}, {(IMG, A): 1.5}
    data.extensions = {(JINJA, A): f"2026-11-03 {CLOSE}"}
    data.awaiting = [Awaiting(IMG, A, "04-scaling", JINJA)]
    data.grade_changes = [(f"{IMG}/{A}", 4.5, 1.5)]
    built = report_page(data, ws.report, "2026-11-03 12:00")
    pair = FoundPair(A, NB3, Pair(f"attention{CLOSE}", IMG, JINJA, 0.9, 12), ANSWER, ANSWER + IMG)
    return dataclasses.replace(built, similarity=similar_answers([pair], [f"{NB7}: {CLOSE} not compared"]))


class _Page(HTMLParser):
    """The elements of a page (tag, attributes) and its text, as a browser reads them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == name]


def test_hostile_text_is_escaped_by_the_template(page):
    """Drawn by the template alone (before the sanitiser): the hostile strings are text, so no
    ``img``, ``script`` or extra table appears, and ``{{ 7*7 }}`` is not evaluated."""
    body = render_part("body", page)
    parsed = _Page(body)
    shown = "".join(parsed.text)
    for hostile in (IMG, JINJA, CLOSE, "x<y", ANSWER):
        assert hostile in shown, hostile
    assert not parsed.tags("img") and not parsed.tags("script"), [t for t, _ in parsed.elements]
    assert body.count("</table>") == body.count("<table ") == len(parsed.tags("table")) >= 8, "a </table> of the data"
    assert "&amp;lt;" not in body, "escaped twice: text was escaped in Python as well"
    assert "49" not in shown.replace(JINJA, ""), "the data was evaluated as a template"


def test_the_page_shows_hostile_text_as_text_and_holds_one_script(page):
    """The whole page (the body sanitised, in the document): the same, and the only script is the
    page's own sorting script."""
    html = render(page)
    parsed = _Page(html)
    shown = "".join(parsed.text)
    assert IMG in shown and JINJA in shown and "x<y" in shown  # dropped, not shown, if they were markup
    assert not parsed.tags("img") and len(parsed.tags("script")) == 1
    assert html.count("<table") == html.count("</table>") == render_part("body", page).count("<table ")
    csp = parsed.tags("meta")[1]
    assert csp == {"http-equiv": "Content-Security-Policy", "content": report_html.CSP}, csp


def _strings(value: object, field: str = "") -> list[str]:
    """Every string of a data object that the page shows as text (links' targets and sort keys
    and table ids are attributes, numbers are left out), a cell's by its code spans, an empty table's none."""
    if isinstance(value, str):
        return [value] if field not in {"href", "sort", "id"} and value.strip() else []
    if isinstance(value, Cell):
        return [value.value] if value.href is not None and isinstance(value.value, str) else _strings(value.spans)
    if isinstance(value, Span):
        return [value.text]
    if isinstance(value, Table) and not value.rows:
        return []  # an empty table may be a sentence instead ("No final score changed.")
    if dataclasses.is_dataclass(value):
        return [s for f in dataclasses.fields(value) for s in _strings(getattr(value, f.name), f.name)]
    if isinstance(value, tuple):
        return [s for v in value for s in _strings(v, field)]
    return []


def test_every_string_of_every_section_is_on_the_page(page):
    """The template draws every field of the data: each string of each section is in its
    section's text (a field the template forgot, or a section it left out, fails here)."""
    html = render(page)
    sections = dict(zip(re.findall(r'<section id="([^"]+)"', html), re.split(r'<section id="[^"]+"', html)[1:],
                        strict=True))
    assert list(sections) == ["glance", "difficulty", "queue", "history", "changes", "students", "scores", "checks",
                              "mistakes", "faults", "similarity"]
    for name in sections:
        data = page.glance if name == "glance" else getattr(page, name)
        strings = _strings(data)
        assert strings or name == "history", name  # the fixture has no resubmission
        shown = "".join(_Page(sections[name]).text)
        missing = [s for s in strings if s not in shown]
        assert not missing, (name, missing)
    head = "".join(_Page(html.split('<section id="difficulty"')[0]).text)
    assert all(s in head for s in (page.generated, *page.assignments, *(link.text for link in page.csv_links)))


def test_every_cell_is_labelled_with_its_column_for_phones(page):
    """Each ``td`` carries its column's header (shown beside the value when a row becomes a block),
    and a cell's sort key and link are its attributes."""
    for table in page.tables():
        if not table.rows:
            continue
        cells = _Page(render_part("table", table)).tags("td")
        assert [c["data-label"] for c in cells] == [h for row in table.rows for h in table.headers[:len(row)]]
        assert [c.get("data-v") for c in cells] == [
            None if c.sort is None else str(c.sort) for row in table.rows for c in row], table.id


def test_a_link_cell_links_and_its_text_is_escaped():
    table = Table("t", ("notebook",), ((Cell(IMG, 3, f"../feedback/{IMG}.html"),),))
    parsed = _Page(render_part("table", table))
    assert parsed.tags("a") == [{"href": f"../feedback/{IMG}.html"}] and not parsed.tags("img")
    assert IMG in "".join(parsed.text)


def test_line_breaks_of_the_template_are_layout():
    """Next to markup a line break of the template is removed with its indentation; inside a
    sentence it is one space; the data's own line breaks are kept."""
    template = report_html._ENV.from_string("<p>\n  one\n  two {{ x }}\n  <b>\n    {{ x }}\n  </b>\n</p>")
    assert template.render(x="a\n  b") == "<p>one two a\n  b<b>a\n  b</b></p>"


#: elements and entities the report's pages are made of: none may be written by its Python code
_ELEMENTS = "|".join(sorted(REPORT_TAGS | {"html", "head", "body", "meta", "style", "script", "!DOCTYPE"}))
_MARKUP = re.compile(rf"</?(?:{_ELEMENTS})\b|&[a-z]+;", re.I)


def _markup_in(source: str) -> list[int]:
    """Lines of ``source`` whose string literals (f-strings' literal parts included) hold markup."""
    return sorted({node.lineno for node in ast.walk(ast.parse(source))
                   if isinstance(node, ast.Constant) and isinstance(node.value, str) and _MARKUP.search(node.value)})


#: modules of autograder/reporting/ that write no HTML, with their reason
PLAIN_TEXT = {"run_summary.py": "the grading summary is plain text: its <id> and <a> are placeholders of commands"}


def test_no_python_module_of_the_report_writes_markup():
    """The report's HTML is the template's: no string in ``autograder/reporting/`` holds an element
    or an entity of the page (the f-string blocks that built it before would be found here)."""
    folder = ROOT / "autograder" / "reporting"
    modules = sorted(p for p in folder.glob("*.py") if p.name not in PLAIN_TEXT)
    assert {p.name for p in modules} >= {"class_report.py", "report_sections.py", "report_data.py", "report_html.py"}
    found = {p.name: lines for p in modules if (lines := _markup_in(p.read_text(encoding="utf-8")))}
    assert not found, f"markup written in Python (draw it in autograder/templates/): {found}"


def test_the_check_above_finds_markup():
    code = ('x = f\'<td data-label="{e(h)}">{v}</td>\'\ny = "a &minus; b"\nz = "a < b, <id>"\n'
            'w = ("<section id=\\"queue\\"><h2>Hand-grading queue</h2>" + tab("queue", h, rows))\n')
    assert _markup_in(code) == [1, 2, 4]
    assert not _markup_in((ROOT / "autograder" / "reporting" / "similarity.py").read_text(encoding="utf-8"))
