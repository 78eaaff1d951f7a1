"""The instructor's side of the trust boundary: what a submission's text, file names and file
types can do to the grader and the instructor's tools, what leaks back through feedback, and
what happens when runs overlap or die.

One hostile class is graded once (through ``python -m autograder.grade``, as ``make grade``
does); while it runs, a second run and a ``--finish`` must refuse. The other tests exercise one
defence each (the result channel, the CSV writer, the sandbox's view, hidden inputs).
"""

from __future__ import annotations

import base64
import csv
import html.parser
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
from grading_support import ROOT, SOLUTIONS
from hypothesis import example, given, settings
from hypothesis import strategies as st

from autograder import sandbox
from selfattn.checks.calling import Case

HOSTILE_MARKDOWN = (
    "My answer. <img src=x onerror=\"window.__pwned=1;fetch('/api/contents/pwned-xss.txt',{method:'PUT'})\">"
    " and <script>window.__pwned=2</script>\n\n"
    '<svg/onload=window.__pwned=3> <a href="javascript:window.__pwned=4">see</a> '
    "[click](javascript:window.__pwned=5) [tab](java&#9;script:window.__pwned=6) <!-- hidden -->\n\n"
    "$E[q \\cdot k] = 0$ and $a<b$ and a < b\n\n![pasted](attachment:image.png)\n\n"
    "![pixel](https://tracker.example/p.png) ![ref pixel][t] ![t]\n\n[t]: //tracker.example/q.png\n"
)
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8cfc0f01f0005000201a7d2a0b80000000049454e44ae426082")).decode()

# a dependency cell that looks for the grader's cases in its own process while it runs
FIND_CASES = textwrap.dedent("""
    import sys
    _found = []
    _frame = sys._getframe()
    while _frame is not None:
        for _name, _value in list(_frame.f_locals.items()):
            if _name in ("cases", "arrays", "request") or type(_value).__name__ == "Case":
                _found.append(_name)
        _frame = _frame.f_back
    if _found:
        raise ValueError("FOU" + "ND=" + " ".join(_found))

    def softmax(S, axis=-1):
        S = np.asarray(S, dtype=float)
        e = np.exp(S - S.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
""")
ECHO_ATTENTION = "def attention(Q, K, V, mask=None):\n    raise ValueError('LEAK ' + repr(np.asarray(Q).tolist()))\n"
WRONG_FLOPS = "def attention_flops(T, d):\n    return T * d\n"
# each run of attention_flops leaves a record where a later run of another function could read it
LEAVE_RECORDS = textwrap.dedent("""
    import os
    for _folder in sorted({"/tmp", "/dev/shm", os.environ.get("HOME", "/tmp")}):
        try:
            with open(os.path.join(_folder, "left-by-runs"), "a") as _fh:
                _fh.write("RUN ")
        except OSError:
            pass

    def attention_flops(T, d):
        return T * d
""")
READ_RECORDS = textwrap.dedent("""
    import os
    _seen = []
    for _folder in sorted({"/tmp", "/dev/shm", os.environ.get("HOME", "/tmp")}):
        try:
            _seen.append(open(os.path.join(_folder, "left-by-runs")).read())
        except OSError:
            pass
    if _seen:
        raise ValueError("SAW " + max(_seen, key=len))
""")
MARKUP_IN_EXCEPTION = 'raise ValueError(\'<img src=x onerror="window.__pwned=7">\')\n'

REFUSED = ["Doe, Jane", '=HYPERLINK("evil";"x")', "<img src=x onerror=alert(1)>", "jane_doe[12345]",
           "trailing ", "new\nline"]


def notebook(name: str, replace: dict[str, str] | None = None, attachments: dict | None = None) -> str:
    """The solutions' notebook ``name`` as a student hands it in, some answer cells replaced."""
    nb = json.loads((SOLUTIONS / f"{name}.ipynb").read_text())
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if replace and gid in replace:
            cell["source"] = replace[gid]
            if attachments and cell["cell_type"] == "markdown":
                cell["attachments"] = attachments
    return json.dumps(nb)


def put(work: Path, student: str, name: str, text: str) -> Path:
    folder = work / "submitted" / student / "attention"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ipynb"
    path.write_text(text)
    return path


