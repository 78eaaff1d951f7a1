"""The pieces the class report (:mod:`autograder.reporting.class_report`) is drawn with: escaped table cells
(links, sort keys, the column's name for phones), inline SVG histograms whose axis labels never
overlap, and the page's style, sorting script and Content-Security-Policy. Nothing here loads
anything from outside, and every piece of text is HTML-escaped."""

from __future__ import annotations

import html
import re
from typing import NamedTuple

e = html.escape
# a Markdown code span in a message (grading notes are Markdown: "fix `softmax`")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def text_cell(text: str) -> str:
    """``text`` escaped, with its Markdown code spans shown as code rather than as backticks."""
    return _CODE_SPAN.sub(r"<code>\1</code>", e(text))


class Link(NamedTuple):
    """A table cell that links somewhere (its text is escaped; the CSV file holds the text)."""

    text: str
    href: str


def _stride(labels: list[str], spacing: float) -> int:
    """Label every ``stride``-th position so that no two labels overlap: the smallest stride whose
    spacing holds the widest label (10 px text, about 6.2 px a character, plus a gap)."""
    widest = max((len(x) for x in labels), default=1) * 6.2 + 6
    return next((k for k in (1, 2, 5, 10) if k * spacing >= widest), max(1, len(labels) - 1))


def histogram(values: list[float], top: float, title: str) -> str:
    """An inline SVG histogram of scores in [0, top], with its alt text (the counts in words).

    Integer scores up to 12 get one bar per score, labelled by the score under it; otherwise ten
    bins, labelled at their edges, as many edges as fit without overlapping."""
    integer = top > 0 and top <= 12 and float(top).is_integer() and all(float(v).is_integer() for v in values)
    if integer:
        label = [f"{k:g}" for k in range(int(top) + 1)]
        counts = [sum(1 for v in values if v == k) for k in range(int(top) + 1)]
    else:
        n = 10
        width = (top or 1.0) / n
        edges = [(i * width, (i + 1) * width) for i in range(n)]
        label = [f"{lo:.3g}–{hi:.3g}" for lo, hi in edges]
        counts = [sum(1 for v in values if lo <= v < hi or (i == n - 1 and v >= hi)) for i, (lo, hi) in
                  enumerate(edges)]
    words = "; ".join(f"{lab} points: {c}" for lab, c in zip(label, counts, strict=True))
    alt = f"Histogram of {title} ({len(values)} students, out of {top:g}): {words}."
    w, h, pad = 300, 120, 18
    bar = (w - 2 * pad) / max(1, len(counts))
    tallest = max(counts, default=0) or 1
    parts = [f'<svg class="hist" viewBox="0 0 {w} {h + 2 * pad}" width="{w}" height="{h + 2 * pad}" role="img" '
             f'aria-label="{e(alt)}"><title>{e(alt)}</title>']
    for i, c in enumerate(counts):
        bh = (h - pad) * c / tallest
        x = pad + i * bar
        parts.append(f'<rect x="{x + 1:.1f}" y="{h - bh:.1f}" width="{bar - 2:.1f}" height="{bh:.1f}"/>')
        if c:
            parts.append(f'<text class="count" x="{x + bar / 2:.1f}" y="{h - bh - 3:.1f}" '
                         f'text-anchor="middle">{c}</text>')
    if integer:  # under each bar
        ticks = [(pad + i * bar + bar / 2, lab) for i, lab in enumerate(label)][::_stride(label, bar)]
    else:  # at the bin edges
        at = [f"{i * (top or 1.0) / len(counts):.3g}" for i in range(len(counts) + 1)]
        ticks = [(pad + i * bar, lab) for i, lab in enumerate(at)][::_stride(at, bar)]
    parts += [f'<text class="tick" x="{x:.1f}" y="{h + 13}" text-anchor="middle">{e(lab)}</text>' for x, lab in ticks]
    parts.append(f'<line x1="{pad}" y1="{h}" x2="{w - pad}" y2="{h}" stroke="#555"/></svg>')
    return "".join(parts)


def _cell_html(cell: object, label: str) -> str:
    attr = f' data-label="{e(label)}"'
    if isinstance(cell, Link):
        return f'<td{attr}><a href="{e(cell.href)}">{e(cell.text)}</a></td>'
    if isinstance(cell, tuple):
        text, key = cell
        if isinstance(text, Link):
            return f'<td{attr} data-v="{e(str(key))}"><a href="{e(text.href)}">{e(text.text)}</a></td>'
        return f'<td{attr} data-v="{e(str(key))}">{text_cell(str(text))}</td>'
    return f"<td{attr}>{text_cell(str(cell))}</td>"


def plain(cell: object) -> object:
    """What a table cell holds as data (its CSV value)."""
    if isinstance(cell, Link):
        return cell.text
    if isinstance(cell, tuple):
        return plain(cell[0])
    return cell


def table(headers: list[str], rows: list[list[object]], cls: str = "sortable") -> str:
    """A table whose cells are escaped text; a (text, sort key) tuple sorts by the key, a
    :class:`Link` is a link. Each cell carries its column's name (shown beside it on a phone)."""
    out = [f'<div class="scroll"><table class="{cls}"><thead><tr>']
    out += [f'<th scope="col">{e(h)}</th>' for h in headers]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(_cell_html(c, h) for c, h in zip(row, headers, strict=False)) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


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
