"""The class report's HTML: :func:`render` draws a :class:`~autograder.reporting.report_data.ReportPage`
with the template ``autograder/templates/class_report.html.j2`` (Jinja, autoescape on: every
string of the data is escaped by the template engine), passes the body through the report's
allow-list sanitiser (:func:`autograder.outputs.sanitise.report_fragment`) and wraps it in the
document with the page's inline style, its table-sorting script and its Content-Security-Policy
(:data:`STYLE`, :data:`SCRIPT`, :data:`CSP`). Nothing on the page loads anything from outside.

The template is written indented for its reader; its line breaks next to markup are removed when
it is compiled (:class:`_JoinedLines`), so the page is as compact as if written on one line.
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
from jinja2.ext import Extension
from markupsafe import Markup

from autograder.outputs.sanitise import report_fragment
from autograder.reporting.report_data import ReportPage

#: the folder of the grader's templates, and the class report's template in it
TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
TEMPLATE = "class_report.html.j2"
_LINE_BREAK = re.compile(r"\n[ \t\n]*")


def _joined(found: re.Match[str]) -> str:
    """What one line break of the template (with the blank lines and indentation after it) becomes:
    nothing next to markup (after ``>`` or ``}``, before ``<`` or ``{``), else one space."""
    source, start, end = found.string, found.start(), found.end()
    before, after = source[start - 1:start], source[end:end + 1]
    return "" if before in ("", ">", "}") or after in ("", "<", "{") else " "


class _JoinedLines(Extension):
    """Removes the template's layout when it is compiled (:func:`_joined`): its data never passes here."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        return _LINE_BREAK.sub(_joined, source)


_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                          undefined=jinja2.StrictUndefined, extensions=[_JoinedLines])
#: ``{{ x|num('.1f') }}``: a number written as by Python's ``format(x, spec)``
_ENV.filters["num"] = format


def render_part(macro: str, value: object) -> str:
    """One part of the page drawn alone by its macro of the template (``"histogram"`` for a
    :class:`~autograder.reporting.histogram.Histogram`, ``"similarity"`` for that section, ...),
    escaped but not sanitised: for looking at one part, never for a page."""
    return str(getattr(_ENV.get_template(TEMPLATE).module, macro)(value))


def render(page: ReportPage) -> str:
    """The whole HTML document of ``page``: its body drawn by the template and sanitised, in the
    document with the inline style, the script and the Content-Security-Policy."""
    macros = _ENV.get_template(TEMPLATE).module
    body = Markup(report_fragment(str(macros.body(page))))  # the sanitiser's output is the page's markup
    return str(macros.document(body, Markup(STYLE), Markup(SCRIPT), Markup(CSP)))


STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 2rem;color:#222}
h1{font-size:1.6rem}h2{border-bottom:1px solid #ccc;margin-top:2.2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem}th,td{border:1px solid #ccc;padding:.2rem .45rem;
text-align:left;vertical-align:top}th{background:#f1f1f1;cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
.grid{display:flex;flex-wrap:wrap;gap:1rem}figure{margin:0;border:1px solid #ddd;padding:.4rem}
figcaption{font-size:.85rem;font-weight:600}svg.hist rect{fill:#3a6ea5}svg.hist text{font-size:10px;fill:#333}
pre{background:#f6f6f6;padding:.4rem;overflow:auto;max-height:22rem;font-size:.8rem;margin:0}
code{background:#f1f1f1;padding:0 .2em;border-radius:3px;font-size:.9em}
.side{display:grid;grid-template-columns:1fr 1fr;gap:.6rem}.muted{color:#666}
.num{font-variant-numeric:tabular-nums}nav{display:flex;flex-wrap:wrap;gap:.2rem 1rem}
.scroll{overflow-x:auto;max-width:100%}
.glance{display:grid;grid-template-columns:repeat(auto-fit,minmax(17rem,1fr));gap:1rem;margin:.8rem 0}
@media (min-width:60rem){.glance{grid-template-columns:1.4fr 1fr 1fr}}
.glance>div{border:1px solid #ccc;border-radius:6px;padding:.2rem .8rem .6rem}.glance h2{margin-top:.6rem;
border:none;font-size:1.15rem}.glance ul{padding-left:1.1rem;margin:.3rem 0}.glance table{font-size:.85rem}
.big{font-size:1.25rem;font-weight:600}
@media (max-width:40rem){body{padding:.6rem}.side{grid-template-columns:1fr}figure,figure svg{max-width:100%}
table.sortable,table.sortable tbody,table.sortable tr,table.sortable td{display:block}
table.sortable thead{display:none}
table.sortable tr{border:1px solid #ccc;margin:.5rem 0;padding:.2rem 0}
table.sortable td{border:none;padding:.1rem .45rem;overflow-wrap:anywhere}
table.sortable td::before{content:attr(data-label) ": ";font-weight:600}}
@media (prefers-color-scheme:dark){body{background:#1b1d21;color:#e3e3e3}th{background:#2b2f36}
th,td{border-color:#444}figure{border-color:#444}pre{background:#262a30;color:#e3e3e3}.muted{color:#a8a8a8}
code{background:#2b2f36}
a{color:#8ab4f8}svg.hist rect{fill:#6d9fd6}svg.hist text{fill:#ddd}svg.hist line{stroke:#aaa}}
"""

SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (t) {
  t.querySelectorAll("th").forEach(function (th, col) {
    th.tabIndex = 0;
    function sort() {
      var asc = th.getAttribute("aria-sort") !== "ascending";
      t.querySelectorAll("th").forEach(function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      function key(r) {
        var c = r.cells[col]; if (!c) return "";
        var v = c.hasAttribute("data-v") ? c.getAttribute("data-v") : c.textContent;
        var n = parseFloat(v); return (v.trim() !== "" && isFinite(v)) ? n : v.toLowerCase();
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), r;
        if (typeof x === "number" && typeof y === "number") r = x - y;
        else r = String(x).localeCompare(String(y));
        return asc ? r : -r;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (ev) { if (ev.key === "Enter") sort(); });
  });
});
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
