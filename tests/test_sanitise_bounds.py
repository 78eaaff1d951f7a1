"""The sanitiser's filters hold at their bounds, both ways (autograder/outputs/sanitise.py): a MathML
length, colour or size factor is kept exactly when it is within its bound, the report's links pass the
same link filter as the feedback pages', and the text around a formula is kept as it was. Each test
here kills mutants that the allow-list tests of tests/test_sanitise.py let live (docs/mutation.md)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from autograder.outputs import sanitise

#: em per unit, as the page's browser reads them (16 px and 12 pt to the em, 18 mu)
_EM = {"em": 1.0, "ex": 0.5, "px": 1 / 16, "pt": 1 / 12, "mu": 1 / 18, "%": 1 / 100, "": 1.0}


def _width(fragment: str) -> str | None:
    found = re.search(r'<mspace[^>]*\bwidth="([^"]*)"', fragment)
    return found.group(1) if found else None


@given(st.integers(0, 40 * 18), st.sampled_from(sorted(_EM)), st.booleans())
def test_a_math_length_is_kept_exactly_up_to_the_bound_in_every_unit(number, unit, negative):
    value = f"{'-' if negative and number else ''}{number}{unit}"
    out = sanitise.feedback_fragment(f'<p><math><mspace width="{value}"></mspace></math></p>')
    within = number * _EM[unit] <= sanitise.MAX_MATH_LENGTH_EM
    assert _width(out) == (value if within else None), (value, out)


def test_the_length_keywords_are_kept():
    for word in ("0", "infinity", "thin", "medium", "thick"):
        out = sanitise.feedback_fragment(f'<math><mspace width="{word}"></mspace></math>')
        assert _width(out) == word, (word, out)


def test_a_colour_is_kept_as_a_name_or_hex_and_nothing_else():
    for colour, kept in [("#ff0000", True), ("#abc", True), ("red", True), ("rgb(1,2,3)", False),
                         ("red;background:url(x)", False), ("#ff0000 url(x)", False)]:
        out = sanitise.feedback_fragment(f'<math><mi mathcolor="{colour}">x</mi></math>')
        assert ("mathcolor=" in out) is kept, (colour, out)


def test_a_plain_attribute_of_markdown_is_kept():
    out = sanitise.feedback_fragment('<ol start="3"><li><a href="https://example.org/" title="t">a</a></li></ol>'
                                     '<img src="data:image/png;base64,AAAA" alt="a picture">')
    assert 'start="3"' in out and 'title="t"' in out and 'alt="a picture"' in out, out
    assert 'src="data:image/png;base64,AAAA"' in out, out  # (an attachment's inlined picture)


_HOSTILE_HREFS = ["//evil.example/x", "\\\\evil.example\\x", "/\\evil.example", " //evil.example",
                  "java\tscript:alert(1)", "javascript:alert(1)", "data:text/html,x", "vbscript:x", "file:///etc"]
_SAFE_HREFS = ["../feedback/a/b.html", "#glance", "https://example.org/", "mailto:a@example.org", "a/b.html"]


@given(st.sampled_from(_HOSTILE_HREFS + _SAFE_HREFS))
def test_the_class_report_keeps_a_link_exactly_when_a_feedback_page_would(href):
    out = sanitise.report_fragment(f'<section><a href="{href}">x</a><table><tr><td data-label="{href}">1</td>'
                                   '</tr></table></section>')
    assert ("href=" in out) is (href in _SAFE_HREFS), (href, out)
    assert "data-label=" in out, out  # (the link filter reads links only)


def test_a_relative_size_is_read_in_its_unit_and_kept_up_to_the_bound():
    for size, kept in [("150%", True), ("2ex", True), ("2.5em", True), ("2.5", True), ("250%", True),
                       ("2.51", False), ("0", False), ("0em", False), ("-1em", False), ("20px", False)]:
        out = sanitise.feedback_fragment(f'<math><mstyle mathsize="{size}"><mi>x</mi></mstyle></math>')
        assert ("mathsize=" in out) is kept, (size, out)


def test_nested_factors_may_reach_the_bound_exactly():
    out = sanitise.feedback_fragment('<math mathsize="1.25"><mstyle mathsize="2"><mi>x</mi></mstyle></math>')
    assert 'mathsize="1.25"' in out and 'mathsize="2"' in out, out


_TEXT = st.text(st.characters(blacklist_characters="<>&", blacklist_categories=("Cs", "Cc")), max_size=12)


@given(_TEXT, _TEXT)
def test_the_text_around_a_formula_is_kept_as_it_was(before, after):
    html = f"{before}<math><mrow><mi>x</mi><mo>+</mo></mrow></math>{after}"
    assert sanitise.bounded_math(html) == html