def run_grader(work: Path, *args: str, wait: bool = True):
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))
    cmd = [sys.executable, "-m", "autograder.grade", *args]
    if wait:
        return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    work = tmp_path_factory.mktemp("hostile")
    for name in ("03-softmax-attention", "08-cost"):
        put(work, "alice", name, notebook(name))
    put(work, "x-markup", "04-scaling", notebook("04-scaling", {"variance-derivation": HOSTILE_MARKDOWN},
                                                  {"image.png": {"image/png": PNG}}))
    put(work, "x-markup", "03-softmax-attention", notebook("03-softmax-attention", {"softmax": MARKUP_IN_EXCEPTION}))
    put(work, "s-leak", "03-softmax-attention", notebook("03-softmax-attention",
                                                         {"softmax": FIND_CASES, "attention": ECHO_ATTENTION}))
    put(work, "s-leak", "08-cost", notebook("08-cost", {"attention_flops": WRONG_FLOPS}))
    put(work, "s-carry", "08-cost", notebook("08-cost", {"attention_flops": LEAVE_RECORDS,
                                                         "crossover_length": READ_RECORDS}))
    for name in REFUSED:
        put(work, name, "08-cost", notebook("08-cost"))
    latin1 = os.fsencode(work / "submitted") + b"/caf\xe9"  # a folder name that is not UTF-8
    os.makedirs(latin1 + b"/attention")
    (Path(os.fsdecode(latin1)) / "attention" / "08-cost.ipynb").write_text(notebook("08-cost"))
    # symbolic links: to the solutions, to another student's folder, to the hidden checks
    (work / "submitted" / "s-link-nb" / "attention").mkdir(parents=True)
    (work / "submitted" / "s-link-nb" / "attention" / "08-cost.ipynb").symlink_to(SOLUTIONS / "08-cost.ipynb")
    (work / "submitted" / "s-link-dir").mkdir()
    (work / "submitted" / "s-link-dir" / "attention").symlink_to(work / "submitted" / "alice" / "attention")
    (work / "submitted" / "s-link-student").symlink_to(work / "submitted" / "alice")
    put(work, "s-stamp", "08-cost", notebook("08-cost"))
    stamp = work / "submitted" / "s-stamp" / "attention" / "timestamp.txt"
    stamp.symlink_to(ROOT / "autograder" / "hidden_checks.py")
    put(work, "s-badstamp", "08-cost", notebook("08-cost"))
    (work / "submitted" / "s-badstamp" / "attention" / "timestamp.txt").write_text("the day before the deadline")
    # a named pipe where a notebook should be: reading it would block the run forever
    put(work, "s-fifo", "08-cost", notebook("08-cost"))
    os.mkfifo(work / "submitted" / "s-fifo" / "attention" / "03-softmax-attention.ipynb")

    first = run_grader(work, "--workers", "2", "--cpu-seconds", "10", "--memory-mb", "1024", wait=False)
    started = work / ".grading" / "submitted"  # staging has begun: the run holds the lock
    deadline = time.monotonic() + 120
    while not started.exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    # the run is held where it is (its lock with it) while a second run and --finish try their luck:
    # however fast the run or slow the machine, they meet a run in progress
    os.kill(first.pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        second = run_grader(work)
        finish = run_grader(work, "--finish")
        refusal_seconds = time.monotonic() - t0
    finally:
        os.kill(first.pid, signal.SIGCONT)
    out, err = first.communicate(timeout=900)
    return work, (first.returncode, out, err), second, finish, refusal_seconds


def rows(work: Path) -> dict[str, dict[str, str]]:
    with open(work / "grades.csv", newline="") as fh:
        return {r["student_id"]: r for r in csv.DictReader(fh)}


def autograded(work: Path, student: str, name: str):
    return nbformat.read(work / "autograded" / student / "attention" / f"{name}.ipynb", as_version=4)


def verdict(work: Path, student: str, name: str) -> dict:
    """A verdict as stored, its notes read back as :class:`~autograder.notes.Note` (text and kind)."""
    from autograder.notes import notes_of

    v = json.loads((work / ".grading" / "verdicts" / student / "attention" / f"{name}.json").read_text())
    return v | {"notes": notes_of(v)}


class Markup(html.parser.HTMLParser):
    """Every element, event-handler attribute, script URL and outside resource in an HTML page."""

    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.handlers: list[str] = []
        self.script_urls: list[str] = []
        self.fetched: list[str] = []  # resources the browser loads from another host
        self.scripts: list[str] = []
        self._in_script = False
        self._attrs: list[tuple[str, str, str]] = []

    @property
    def image_sources(self) -> list[str]:
        return [v for t, n, v in self._attrs if t == "img" and n == "src"]

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._attrs.extend((tag, name.lower(), value or "") for name, value in attrs)
        self._in_script = tag == "script"
        for name, value in attrs:
            if name.lower().startswith("on"):
                self.handlers.append(f"{tag} {name}={value}")
            if name.lower() in ("href", "src", "action", "formaction") and value and re.sub(
                    r"[\s\x00-\x1f]", "", value).lower().startswith(("javascript:", "vbscript:")):
                self.script_urls.append(f"{tag} {name}={value}")
            if name.lower() in ("src", "srcset", "poster", "data", "background") or (tag == "link" and name == "href"):
                if value and re.match(r"\s*(?:[a-z][a-z0-9+.-]*:)?//", value, re.IGNORECASE):
                    self.fetched.append(f"{tag} {name}={value}")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def markup_of(page: str) -> Markup:
    parser = Markup()
    parser.feed(page)
    return parser


def assert_inert(page: str, where: str) -> None:
    m = markup_of(page)
    students = [h for h in m.handlers if "__pwned" in h or "alert" in h]  # the template has its own onclick
    assert not students, f"{where}: event handlers survived: {students}"
    assert not m.script_urls, f"{where}: script URLs survived: {m.script_urls}"
    assert not any("__pwned" in s for s in m.scripts), f"{where}: a student script survived"
    assert "svg" not in m.tags and "iframe" not in m.tags, f"{where}: student markup survived: {set(m.tags)}"
    planted = [f for f in m.fetched if "tracker.example" in f]  # the page's own assets are checked in Chromium
    assert not planted, f"{where}: the student's images load from outside: {planted}"


# ---------------------------------------------------------------------------------------------
# 1. stored XSS: written answers, grading notes, folder names


def formgrader_page(work: Path, student: str, name: str) -> str:
    """The submission page formgrader renders (its HTMLExporter and template) for one notebook."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": "attention", "notebook_id": name, "submission_id": "x", "index": 0, "total": 1,
                 "base_url": "", "student": student, "last_name": None, "first_name": None, "notebook_path": name}
    page, _ = HTMLExporter(config=config).from_filename(
        str(work / "autograded" / student / "attention" / f"{name}.ipynb"), resources=resources)
    return page


def test_written_answer_markup_is_shown_as_text(hostile):
    work = hostile[0]
    answer = next(c for c in autograded(work, "x-markup", "04-scaling").cells
                  if c.metadata.get("nbgrader", {}).get("grade_id") == "variance-derivation")
    assert not re.search(r"<[A-Za-z/!?]", answer.source), answer.source
    assert answer.source.count("](#blocked-link)") == 2, answer.source  # both script links point nowhere
    assert "onerror" in answer.source and "$E[q \\cdot k] = 0$" in answer.source  # the text itself is kept
    original = json.loads((work / "submitted" / "x-markup" / "attention" / "04-scaling.ipynb").read_text())
    assert any(c["source"] == HOSTILE_MARKDOWN for c in original["cells"]), "the original must stay as handed in"


def test_formgrader_and_feedback_pages_run_no_student_markup(hostile):
    work = hostile[0]
    for name in ("04-scaling", "03-softmax-attention"):
        assert_inert(formgrader_page(work, "x-markup", name), f"formgrader page of {name}")
        assert_inert((work / "feedback" / "x-markup" / "attention" / f"{name}.html").read_text(), f"feedback {name}")


MARKDOWN_TAGS = {"p", "a", "em", "strong", "code", "pre", "img", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol",
                 "li", "blockquote", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "del", "span", "div",
                 "dl", "dt", "dd"}  # a definition list ("term\n: definition") is Markdown's own too
FRAGMENTS = ["<", ">", "img", "script", "svg", "/", " ", "onerror=", "=", '"', "'", "`", "\\", "&", "#", "9;",
             "x6A;", "colon;", "javascript", "java", "script", ":", "(", ")", "[", "]", "!", "-", "\n", "\t", "$",
             "data", "text/html,", "<!--", "?", "a", "href", "iframe", "style", "x", "https://t.example/p.png",
             "//t.example", "attachment:", "image/png,", "[t]: ", "][", "![", "]("]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
@example("![x](https://t.example/p.png)")
@example("<\n:\t")  # found by hypothesis: a definition list
@example("![x][t] ![t]\n\n[t]: //t.example/p.png")
@example("![x](<https://t.example/p.png>) ![a](attachment:image.png)")
@example("!![]()")  # found by hypothesis: dropping the one `!` left another image
@example("!!![x](https://t.example/p.png)")
def test_neutralised_text_renders_no_markup(text):
    """Whatever the text, nbconvert's Markdown renderer makes nothing but Markdown's own elements of
    it after neutralising: no raw tag, no event handler, no script URL, and no image but one pasted
    into the answer (any other is fetched from wherever it points when the page shows)."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    from autograder.intake.untrusted import neutralise_markup

    class AnyAttachment(dict):
        """Every attachment name resolves, to the pixel a pasted image would be."""

        def __contains__(self, name):
            return True

        def __missing__(self, name):
            return {"image/png": PNG}

    # nbconvert's Markdown renderer as formgrader and the feedback pages use it, attachments inlined
    renderer = IPythonRenderer(escape=False, attachments=AnyAttachment())
    m = markup_of(MarkdownWithMath(renderer=renderer).render(neutralise_markup(text)))
    assert set(m.tags) <= MARKDOWN_TAGS, (text, m.tags)
    assert not m.handlers and not m.script_urls and not m.scripts, (text, m.handlers, m.script_urls)
    assert all(src.startswith(("attachment:", "data:image/")) for src in m.image_sources), (text, m.image_sources)


def test_grading_note_quoting_an_exception_is_text(hostile):
    work = hostile[0]
    notes = autograded(work, "x-markup", "03-softmax-attention").cells[0]
    assert notes.metadata.get("grading_notes"), "the notes cell comes first"
    assert "raised ValueError" in notes.source
    assert not re.search(r"<[A-Za-z/!?]", notes.source), notes.source


def test_pasted_image_is_kept_and_reaches_the_feedback(hostile):
    work = hostile[0]
    answer = next(c for c in autograded(work, "x-markup", "04-scaling").cells
                  if c.metadata.get("nbgrader", {}).get("grade_id") == "variance-derivation")
    assert answer.get("attachments", {}).get("image.png", {}).get("image/png") == PNG
    page = (work / "feedback" / "x-markup" / "attention" / "04-scaling.html").read_text()
    assert "data:image/png;base64," in page


def test_folder_names_are_refused_by_name_and_the_run_fails(hostile):
    work, (rc, out, err), *_ = hostile
    assert rc != 0, "refused folders must make the run fail"
    for name in [*REFUSED, "s-link-dir/attention", "s-link-student", os.fsdecode(b"caf\xe9")]:
        shown = ascii(f"submitted/{name}")
        assert shown in err and shown in out, f"{shown} not named:\n{err}"
    assert "symbolic link" in err and "letters, digits" in err
    graded = set(rows(work))
    assert graded == {"alice", "x-markup", "s-leak", "s-carry", "s-link-nb", "s-stamp", "s-badstamp", "s-fifo"}


# ---------------------------------------------------------------------------------------------
# 2. hidden inputs


def test_hidden_runs_return_no_student_text(hostile):
    work = hostile[0]
    v = verdict(work, "s-leak", "03-softmax-attention")
    text = (work / ".grading" / "verdicts" / "s-leak" / "attention" / "03-softmax-attention.json").read_text()
    assert "FOUND=" not in text, "a cell found the grader's cases while it ran"
    hidden = v["cells"]["attention-hidden"]["lines"]
    assert hidden and not any("LEAK" in ln for ln in hidden), hidden
    assert any("LEAK" in ln for ln in v["cells"]["attention-public"]["lines"])  # public inputs may be echoed
    page = (work / "feedback" / "s-leak" / "attention" / "03-softmax-attention.html").read_text()
    assert "FOUND=" not in page


def test_hidden_inputs_are_not_described_at_all(hostile):
    """A public check names its input; a hidden check says only what was wrong, in fixed words
    (no value, shape or type of the input)."""
    work = hostile[0]
    v = verdict(work, "s-leak", "08-cost")
    public, hidden = v["cells"]["attention_flops-public"]["lines"], v["cells"]["attention_flops-hidden"]["lines"]
    assert any(re.search(r"\(\d+, \d+\)", ln) for ln in public), public
    assert hidden and all(ln.endswith(": wrong values") for ln in hidden if ln.startswith("✗")), hidden
    assert not any(re.search(r"\d|an int|on input", ln.partition(": hidden check: ")[2].partition(": ")[2])
                   for ln in hidden), hidden


def test_nothing_a_hidden_run_leaves_behind_reaches_a_public_run(hostile):
    """attention_flops is graded (public run, then hidden run) before crossover_length's public
    run; a record left by the hidden run must not be there for crossover_length to raise."""
    work = hostile[0]
    v = verdict(work, "s-carry", "08-cost")
    saw = [str(m) for m in v["checks"].values() if m and "SAW" in str(m)] + \
        [str(n) for n in v["notes"] if "SAW" in str(n)]
    assert all(s.count("RUN") <= 1 for s in saw), saw  # at most the record of attention_flops' public run


def test_regrade_of_changed_code_meets_new_hidden_inputs(tmp_path):
    """Unchanged code is not run again (it keeps its stored results, so it meets no second draw);
    changed code meets new hidden inputs."""
    script = textwrap.dedent("""
        import json, sys
        from autograder import sandbox
        from autograder.verdicts import decide as verdicts
        from autograder.workspace import from_environment
        from selfattn.checks.calling import Outcome
        seen = []
        def record(code, function, cases, limits=None, hidden=False, session=None, oracle=None):
            if hidden:
                seen.append([[a if isinstance(a, int) else None for a in c.args] for c in cases])
            return sandbox.RunResult([Outcome(error="ValueError")] * len(cases), None, [], 0.0)
        verdicts.sandbox.run = record
        ws = from_environment()
        for answer in sys.argv[1:]:
            path = ws.work / "submitted" / "s" / "attention" / "08-cost.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            nb = json.load(open(verdicts.release_path("attention", "08-cost", ws.course)))
            for cell in nb["cells"]:
                if cell["metadata"].get("nbgrader", {}).get("grade_id") == "attention_flops":
                    cell["source"] = answer
            json.dump(nb, open(path, "w"))
            verdicts.grade_one("s", "attention", "08-cost", ws=ws)
        print(json.dumps(seen))
    """)
    answers = ["def attention_flops(T, d):\n    return 4 * T * T * d\n",
               "def attention_flops(T, d):\n    return 4 * T * T * d\n",
               "def attention_flops(T, d):\n    return 4 * d * T * T\n"]
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script, *answers], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    flops = [s for s in seen if s and len(s[0]) == 2]  # attention_flops(T, d): one list per grading
    assert len(flops) == 2, f"unchanged code must not run again: {seen}"
    assert flops[1] != flops[0], "changed code met the hidden inputs it may have seen before"


