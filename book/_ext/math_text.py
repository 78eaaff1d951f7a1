"""A TeX formula as a reader sees it, in one line of plain text: for the site's search snippets.

The search page shows a few lines of each hit's page, cut from a stored copy of its text
(``offline_site``); MathJax typesets the page's formulas in the browser, so that copy held their TeX
source (``\\(s_{ij} = \\frac{...}{\\sqrt{d_k}}\\)``). :func:`tex_as_text` turns a formula into the text it
shows: ``sᵢⱼ = ⟨𝐪ᵢ, 𝐤ⱼ⟩/√dₖ``. The formula is converted to MathML (latex2mathml, as the feedback pages
do) and the MathML read out: sub- and superscripts in Unicode where every character has one (else
``x_(...)``, ``x^(...)``), fractions as ``a/b``, roots as ``√``, accents as combining marks, the rows of
an aligned display separated by ``;``. A formula latex2mathml cannot read loses its commands, keeping
their arguments.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from latex2mathml.converter import convert

__all__ = ["tex_as_text"]

_NS = "{http://www.w3.org/1998/Math/MathML}"
_SUB = dict(zip("0123456789+-−=()aehijklmnoprstuvxβγρφχ",
                "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ", strict=True))
_SUP = dict(zip("0123456789+-−=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW⊤′βγδθφχ",
                "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵀ′ᵝᵞᵟᶿᵠᵡ", strict=True))
_ACCENTS = {"^": "\u0302", "ˆ": "\u0302", "¯": "\u0304", "‾": "\u0305", "~": "\u0303", "˜": "\u0303",
            "→": "\u20d7", "˙": "\u0307", "¨": "\u0308"}
# operators written with a space either side, as a typeset formula spaces them
_SPACED = set("=+−<>≈≤≥≠∈∉⊂⊆→←↦⇒⇔∼≡×∝")
_UNARY_MINUS = re.compile(r"(^|[(\[⟨]|[,;] |[=<>≈≤≥≠∈→×+] )− ")
_BARE_AMPERSAND = re.compile(r"&(?!#?\w+;)")
_COMMAND = re.compile(r"\\(?:[A-Za-z]+|.)")


def _script(text: str, table: dict[str, str], mark: str) -> str:
    """``text`` as a sub- or superscript: in Unicode if every character has one, else ``_x``/``_(xy)``."""
    text = text.replace(" ", "")
    if text and all(c in table for c in text):
        return "".join(table[c] for c in text)
    return f"{mark}{text}" if len(text) == 1 else f"{mark}({text})"


def _grouped(text: str) -> str:
    """``text`` in parentheses when it holds an operation (the numerator of ``(a + b)/c``; not ``√dₖ/2``)."""
    atomic = not any(c in text for c in " +−-=/<>,;·×") or (text[:1] in "([⟨" and text[-1:] in ")]⟩")
    return text if atomic else f"({text})"


def _read(el: ET.Element) -> str:
    tag = el.tag.removeprefix(_NS)
    kids = list(el)
    if tag in ("mi", "mn", "mtext", "ms"):
        text = (el.text or "").replace("\u00a0", " ")
        return "" if text == "&" else text
    if tag == "mo":
        text = (el.text or "").strip()
        if text in _SPACED:
            return f" {text} "
        return text + " " if text in (",", ";") else text
    if tag == "mspace":
        return "; " if el.get("linebreak") == "newline" else " "
    if tag in ("mphantom", "annotation", "annotation-xml"):
        return ""
    if tag == "mfrac" and len(kids) == 2:
        return f"{_grouped(_read(kids[0]).strip())}/{_grouped(_read(kids[1]).strip())}"
    if tag == "msqrt":
        return "√" + _grouped("".join(_read(k) for k in kids).strip())
    if tag == "mroot" and len(kids) == 2:
        return _script(_read(kids[1]), _SUP, "^") + "√" + _grouped(_read(kids[0]).strip())
    if tag in ("msub", "munder") and len(kids) == 2:
        return _read(kids[0]) + _script(_read(kids[1]).strip(), _SUB, "_")
    if tag == "msup" and len(kids) == 2:
        return _read(kids[0]) + _script(_read(kids[1]).strip(), _SUP, "^")
    if tag == "mover" and len(kids) == 2:
        base, over = _read(kids[0]), _read(kids[1]).strip()
        if over in _ACCENTS:
            return base + _ACCENTS[over]
        return base + _script(over, _SUP, "^")
    if tag in ("msubsup", "munderover") and len(kids) == 3:
        return _read(kids[0]) + _script(_read(kids[1]).strip(), _SUB, "_") + _script(_read(kids[2]).strip(), _SUP, "^")
    if tag == "mtable":
        return "; ".join(" ".join(_read(cell).strip() for cell in row) for row in kids)
    return "".join(_read(k) for k in kids)


def _stripped(tex: str) -> str:
    """``tex`` without its commands, braces and alignment marks (for a formula latex2mathml refuses)."""
    return " ".join(_COMMAND.sub(" ", tex).replace("{", "").replace("}", "").replace("&", " ").split())


def tex_as_text(tex: str) -> str:
    """The formula ``tex`` (without its delimiters) as one line of the text it shows.

    Parameters
    ----------
    tex : str
        A formula as written in the book, e.g. ``s_{ij} = \\frac{q_i^\\top k_j}{\\sqrt{d_k}}``.

    Returns
    -------
    str
        The formula's symbols, with no TeX command, grouping brace, ``&`` or ``$`` left: ``sᵢⱼ = qᵢᵀkⱼ/√dₖ``.
    """
    try:
        root = ET.fromstring(_BARE_AMPERSAND.sub("&amp;", convert(tex)))  # an alignment mark: <mi>&</mi>
        text = _read(root)
    except Exception:  # latex2mathml raises many kinds; a formula it cannot read keeps its symbols
        text = _stripped(tex)
    text = " ".join(text.split()).replace(" ,", ",").replace("( ", "(").replace(" )", ")").replace(", ;", ";")
    text = _UNARY_MINUS.sub(r"\1−", text)  # a sign, not a subtraction: "−∞", "= −1", "(−2, 1)"
    if "\\{" not in tex and "\\lbrace" not in tex:  # braces the formula shows (a set) stay; TeX's own go
        text = text.replace("{", "").replace("}", "")
    return text.replace("\\", "").replace("$", "").replace("&", "")
