"""One meaning per symbol, as a reader meets the symbols: the built pages (their text, the math as the
MathJax source in the page, figure alt texts and the widgets' labels), the notebooks' text (released
and sources) and the check messages a student reads.

Every bold or Greek letter in a page's math must also have a row on the notation page.

The notation page (``reference/notation.md``) fixes one meaning per symbol. :data:`SYMBOLS` says, for the
symbols that have carried a second meaning (or a second letter), which meaning the page lists and which
uses it does not: each forbidden use is a pattern over the math (TeX source) or over the text. A page, a
notebook or a message that uses a symbol that way fails, naming the symbol, the other meaning and the
place.

Needs `make book` first for the pages (browser lane); the notebooks and messages are read from the
repository.
"""

from __future__ import annotations

import html as htmllib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from browser_support import SITE

ROOT = Path(__file__).resolve().parent.parent
NOTATION = "reference/notation.html"
#: What a reader reads: every page of the site except the notation page, which defines the symbols.
READING = sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html")
                 if "_static" not in p.parts and p.parent != SITE and p.relative_to(SITE).as_posix() != NOTATION)
#: The released notebooks and their sources (whose model answers and rubrics graders read).
NOTEBOOKS = sorted([*(ROOT / "notebooks").rglob("*.ipynb"), *(ROOT / "solutions").rglob("*.ipynb")])


@dataclass(frozen=True)
class Misuse:
    """A use of a symbol (or of another letter for its meaning) that the notation page does not list."""

    pattern: str   #: regular expression
    meaning: str   #: what the symbol means where the pattern matches
    math: bool     #: the pattern reads the math (TeX source), else the text around it


@dataclass(frozen=True)
class Symbol:
    """One row of the notation page: how the page writes the symbol, the words its row must hold, and
    the uses that would give it (or its meaning) a second letter."""

    tex: str
    means: str
    misuses: tuple[Misuse, ...]


_NOT_LETTER = r"(?<![\\A-Za-z])"
_END = r"(?![A-Za-z])"