def test_every_public_run_of_a_notebook_comes_before_any_hidden_run(tmp_path):
    """What a hidden run could leave in what runs on one machine share (the clock, inode counters)
    must find no public run of the same notebook after it, whose detailed feedback the student reads."""
    script = textwrap.dedent("""
        import inspect
        import json
        from autograder import sandbox
        from autograder.verdicts import decide as verdicts
        from autograder.workspace import from_environment
        from autograder.paths import SOLUTIONS
        from selfattn.checks.calling import Outcome
        order = []
        def record(code, function, cases, limits=None, hidden=False, session=None, oracle=None):
            order.append([function, hidden])
            return sandbox.RunResult([Outcome(error="ValueError")] * len(cases), None, [], 0.0)
        verdicts.sandbox.run = record
        # fair blame's re-runs come last and report in the fixed vocabulary of hidden checks: left out here,
        # by a stand-in that takes regrade's own parameters and keeps the results as they are
        real = inspect.signature(verdicts.blame.regrade)
        def unchanged(*args, **kwargs):
            return real.bind(*args, **kwargs).arguments["results"], None
        verdicts.blame.regrade = unchanged
        path = from_environment().submission("s", "attention") / "03-softmax-attention.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(open(SOLUTIONS / "attention" / "03-softmax-attention.ipynb").read())
        v = verdicts.grade_one("s", "attention", "03-softmax-attention", ws=from_environment())
        assert not v.failed, [str(n) for n in v.notes]  # graded to the end, not stopped by a fault of the grader
        print(json.dumps(order))
    """)
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    order = [tuple(x) for x in json.loads(out.stdout)]
    first_hidden = next(i for i, (_, hidden) in enumerate(order) if hidden)
    assert {f for f, h in order if not h} == {f for f, h in order if h}, order  # every function ran both
    assert not any(hidden for _, hidden in order[:first_hidden]) and all(h for _, h in order[first_hidden:]), order


