"""What a reader finds on the built site: the way to the exercises (the student bundle, published with
the site, and each chapter's notebook in it), sources for what the text cites, the glossary linked from
the text, and chapter 8's timing stated the same in every build.

Needs `make book` first (it builds the bundle and copies it into the site). Reads the built HTML.
"""

from __future__ import annotations

import html as htmllib
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import unquote, urldefrag

import pytest
from browser_support import SITE

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html") if "_static" not in p.parts)
CHAPTERS = [p for p in PAGES if re.match(r"book/\d\d-", p)]
READING = ["book/intro.html", *CHAPTERS]
BUNDLE = "selfattn-course.zip"


def _html(rel: str) -> str:
    path = SITE / rel
    assert path.exists(), f"{rel} is not built: run `make book` first"
    return path.read_text(encoding="utf-8")


def _text(fragment: str) -> str:
    """Visible text of an HTML fragment, whitespace collapsed."""
    fragment = re.sub(r"<script.*?</script>|<style.*?</style>", " ", fragment, flags=re.S)
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def _article(rel: str) -> str:
    doc = _html(rel)
    found = re.search(r"<article.*?</article>", doc, flags=re.S)
    return found.group(0) if found else doc


def _target(rel: str, href: str) -> Path:
    return ((SITE / rel).parent / unquote(urldefrag(href)[0])).resolve()


def test_site_was_built():
    assert CHAPTERS, f"no chapter pages in {SITE}: run `make book` first"


# -- the way to the exercises ------------------------------------------------------------------------------------

def test_front_page_offers_the_student_bundle():
    rel = "book/intro.html"
    links = [h for h in re.findall(r'href="([^"]+)"', _article(rel)) if h.endswith(BUNDLE)]
    assert links, "the front page does not link the student bundle"
    zipped = _target(rel, links[0])
    assert zipped.is_file(), f"the front page links {links[0]}, which the site does not hold"
    names = zipfile.ZipFile(zipped).namelist()
    assert "selfattn-course/install.py" in names and "selfattn-course/START_HERE.md" in names, names[:10]


@pytest.mark.parametrize("rel", CHAPTERS)
def test_exercises_say_how_to_start_from_the_bundle(rel):
    part = _article(rel).split('<section id="exercises">', 1)[-1]
    text = _text(part)
    notebook = re.search(r"in the notebook (\S+\.ipynb)", text)
    assert notebook, f"{rel}: the exercises name no notebook: {text[:200]}"
    inside = f"notebooks/attention/{notebook.group(1)}"
    zips = [h for h in re.findall(r'href="([^"]+)"', part) if h.endswith(BUNDLE)]
    assert zips, f"{rel}: the exercises do not link the student bundle"
    zipped = _target(rel, zips[0])
    assert zipped.is_file(), f"{rel}: links {zips[0]}, which the site does not hold"
    assert f"selfattn-course/{inside}" in zipfile.ZipFile(zipped).namelist(), f"{rel}: {inside} is not in the bundle"
    assert "python3 install.py" in text, f"{rel}: the exercises do not say to install once (python3 install.py)"
    assert f"jupyter lab {inside}" in text, f"{rel}: the exercises do not say to open {inside}"
    assert "course repository" not in text and "make setup" not in text, f"{rel}: sends students to the repository"


# -- what the text cites, and what it links -------------------------------------------------------------------

def _in_sentences(article: str) -> list[tuple[str, str]]:
    """(href, text) of every link inside a paragraph of running text (not headings, tables, captions)."""
    out = []
    for para in re.findall(r"<p>(.*?)</p>", article, flags=re.S):
        out += [(h, _text(a)) for h, a in re.findall(r'<a\b[^>]*href="([^"]*)"[^>]*>(.*?)</a>', para, flags=re.S)]
    return out


def _title(rel: str) -> str:
    found = re.search(r"<h1>(.*?)</h1>", _html(rel), flags=re.S)
    if not found:
        return ""
    title = re.sub(r'<span class="section-number">[^<]*</span>', "", found.group(1))  # a link names no number
    return _text(title).rstrip("#").strip()


@pytest.mark.parametrize("rel", READING)
def test_links_in_sentences_are_a_few_words(rel):
    """A link mid-sentence is a few words (a term, "Fig. 3.3", a paper), or the title of the chapter it opens;
    never a whole figure caption."""
    captions = {_text(c) for c in re.findall(r"<figcaption>(.*?)</figcaption>", "".join(map(_article, READING)),
                                             flags=re.S)}
    long = []
    for href, text in _in_sentences(_article(rel)):
        chapter = href.split("#")[0]
        titled = chapter.endswith(".html") and "#" not in href and text == _title(str(Path(rel).parent / chapter))
        if text in captions or (len(text.split()) > 6 and not titled):
            long.append(text)
    assert long == [], f"{rel}: link text too long for running text: {long}"