#: The rules, symbol by symbol (a symbol the notation page lists, and the meanings it must not carry).
SYMBOLS: tuple[Symbol, ...] = (
    Symbol("T", "sequence length", (
        Misuse(_NOT_LETTER + "n" + _END, "a sequence length written n (the lecture's letter; the book's is T)", True),
        Misuse(r"\((?:[\w.]+,\s*)*n(?:,\s*[\w.]+)*,?\)", "a shape with n for the sequence length", False),
        Misuse(r"\b0\s*\.\.\s*n\s*-\s*1\b|\bthe n (?:pairs|tokens|inner products|rows)\b|\bn tokens\b|\bfirst n\b",
               "n for a number of tokens", False),
    )),
    Symbol(r"\mathbf{S}", r"\mathbf{Q}\mathbf{K}^\top/\sqrt{d_k}", (
        Misuse(r"\\mathbf\{S\}\s*=\s*\\mathbf\{Q\}\s*\\mathbf\{K\}\^\{?\\top\}?(?!\s*/)",
               "S for the unscaled Q Kᵀ", True),
        Misuse(r"\\mathbf\{S\}\s*/\s*\\sqrt", "S divided by √d_k (so S would be the unscaled Q Kᵀ)", True),
        Misuse(r"\\mathbf\{S\}\s*=\s*c\s*(?:\\[,;!]\s*)?\\mathbf\{Q\}",
               "S for c Q Kᵀ (the unscaled Q Kᵀ when c = 1)", True),
        Misuse(r"\bS\s*=\s*Q\s*Kᵀ(?!\s*/)", "S for the unscaled Q Kᵀ", False),
        Misuse(r"\bS\s*=\s*(?:\w+\s*\.\s*)*\w*(?:shift|permutation)", "S for the shift matrix", False),
        Misuse(r"Attention\s*\(\s*S\s+X|\bS\s*@\s*X\b", "S for the shift matrix", False),
    )),
    Symbol(r"\tau", "target map", (
        Misuse(r"temperature\s*(?:\\\(\s*)?(?:\\tau|τ)", "τ for a temperature", False),
        Misuse(r"\\tau\s*[<>]\s*1\b|/\s*\\tau\b", "τ for a temperature", True),
    )),
    Symbol(r"\theta", "temperature", ()),
    Symbol("m", "vocabulary", (
        Misuse(_NOT_LETTER + r"m\s*'|s_\{?j\}?\s*-\s*m" + _END + r"|\\max\s*\\big\(\s*m" + _END,
               "m for the running maximum of the scores", True),
        Misuse(r"seen so far\s*\\\(\s*m\s*\\\)", "m for the running maximum of the scores", False),
    )),
    Symbol("B", "batch", (
        Misuse(r"\\in\s*B" + _END, "B for a block of keys", True),
        Misuse(r"block\s*\\\(\s*B\s*\\\)", "B for a block of keys", False),
    )),
    Symbol(r"\mathbf{u}_t", r"row \(t\) of \(\mathbf{U}\)", (
        Misuse(r"\\mathbf\{u\}(?!\s*_)", "u (no subscript) for the unnormalised running output", True),
    )),
    Symbol("t", "token type", (
        Misuse(r"\b(?:at every |each )?position \\\(t\\\)|\btokens \\\(1\s*\.\.\s*t\\\)|\bpass \\\(t\\\)"
               r"|\bfirst \\\(t\\\) tokens", "t for a position (t is a token type; positions are i and j)", False),
        Misuse(r"\\mathbf\{[xqkvo]\}_\{?t" + _END, "t as the position of a token's vector", True),
    )),
    Symbol(r"\nabla_{\mathbf{O}}\mathcal{L}", "gradient of the loss", (
        Misuse(r"\\mathrm\{d\}\s*\\mathbf\{[A-Za-z]\}|" + _NOT_LETTER + r"d\s*\\mathbf\{[A-Z]\}",
               "d X for a gradient (d is the model width; the gradient is ∇_X 𝓛)", True),
    )),
    Symbol(r"\mathcal{L}", "a loss", (
        Misuse(r"\\partial\s*L" + _END + r"|\\nabla_\{?\\mathbf\{[A-Za-z]\}\}?\s*L" + _END,
               "L for a loss (L is a number of layers; the loss is 𝓛)", True),
        Misuse(r"\\ell" + _END, "ℓ, a fourth L-like glyph (the online normaliser is Ẑ)", True),
        Misuse(r"∂\s*L\b|∂\s*ℓ|ℓ", "L or ℓ for a loss, or an ℓ (the loss is 𝓛, the online normaliser Ẑ)", False),
    )),
    Symbol(r"\operatorname{Attention}(\mathbf{Q}, \mathbf{K}, \mathbf{V})", "scaled dot-product attention", ()),
    Symbol(r"\operatorname{Attention}(\mathbf{X})", "self-attention layer", (
        Misuse(r"\\operatorname\{Attention\}\s*\(\s*(?!\\mathbf\{(?:P\}\s*\\mathbf\{)?X\}\s*\))[^,()]*\)",
               "Attention of one argument other than the sequence X (or P X)", True),
    )),
    Symbol("j", "key", (
        Misuse(r"\\operatorname\{head\}_\{?j|\^\{\(j\)\}", "j for the index of a head", True),
        Misuse(r"q_j\s*k_j", "j for a coordinate of q and k", True),
        Misuse(r"\bhead j\b|\bhead \\\(j\\\)", "j for the index of a head", False),
    )),
)


# -- reading what a person sees -----------------------------------------------------------------------------------

def _text(fragment: str) -> str:
    """Visible text of an HTML fragment (image alt texts included), whitespace collapsed; math stays as the
    TeX source MathJax typesets, between \\( \\) or \\[ \\]."""
    fragment = re.sub(r"<script.*?</script>|<style.*?</style>", " ", fragment, flags=re.S)
    fragment = re.sub(r'<img\b[^>]*\balt="([^"]*)"[^>]*>', r" \1 ", fragment)
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def _widget_text(doc: str) -> str:
    """What the page's widgets show: their labels and options, and the text and alt texts of their frames."""
    said = []
    for state in re.findall(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', doc,
                            flags=re.S):
        for model in json.loads(state)["state"].values():
            fields = model["state"]
            said += [str(fields.get("description", "")), " ".join(map(str, fields.get("_options_labels", ())))]
            if isinstance(fields.get("value"), str):
                said.append(_text(fields["value"]))
    return " ".join(s for s in said if s)