@pytest.fixture(params=["fresh", "warm"])
def session(request):
    """Each sandbox-level test runs in a newly started sandbox and in a pre-warmed one."""
    from autograder.sandbox import warm

    if request.param == "fresh":
        yield None
    else:
        with warm.Session() as s:
            yield s


def test_cells_run_before_any_case_exists(session):
    cells = [("softmax", FIND_CASES), ("f", "def f(x):\n    return softmax(x)\n")]
    for hidden in (False, True):
        r = sandbox.run(cells, "f", [Case((np.arange(3.0),))], sandbox.Limits(cpu_seconds=10), hidden=hidden,
                        session=session)
        assert r.outcomes is not None and r.outcomes[0].values is not None, r
        assert not any("FOUND=" in str(e) for e in r.cell_errors), r.cell_errors


def test_hidden_run_forging_the_channel_gets_types_only(session):
    """Even a result frame the student writes itself brings back no text in a hidden run."""
    forge = textwrap.dedent("""
        import io, json, os, struct
        def f(x):
            fd = int(os.environ["RESULT_FD"])
            head = json.dumps({"cell_errors": ["the cell of f raised SECRET 42",
                                               {"label": "f", "exception": "SECRET42", "text": "SECRET 42"},
                                               {"label": "SECRET42", "exception": "ValueError", "text": "x"}],
                               "outcomes": [{"error": "SECRET 42 no colon"}]}).encode()
            buf = io.BytesIO(); np.savez(buf)
            os.write(fd, b"R" + struct.pack(">Q", len(head)) + head + struct.pack(">Q", buf.tell()) + buf.getvalue())
            os._exit(0)
    """)
    r = sandbox.run([("f", forge)], "f", [Case((np.arange(3.0),))], sandbox.Limits(cpu_seconds=10), hidden=True,
                    session=session)
    assert "SECRET" not in repr(r), r