def test_every_citation_links_an_entry_of_the_bibliography():
    refs = _html("reference/references.html")
    anchors = set(re.findall(r'id="([^"]+)"', refs))
    entries = re.findall(r'<div class="citation" id="([^"]+)"', refs) or re.findall(r'<dt class="label" id="([^"]+)"',
                                                                                         refs)
    bib = re.findall(r"^@\w+\{([^,]+),", (ROOT / "reference" / "references.bib").read_text(), flags=re.M)
    assert len(entries) == len(bib), f"the references page lists {len(entries)} of the {len(bib)} entries in " \
                                     f"references.bib: every entry must be cited in the text"
    cited = 0
    for rel in READING:
        for href in re.findall(r'href="([^"]*references\.html#[^"]+)"', _article(rel)):
            cited += 1
            assert urldefrag(href)[1] in anchors, f"{rel}: citation {href} has no entry on the references page"
    assert cited >= len(bib), f"{cited} citations in the text for {len(bib)} references"


def test_papers_the_text_names_are_cited():
    page = _article("book/06-position.html")
    sentence = next(p for p in re.findall(r"<p>(.*?)</p>", page, flags=re.S) if "rotary position" in p)
    assert "references.html#" in sentence, f"chapter 6 names rotary position embeddings uncited: {_text(sentence)}"
    assert "RoFormer" in _text(_html("reference/references.html"))


def test_glossary_terms_are_linked_from_the_text():
    glossary = _html("reference/glossary.html")
    terms = dict(re.findall(r'<dt id="(term-[^"]+)">(.*?)<a', glossary, flags=re.S))
    assert len(terms) >= 15, f"the glossary holds {len(terms)} terms"
    linked = set()
    for rel in READING:
        linked |= set(re.findall(r'href="[^"]*glossary\.html#(term-[^"]+)"', _article(rel)))
    missing = sorted(_text(terms[t]) for t in set(terms) - linked)
    assert missing == [], f"glossary terms no chapter links to: {missing}"


def test_problem_19_is_stated_and_told_apart_from_the_lectures():
    """Chapter 6's box on Problem 19's shift is titled as the book's own exercise and states it (the matrix,
    what to show); the text says the lecture's Problem 19 is about circulant matrices and gives the fact
    joining the two: a circulant matrix is a polynomial in the shift, so it commutes with it."""
    article = _article("book/06-position.html")
    box = r'<div class="[^"]*admonition[^"]*">\s*<p class="admonition-title">([^<]*Problem 19[^<]*)</p>(.*?)</div>'
    boxes = re.findall(box, article, flags=re.S)
    assert boxes, "chapter 6 cites Problem 19 but never states it"
    title, body = boxes[0]
    assert "book" in _text(title), f"the box does not say it is the book's own exercise: {title!r}"
    said = _text(body)
    for needed in ("cyclic shift matrix", "permutation matrix", "Show", "Attention"):
        assert needed in said, f"Problem 19's statement lacks {needed!r}: {said}"
    text = _text(article).replace("\u2019", "'")
    for needed in ("lecture's Problem 19 is about circulant matrices", "polynomial in the shift", "C P == P C: True",
                   "C swap == swap C: False"):
        assert needed in text, f"chapter 6 does not say {needed!r}"


def test_sentences_claim_no_more_than_the_book_shows():
    """Sentences a lecturer found saying more than their numbers, or contradicting the notation, stay fixed:
    attention is the only place tokens exchange information (said where it is introduced); teacher forcing is
    conditioning on the true prefix, the parallelism is the causal mask's; chapter 5 does not say a saturated
    head can never move (its own figures and chapter 10's show some do); chapter 10 does not send the reader
    to chapter 5 for a cross-entropy chapter 5 never defines; chapter 1's rows of X are x_i transposed."""
    def said(rel: str) -> str:
        return _text(_article(rel)).replace("\u2019", "'")

    assert "only place in a transformer where tokens exchange information" in said("book/02-queries-keys-values.html")
    glossary = said("reference/glossary.html")
    entry = glossary[glossary.index("teacher forcing"):][:400]
    assert "true prefix" in entry and "causal mask" in entry and "not what makes training parallel" in entry, entry
    for rel in ("book/07-masking.html", "book/10-training.html"):
        assert "true prefix" in said(rel) and "the causal mask" in said(rel), rel
    saturation = said("book/05-saturation.html")
    for overclaim in ("no gradient can move it", "born that way"):
        assert overclaim not in saturation, f"chapter 5 still says {overclaim!r}"
    training = _article("book/10-training.html")
    assert not re.search(r"cross-entropy of\s*<a[^>]*05-saturation", training), \
        "chapter 10 cites chapter 5 for a cross-entropy chapter 5 does not define"
    assert r"\mathbf{x}_i^\top = \mathbf{E}_{t_i}" in _article("book/01-text-to-vectors.html"), \
        "chapter 1 does not say row i of X is x_i transposed, as the notation page does"