@dataclass(frozen=True)
class Reading:
    where: str
    text: str          #: everything a reader reads, math as TeX source
    math: list[str]    #: the TeX source of every formula

    def misuses(self, symbol: Symbol) -> list[str]:
        found = []
        for misuse in symbol.misuses:
            for part in (self.math if misuse.math else [self.text]):
                for hit in re.finditer(misuse.pattern, part):
                    context = part[max(0, hit.start() - 50): hit.end() + 50]
                    found.append(f"{self.where}: {misuse.meaning}: ...{context}...")
        return found


def _page(rel: str) -> Reading:
    path = SITE / rel
    assert path.exists(), f"{rel} is not built: run `make book` first"
    doc = path.read_text(encoding="utf-8")
    found = re.search(r"<article.*?</article>", doc, flags=re.S)
    article = found.group(0) if found else doc
    text = f"{_text(article)} {_widget_text(doc)}"
    math = [htmllib.unescape(m) for m in re.findall(r'class="math notranslate nohighlight">(.*?)</(?:span|div)>',
                                                     article, flags=re.S)]
    return Reading(rel, text, math)


def _notebook(path: Path) -> Reading:
    """A notebook's markdown, and its code cells' comments, docstrings and strings (what it prints)."""
    text, math = [], []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            text.append(source)
            math += re.findall(r"\$\$(.+?)\$\$|\$(.+?)\$", source, flags=re.S)
        else:
            text += re.findall(r"#.*$", source, flags=re.M)
            text += ["".join(s) for s in re.findall(r'"""(.*?)"""|"([^"\n]*)"|\'([^\'\n]*)\'', source, flags=re.S)]
    return Reading(path.relative_to(ROOT).as_posix(), " ".join(text), ["".join(m) for m in math])


def _messages() -> Reading:
    """Every message a student's check or grade can show: named mistakes, diagnoses, check descriptions."""
    import autograder.hidden_checks  # noqa: F401  (attaches the hidden checks, whose descriptions notebooks list)
    from selfattn.exercise_checks import EXERCISES

    said = []
    for exercise in EXERCISES.values():
        said += [m.message for m in exercise.mistakes] + list(exercise.diagnoses.values())
        said += [c.description for c in exercise.checks]
    return Reading("selfattn.exercise_checks (messages)", " | ".join(said), [])


# -- the tests ---------------------------------------------------------------------------------------------------

def test_site_was_built():
    assert READING and (SITE / NOTATION).exists(), f"no built site in {SITE}: run `make book` first"