# ---------------------------------------------------------------------------------------------
# 3. CSV


def test_grades_csv_reads_back_by_header_and_every_field_is_quoted(hostile):
    work = hostile[0]
    from nbgrader.api import Gradebook

    table = rows(work)
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        for student, row in table.items():
            assert float(row["score"]) == pytest.approx(gb.find_submission("attention", student).score), student
        handed_in = ("03-softmax-attention", "08-cost")   # alice's two notebooks: the solutions
        full = sum(nb.max_code_score for nb in gb.find_submission("attention", "alice").notebooks
                   if nb.name in handed_in)
    assert full > 0 and float(table["alice"]["score"]) == full   # every autograded point of both
    for line in (work / "grades.csv").read_text().splitlines():
        assert line.startswith('"') and line.endswith('"'), line


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.one_of(st.text(), st.floats(allow_nan=False), st.integers()), min_size=3, max_size=3),
                max_size=5))
def test_csv_writer_round_trips_and_neutralises_formulas(tmp_path_factory, table):
    from autograder.outputs.csv_export import write_csv

    path = tmp_path_factory.mktemp("csv") / "out.csv"
    write_csv(path, ["a", "b", "c"], table)
    with open(path, newline="", encoding="utf-8") as fh:
        back = list(csv.DictReader(fh))
    assert len(back) == len(table)
    for row, original in zip(back, table, strict=True):
        for key, value in zip("abc", original, strict=True):
            cell = row[key]
            if isinstance(value, str) and value.startswith(("=", "+", "-", "@", "\t", "\r", "\n", "|", "%")) \
                    and not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", value):
                assert cell == "'" + value
            else:
                assert cell == str(value)