def test_the_bridges_the_anchor_courses_use_are_shown_and_checked():
    """Equal scores as the causal running average and the bag of words (chapter 7); recurrence, convolution
    and attention side by side by arithmetic, sequential steps and longest path, counted (chapter 8);
    dropout on the weights (chapter 10); each as displayed on the built page."""
    masking = _text(_article("book/07-masking.html"))
    assert "causal, equal scores == running average: True" in masking
    assert "no mask, equal scores == mean of all values in every row: True" in masking
    assert "bag of words" in masking
    cost = _article("book/08-cost.html")
    table = re.search(r"<table.*?FLOPs of one layer.*?</table>", cost, flags=re.S)
    assert table, "chapter 8 has no table comparing recurrence, convolution and attention"
    rows = {(cells := [_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)])[0]: cells[1:]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(0), flags=re.S) if "<td" in row}
    assert rows["self-attention"][1:] == ["1", "1"], rows
    assert rows["recurrent"][1:] == ["512", "511"], rows
    assert rows["convolution, k = 9"][1:] == ["1", "64"], rows
    training = _text(_article("book/10-training.html"))
    assert "Dropout on the weights" in training and "the expected output is the output without dropout" in training
    assert "not a pure bigram" in training, "chapter 10 does not say what its no-head baseline is"


def test_positions_are_shown_with_the_proof_and_a_widget():
    """Chapter 6 writes position into the input: the sinusoidal encoding, the theorem that a fixed offset
    is a rotation in a proof block, the executed check, the broken equivariance, and a second widget."""
    article = _article("book/06-position.html")
    text = _text(article)
    assert "A fixed offset is a rotation" in text and "proof" in article.lower()
    assert re.search(r"z_\(i\+5\) = G z_i at all 40 positions, largest gap \de-1[2-9]", text), text[-3000:]
    moved = re.search(r"with positions, largest entry of \|out2 - P out1\| = (\d+\.\d+)", text)
    assert moved and float(moved.group(1)) > 0.1, "the encodings do not visibly break the equivariance"
    assert article.count("application/vnd.jupyter.widget-view+json") >= 2, "chapter 6 lacks its second widget"


def test_the_pytorch_mapping_tells_the_two_boolean_mask_senses_apart():
    """Chapter 7 maps the book's functions to PyTorch's: the table's boolean-mask row gives each function's
    sense (scaled_dot_product_attention: True may attend; MultiheadAttention: True may not), the scale and
    the layouts, and the executed cell turns both senses into the book's additive causal mask."""
    article = _article("book/07-masking.html")
    table = re.search(r"<table.*?scaled_dot_product_attention.*?</table>", article, flags=re.S)
    assert table, "chapter 7 has no table mapping the book's functions to PyTorch's"
    rows = {(cells := [_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)])[0]: cells[1:]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(0), flags=re.S) if "<td" in row}
    _, sdpa, mha = rows["a boolean mask"]
    assert "True = may attend" in sdpa and "True = may not attend" in mha and "key_padding_mask" in mha, rows
    assert "batch_first=True" in rows["shapes"][2] and "scale=" in rows["the scale"][1], rows
    assert "both are sa.causal_mask(4): True True" in _text(article)


def test_padding_mask_counts_keys_from_one():
    text = _text(_article("book/07-masking.html"))
    rule = re.search(r"on every key (.{0,40}?) the sequence.s length", text)
    assert rule, "chapter 7 does not say which keys the padding mask removes"
    assert ">" in rule.group(1) and "≥" not in rule.group(1) and "\\ge" not in rule.group(1), rule.group(0)


# -- chapter 8's timing -----------------------------------------------------------------------------------------

VERDICT = (
    "import os; os.environ.update(OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')\n"
    "from selfattn.measure import attention_scaling\n"
    "print(attention_scaling(sizes=(512, 768, 1024, 1536, 2048, 3072), d=64, repeats=9, seed=0).verdict())\n"
)


def test_timing_text_is_the_same_in_every_build():
    """What chapter 8 states about its timing, computed twice in fresh processes (two builds), is one text,
    and it is the text on the page."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    said = [subprocess.run([sys.executable, "-c", VERDICT], capture_output=True, text=True, env=env, check=True,
                           cwd=ROOT).stdout.strip() for _ in range(2)]
    assert said[0] == said[1], f"two runs state different things: {said}"
    text = _text(_article("book/08-cost.html"))
    assert f"The fitted exponent is {said[0]}" in text, f"chapter 8 does not state {said[0]!r}"
    assert not re.search(r"\d\.\d\d\d", said[0]), f"the text quotes a number that moves: {said[0]}"