def test_the_notation_page_lists_every_symbol_once_with_its_meaning():
    page = _page(NOTATION)
    doc = (SITE / NOTATION).read_text(encoding="utf-8")
    rows = [[htmllib.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", doc, flags=re.S)]
    rows = [r for r in rows if r]
    firsts = [_text(r[0]) for r in rows]
    assert len(firsts) == len(set(firsts)), f"a symbol has two rows on the notation page: {firsts}"
    for symbol in SYMBOLS:
        mine = [r for r in rows if f"\\({symbol.tex}\\)".replace(" ", "") in _text(r[0]).replace(" ", "")]
        assert mine, f"the notation page has no row for {symbol.tex}"
        meaning = _text(mine[0][1])
        assert symbol.means in meaning, f"the notation page gives {symbol.tex} the meaning {meaning!r}, " \
                                        f"not {symbol.means!r}"
    assert re.search(r"lecture\S* \\\(n\\\) is (?:this|the same) \\\(T\\\)", page.text), \
        "the notation page does not say that the lecture's n is the book's T"


def _table_symbols() -> set[str]:
    """The symbols the notation page's table lists (its first column), as TeX: ``\\mathbf{S}``, ``\\tau``."""
    doc = (SITE / NOTATION).read_text(encoding="utf-8")
    firsts = re.findall(r"<tr[^>]*>\s*<td[^>]*>(.*?)</td>", doc, flags=re.S)
    return set(re.findall(_NAMED, htmllib.unescape(" ".join(firsts))))


#: A bold letter, a Greek letter or a function's name (``\\operatorname{...}``) of the math: the symbols that carry
#: a meaning of their own.
_NAMED = r"\\mathbf\{[A-Za-z]\}|\\operatorname\{[A-Za-z]+\}|\\nabla|" \
         r"\\(?:alpha|beta|gamma|delta|epsilon|zeta|eta|theta|iota|kappa|lambda|mu|nu|xi|pi|rho|" \
         r"sigma|tau|upsilon|phi|chi|psi|omega|ell|Gamma|Delta|Theta|Lambda|Xi|Pi|Sigma|Phi|Psi|Omega)(?![A-Za-z])"


@pytest.mark.parametrize("rel", READING)
def test_every_named_symbol_is_on_the_notation_page(rel):
    """A bold or Greek letter in a page's math has a row on the notation page (so it has a stated meaning)."""
    listed = _table_symbols()
    assert {r"\mathbf{S}", r"\tau", r"\theta", r"\operatorname{Attention}"} <= listed, \
        f"the notation page's table, read: {sorted(listed)}"
    used = {m for tex in _page(rel).math for m in re.findall(_NAMED, tex)}
    assert used - listed == set(), f"{rel} uses symbols the notation page does not list: {sorted(used - listed)}"


@pytest.mark.parametrize("rel", READING)
def test_pages_use_each_symbol_with_its_one_meaning(rel):
    page = _page(rel)
    found = [line for symbol in SYMBOLS for line in page.misuses(symbol)]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_notebooks_use_each_symbol_with_its_one_meaning(path):
    notebook = _notebook(path)
    found = [line for symbol in SYMBOLS for line in notebook.misuses(symbol)]
    assert found == [], "\n".join(found)


def test_check_messages_use_each_symbol_with_its_one_meaning():
    messages = _messages()
    assert "missing the 1/√d_k scaling of the scores" in messages.text, messages.text[:300]
    found = [line for symbol in SYMBOLS for line in messages.misuses(symbol)]
    assert found == [], "\n".join(found)


def test_the_rules_catch_what_they_name():
    """Each rule fires on the conflict it was written for (so a rule that matches nothing is no rule)."""
    samples = {
        "T": ("X has shape (n, d) for n tokens", [r"\mathbb{R}^{n \times d}"]),
        r"\mathbf{S}": ("S = sa.shift_matrix(6, 1)", [r"\mathbf{S} = \mathbf{Q}\mathbf{K}^\top"]),
        r"\tau": (r"a temperature \(\tau\) flattens", [r"\tau > 1"]),
        "m": (r"the largest score seen so far \(m\)", [r"m' = \max\big(m, s\big)"]),
        "B": (r"a new block \(B\) arrives", [r"j \in B"]),
        r"\mathbf{u}_t": ("", [r"\mathbf{u}/\ell"]),
        "j": ("head j", [r"\operatorname{head}_j", r"q_j k_j"]),
        "t": (r"at every position \(t\), an output that depends on tokens \(1..t\)", [r"\mathbf{x}_t"]),
        r"\nabla_{\mathbf{O}}\mathcal{L}": ("", [r"\mathrm{d}\mathbf{O} = \partial\mathcal{L}/\partial\mathbf{O}"]),
        r"\mathcal{L}": ("‖∂L/∂s‖ (median)", [r"\partial L/\partial \mathbf{S}", r"\ell' = \ell"]),
        r"\operatorname{Attention}(\mathbf{X})": ("", [r"\operatorname{Attention}(\mathbf{Q})"]),
    }
    for symbol in SYMBOLS:
        if not symbol.misuses:
            continue
        text, math = samples[symbol.tex]
        for is_math in {m.math for m in symbol.misuses}:
            part = Reading("sample", "" if is_math else text, math if is_math else []).misuses(symbol)
            assert part, f"no {'math' if is_math else 'text'} rule of {symbol.tex} fires on its own example"
    clean = Reading("sample", r"X has shape (T, d); the score matrix \(\mathbf{S}\) and the map \(\tau\)",
                    [r"\mathbf{S} = \mathbf{Q}\mathbf{K}^\top/\sqrt{d_k}", r"\mathbf{u}_{\tau(t_i)}",
                     r"\sum_{j=1}^T a_{ij}", r"\mathbf{E} \in \mathbb{R}^{m \times d}",
                     r"\nabla_{\mathbf{Q}}\mathcal{L} = c\,\big(\nabla_{c\mathbf{Q}\mathbf{K}^\top}\mathcal{L}\big)",
                     r"\operatorname{Attention}(\mathbf{P}\mathbf{X})",
                     r"\mathbf{P}\,\operatorname{Attention}(\mathbf{X})",
                     r"\operatorname{Attention}(\mathbf{Q}, \mathbf{K}, \mathbf{V})", r"\mathbf{u}_{\tau(t_i)}",
                     r"\frac{\partial \mathcal{L}}{\partial s_l}"])
    assert [f for s in SYMBOLS for f in clean.misuses(s)] == []