def test_killed_during_export_leaves_the_previous_csv_whole(hostile):
    work = hostile[0]
    before = (work / "grades.csv").read_bytes()
    script = ("import os, signal\nfrom autograder.outputs import atomic\n"
              "from autograder.nbgrader_ext import steps as nbgrader_steps\n"
              "atomic.os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)  # killed mid-write\n"
              "from autograder.workspace import from_environment\n"
              "nbgrader_steps.export(ws=from_environment())\n")
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, timeout=120)
    assert out.returncode == -9, out.stderr
    assert (work / "grades.csv").read_bytes() == before


# ---------------------------------------------------------------------------------------------
# 4. symbolic links, FIFOs, timestamps


def test_symlinked_notebook_is_not_read(hostile):
    work = hostile[0]
    v = verdict(work, "s-link-nb", "08-cost")
    assert any("symbolic link" in n.text and n.kind.value == "unreadable notebook" for n in v["notes"]), v["notes"]
    assert not any(c["passed"] for c in v["cells"].values())


def test_symlinked_timestamp_is_not_followed(hostile):
    work = hostile[0]
    assert not (work / ".grading" / "submitted" / "s-stamp" / "attention" / "timestamp.txt").exists()
    assert any("timestamp.txt was not used" in n.text for n in verdict(work, "s-stamp", "08-cost")["notes"])
    secret = (ROOT / "autograder" / "hidden_checks.py").read_text()[:200]
    for path in work.rglob("*"):
        if path.is_file() and not path.is_symlink() and "submitted" not in path.relative_to(work).parts[:1]:
            assert secret not in path.read_text(errors="ignore"), path


def test_unreadable_timestamp_is_named(hostile):
    work = hostile[0]
    assert any("not a date" in n.text for n in verdict(work, "s-badstamp", "08-cost")["notes"])
    assert float(rows(work)["s-badstamp"]["score"]) == 6.0


def test_a_fifo_as_notebook_does_not_block(hostile):
    work = hostile[0]
    v = verdict(work, "s-fifo", "03-softmax-attention")
    assert any("not a regular file" in n.text and n.kind.value == "unreadable notebook" for n in v["notes"]), v["notes"]
    assert float(rows(work)["s-fifo"]["score"]) == 6.0  # its other notebook is graded as usual


# ---------------------------------------------------------------------------------------------
# 5. overlapping runs, failed steps, the result channel, the sandbox's view


def test_second_run_and_finish_refuse_while_a_run_holds_the_lock(hostile):
    _, _, second, finish, seconds = hostile
    for other in (second, finish):
        assert other.returncode != 0 and "another grading run" in other.stderr, other.stderr
    assert seconds < 60, "a refused run must not wait"


def test_a_failed_nbgrader_step_names_the_student(hostile):
    work = hostile[0]
    script = ("from autograder.nbgrader_ext.steps import run_step\n"
              "from autograder.workspace import from_environment\n"
              "print(run_step('generate_feedback', 'attention', ['ghost', 'alice'], 1, print,\n"
              "               ws=from_environment()))\n")
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work))
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "['ghost']"
    assert "failed for ghost" in out.stdout
    from autograder.errors import GradingError
    from autograder.pipeline import grading_run

    with pytest.raises(GradingError, match="ghost"):
        grading_run._end([], ["ghost (attention, feedback)"], print)


def _bomb_frame(declared_items: int) -> bytes:
    """A result frame whose one array declares ``declared_items`` float64s, deflated from zeros."""
    import io
    import struct
    import zipfile

    import numpy as np

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (declared_items,)})
    body = io.BytesIO()
    with zipfile.ZipFile(body, "w", zipfile.ZIP_DEFLATED) as z, z.open("r0_0.npy", "w", force_zip64=True) as m:
        m.write(header.getvalue())
        chunk = bytes(1 << 24)
        for _ in range(declared_items * 8 // len(chunk)):
            m.write(chunk)
    head = json.dumps({"cell_errors": [], "outcomes": [{"values": ["r0_0"]}]}).encode()
    return struct.pack(">Q", len(head)) + head + struct.pack(">Q", body.tell()) + body.getvalue()


def test_decompression_bomb_on_the_result_channel_is_refused_before_inflating():
    frame = _bomb_frame(64 << 20)  # 512 MiB declared, about 0.5 MB sent
    assert len(frame) < 2 << 20
    script = ("import resource, sys\nfrom autograder import sandbox\n"
              "data = sys.stdin.buffer.read()\nbefore = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
              "try:\n    sandbox.parse_frame(data)\n    print('accepted')\n"
              "except ValueError as e:\n    print('refused', e)\n"
              "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, input=frame, capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    verdict_line, grown_mib = out.stdout.decode().split("\n")[:2]
    assert verdict_line.startswith("refused"), verdict_line
    assert int(grown_mib) < 64, f"the grader grew by {grown_mib} MiB"


def test_result_archive_may_hold_only_announced_float_arrays():
    import io
    import struct

    def frame(header: dict, **arrays) -> bytes:
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        head = json.dumps(header).encode()
        return struct.pack(">Q", len(head)) + head + struct.pack(">Q", buf.tell()) + buf.getvalue()

    good = {"outcomes": [{"values": ["r0_0"]}]}
    assert sandbox.parse_frame(frame(good, r0_0=np.ones(3)))[1]["r0_0"].tolist() == [1.0, 1.0, 1.0]
    for bad in (frame(good, r0_0=np.ones(3), extra=np.ones(2)), frame(good, r0_0=np.ones(3, dtype=np.int64)),
                frame(good, r0_0=np.array(["text"]))):
        with pytest.raises(ValueError):
            sandbox.parse_frame(bad)


def test_sandbox_sees_numpy_and_nothing_else_of_the_environment(session):
    probe = textwrap.dedent("""
        import importlib, sys
        sys.path += ["/usr/lib/python3/dist-packages", "/usr/local/lib/python3.11/dist-packages"]
        def f(x):
            found = 0
            for name in ("nbgrader", "sqlalchemy", "jupyter_server", "nbformat", "selfattn", "autograder",
                         "traitlets", "yaml", "requests", "apt"):
                try:
                    importlib.import_module(name)
                    found += 1
                except Exception:
                    pass
            return np.array([found, len(np.arange(3))])
    """)
    r = sandbox.run([("f", probe)], "f", [Case((0,))], sandbox.Limits(cpu_seconds=20), session=session)
    assert r.outcomes is not None, r.failure
    assert r.outcomes[0].value.tolist() == [0.0, 3.0], "modules other than NumPy are importable in the sandbox"


# ---------------------------------------------------------------------------------------------
# 1b. formgrader itself, in headless Chromium


def test_formgrader_runs_no_script_from_a_hostile_submission(hostile, tmp_path):
    """Open the hostile submission where the instructor would (formgrader, same origin as the
    Jupyter server and its kernels API), wait, and check that nothing of the student's ran: no
    marker set, no request to the contents or kernels API, no file written."""

    from browser_support import CHROMIUM_ARGS, chromium_path, driver, formgrader_server
    from nbgrader.api import Gradebook

    work = hostile[0]
    with Gradebook(f"sqlite:///{work / 'gradebook.db'}", "self-attention") as gb:
        ids = {name: gb.find_submission_notebook(name, "attention", "x-markup").id
               for name in ("04-scaling", "03-softmax-attention")}
    token = "security-test-token"
    env = dict(os.environ, AUTOGRADER_WORKDIR=str(work), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               JUPYTER_DATA_DIR=str(tmp_path / "data"))
    with formgrader_server(ROOT, env, tmp_path / "jupyter-server.log", token) as base:
        api_calls, outside = [], []
        with driver() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            page = browser.new_page()

            def route(r):
                url = r.request.url
                if not url.startswith(base) and not url.startswith("data:"):
                    outside.append(url)
                    return r.abort()
                if "/api/contents" in url or "/api/kernels" in url or "/api/sessions" in url:
                    api_calls.append(f"{r.request.method} {url}")
                    return r.abort()
                return r.continue_()

            page.route("**/*", route)
            dialogs = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(f"{base}/formgrader?token={token}")  # logs in (sets the cookie)
            for name, nb_id in ids.items():
                response = page.goto(f"{base}/formgrader/submissions/{nb_id}/")
                assert response is not None and response.status == 200, (name, response and response.status)
                page.wait_for_load_state("load")
                page.wait_for_timeout(1500)
                assert "onerror" in page.content(), f"{name}: the answer's text should be visible as text"
                assert page.evaluate("typeof window.__pwned") == "undefined", f"{name}: a student script ran"
            page.goto(f"{base}/formgrader/manage_students")
            page.wait_for_timeout(1000)
            assert page.evaluate("typeof window.__pwned") == "undefined"
            browser.close()
        assert not dialogs and not api_calls, (dialogs, api_calls)
        assert not outside, outside  # formgrader's pages load nothing from outside (MathJax included)
        assert not (ROOT / "pwned-xss.txt").exists()


def test_every_hidden_check_draws_its_inputs_from_the_seed():
    """No hidden check has fixed inputs a student could learn once and answer from a table: over ten
    seeds, each check's inputs take more than one value."""
    import autograder.hidden_checks  # noqa: F401 - registers them
    from selfattn.checks.record import REGISTRY

    def inputs(cases) -> str:
        return repr([[np.asarray(a, dtype=float).tolist() for a in (*c.args, *c.kwargs.values())] for c in cases])

    # an answer that is a value (shape_answers) takes no input: there is none to learn
    hidden = {cid: check for cid, check in REGISTRY.items() if "/hidden/" in cid and not check.exercise.takes_no_input}
    assert len(hidden) >= 15
    fixed = [cid for cid, check in hidden.items()
             if len({inputs(check.cases(np.random.default_rng(seed))) for seed in range(10)}) == 1]
    assert fixed == [], f"hidden checks whose inputs never change: {fixed}"
