"""What a submission hands the grader besides code is read as untrusted (autograder/intake/untrusted.py):
a file only if it is a regular file within its size, never through a link or from a FIFO; a notebook's
bytes whatever they hold, each repair named in a note; written text with nothing a renderer would turn
into markup, script or a fetch; pasted images only as PNG, JPEG or GIF under a plain name. Each test
holds one of these at its edge, both ways (docs/mutation.md)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autograder.errors import RefusedFile as Refused
from autograder.intake import stored_outputs, untrusted
from autograder.intake.stored_outputs import without_outputs
from autograder.intake.untrusted import NotANotebook

# ---- files and folders --------------------------------------------------------------------------


def test_an_entry_is_named_for_what_it_is_never_following_a_link(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("x")
    (tmp_path / "to-d").symlink_to(tmp_path / "d")
    (tmp_path / "to-f").symlink_to(tmp_path / "f")
    assert untrusted.entry_problem(tmp_path / "d", "dir") is None
    assert untrusted.entry_problem(tmp_path / "f", "file") is None
    assert untrusted.entry_problem(tmp_path / "f", "dir") == "it is not a directory"
    assert untrusted.entry_problem(tmp_path / "d", "file") == "it is not a regular file"
    assert untrusted.entry_problem(tmp_path / "to-d", "dir") == "it is a symbolic link"
    assert untrusted.entry_problem(tmp_path / "to-f", "file") == "it is a symbolic link"
    assert untrusted.entry_problem(tmp_path / "none", "file") == "it does not exist"


def test_a_regular_file_is_read_up_to_its_limit_exactly(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert untrusted.read_regular(path, 100) == b"x" * 100
    with pytest.raises(Refused, match="larger than 99 bytes"):
        untrusted.read_regular(path, 99)
    with pytest.raises(Refused, match="larger than 1 MiB"):
        untrusted.read_regular(path, 1 << 20) if path.write_bytes(b"x" * ((1 << 20) + 1)) else None


def test_a_link_a_fifo_or_a_folder_is_refused_unread(tmp_path):
    (tmp_path / "f").write_bytes(b"secret")
    (tmp_path / "link").symlink_to(tmp_path / "f")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "d").mkdir()
    with pytest.raises(Refused, match=r"^it is a symbolic link$"):
        untrusted.read_regular(tmp_path / "link", 100)
    for name in ("fifo", "d"):  # (a FIFO with no writer would block a plain open)
        with pytest.raises(Refused, match="not a regular file"):
            untrusted.read_regular(tmp_path / name, 100)
    with pytest.raises(Refused, match=r"^it cannot be opened \(No such file or directory\)$"):
        untrusted.read_regular(tmp_path / "none", 100)


def test_a_file_that_grows_past_its_limit_while_read_is_refused():
    status = Path("/proc/self/status")  # a regular file whose size says 0 and which reads as more
    assert status.stat().st_size == 0
    with pytest.raises(Refused, match=r"^it grew while being read$"):
        untrusted.read_regular(status, 10)
    assert len(untrusted.read_regular(status, 1 << 20)) > 10


def test_reading_leaves_no_file_open(tmp_path):
    (tmp_path / "f").write_bytes(b"x" * 10)
    before = len(os.listdir("/proc/self/fd"))
    for limit in (10, 5):
        try:
            untrusted.read_regular(tmp_path / "f", limit)
        except Refused:
            pass
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_notebook_file_is_read_without_its_outputs_and_within_its_caps(tmp_path, monkeypatch):
    path = tmp_path / "nb.ipynb"
    path.write_bytes(_nb([{**CELL, "outputs": [{"text": "x" * 5000}]}]))
    assert untrusted.read_notebook(path) == ([{**CELL, "outputs": []}], [])
    kept = len(stored_outputs.without_outputs(path.read_bytes())[0])
    monkeypatch.setattr(untrusted, "MAX_KEPT_BYTES", kept)
    assert untrusted.read_notebook(path)[0] == [{**CELL, "outputs": []}]
    monkeypatch.setattr(untrusted, "MAX_KEPT_BYTES", kept - 1)
    with pytest.raises(Refused, match="without its stored outputs it is still larger than"):
        untrusted.read_notebook(path)
    monkeypatch.setattr(stored_outputs, "MAX_TOKENS", 5)
    with pytest.raises(Refused, match="strings and brackets"):
        untrusted.read_notebook(path)


# ---- a notebook's bytes -------------------------------------------------------------------------

def _nb(cells: object, **more: object) -> bytes:
    return json.dumps({"cells": cells, "nbformat": 4, **more}).encode()


CELL = {"cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": [{"text": "big"}]}


def test_a_clean_notebook_reads_with_no_note_and_its_outputs_dropped():
    cells, notes = untrusted.parse_notebook(_nb([CELL]))
    assert cells == [{**CELL, "outputs": []}] and notes == []


def test_a_byte_order_mark_is_ignored_and_bytes_that_are_not_utf8_are_counted():
    assert untrusted.parse_notebook(b"\xef\xbb\xbf" + _nb([CELL])) == ([{**CELL, "outputs": []}], [])
    raw = _nb([{**CELL, "source": "a\udcffb"}]).replace(b"\\udcff", b"\xff\xfe\xef\xbf\xbd")
    cells, notes = untrusted.parse_notebook(raw)
    assert cells[0]["source"] == "a\ufffd\ufffd\ufffdb"  # (the third was a real U+FFFD: not counted)
    assert len(notes) == 1 and notes[0].startswith("The notebook held 2 byte sequence(s) that are not UTF-8")


def test_a_key_given_twice_keeps_its_last_value_with_a_note():
    raw = b'{"cells": [{"cell_type": "code", "source": "a", "source": "b"}], "nbformat": 4}'
    cells, notes = untrusted.parse_notebook(raw)
    assert cells[0]["source"] == "b" and len(notes) == 1
    assert notes[0].startswith("The notebook held 1 JSON object(s) with a key given twice")


def test_numbers_too_large_and_constants_are_read_as_json_cannot_say_them():
    metadata = b'{"big": ' + b"9" * 101 + b', "ok": ' + b"9" * 100 + b', "n": NaN, "i": -Infinity}'
    raw = b'{"cells": [{"cell_type": "code", "metadata": ' + metadata + b'}], "nbformat": 4}'
    cells, notes = untrusted.parse_notebook(raw)
    assert cells[0]["metadata"] == {"big": float("9" * 101), "ok": int("9" * 100), "n": None, "i": None}
    assert isinstance(cells[0]["metadata"]["big"], float) and isinstance(cells[0]["metadata"]["ok"], int)
    assert notes == []


def test_control_characters_inside_strings_are_read():
    raw = _nb([{**CELL, "source": "a"}]).replace(b'"a"', b'"a\x01\tb"')
    assert untrusted.parse_notebook(raw)[0][0]["source"] == "a\x01\tb"


def test_only_a_cells_outputs_are_dropped():
    cells, _ = untrusted.parse_notebook(_nb([{"cell_type": "code", "source": "", "metadata": {"outputs": [1]}},
                                              {"source": "", "outputs": [2]}]))
    assert cells == [{"cell_type": "code", "source": "", "metadata": {"outputs": [1]}},
                     {"source": "", "outputs": [2]}]


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\u0000", "\\uDBFF"])
def test_lone_surrogates_and_nul_become_replacement_characters_with_a_note(escape):
    raw = _nb([{**CELL, "source": "a"}]).replace(b'"a"', f'"a{escape}b"'.encode())
    cells, notes = untrusted.parse_notebook(raw)
    assert cells[0]["source"] == "a\ufffdb" and len(notes) == 1 and "held 1 character(s)" in notes[0]
    keyed = _nb([{**CELL}]).replace(b'"metadata"', f'"meta{escape}"'.encode())
    cells, _ = untrusted.parse_notebook(keyed)
    assert "meta\ufffd" in cells[0]


def test_a_surrogate_pair_is_kept_whole():
    raw = _nb([{**CELL, "source": "a"}]).replace(b'"a"', b'"a\\ud83d\\ude00b"')
    cells, notes = untrusted.parse_notebook(raw)
    assert cells[0]["source"] == "a\U0001F600b" and notes == []


def test_what_is_nested_past_the_depth_is_dropped_with_a_note_and_what_is_not_is_kept():
    depth = untrusted.MAX_JSON_DEPTH

    def nested(levels: int, value: object = 0) -> object:
        for _ in range(levels):
            value = [value]
        return value

    fits = {**CELL, "metadata": {"x": nested(depth - 4)}}  # inside the notebook, cells, the cell, its metadata
    cells, notes = untrusted.parse_notebook(_nb([fits]))
    assert cells[0]["metadata"] == fits["metadata"] and notes == []
    deep = {**CELL, "metadata": {"x": nested(depth - 3)}}
    cells, notes = untrusted.parse_notebook(_nb([deep]))
    assert notes == [f"The notebook held 1 value(s) nested more than {depth} levels deep; they were ignored."]
    assert cells[0]["metadata"] == {"x": nested(depth - 4, None)}  # the list at depth 64 (the 64th level) dropped
    wide = {**CELL, "metadata": {"x": nested(depth - 5, {"k": [0], "\x00": 1})}}  # a dict at depth 63
    cells, notes = untrusted.parse_notebook(_nb([wide]))
    assert cells[0]["metadata"] == {"x": nested(depth - 5, {"k": None, "\ufffd": 1})}, notes


@pytest.mark.parametrize(("raw", "why"), [
    (b"[1, 2]", "it is JSON but a list, not a notebook"),
    (b'{"worksheets": []}', "nbformat 3"),
    (b'{"cells": {}}', "it has no list of cells"),
    (b"{", "it is not JSON"),
    (b"[" * 200_000, "nested too deeply"),
])
def test_what_is_not_a_notebook_says_why_in_one_line(raw, why):
    with pytest.raises(NotANotebook, match=re.escape(why)) as caught:
        untrusted.parse_notebook(raw)
    assert "\n" not in str(caught.value)


def test_another_nbformat_and_entries_that_are_not_cells_are_noted():
    cells, notes = untrusted.parse_notebook(json.dumps({"cells": [CELL, 3, "x"], "nbformat": 5}).encode())
    assert len(cells) == 1
    assert notes == ["The notebook declares nbformat 5, not 4; its cells were read as nbformat 4.",
                     "The notebook's list of cells held 2 entries that are not cells; they were ignored."]


# ---- text a renderer sees -----------------------------------------------------------------------

@given(st.text(alphabet="<>/!?aZ x:\\&#;()[]\n", max_size=40))
def test_no_markup_can_start_in_neutralised_text(text):
    assert not re.search(r"<[A-Za-z/!?]", untrusted.neutralise_markup(text))


@pytest.mark.parametrize("dest", ["javascript:alert(1)", "JaVaScRiPt:x", "java&#115;cript:x", "java\\script:x",
                                  "&#x6a;avascript:x", "vbscript:x", "data:text/html,x", "livescript:x",
                                  "<javascript:x>"])
def test_a_link_that_would_run_script_points_nowhere(dest):
    for text in (f"[a]({dest})", f"[a]: {dest}"):
        out = untrusted.neutralise_markup(text)
        assert "#blocked-link" in out and "script:" not in out.lower().replace("&#115;", "s"), out


@pytest.mark.parametrize("dest", ["https://example.org/", "#part", "data:image/png;base64,AAAA", "a.html"])
def test_a_harmless_link_is_kept(dest):
    assert untrusted.neutralise_markup(f"[a]({dest})") == f"[a]({dest})"


def test_only_a_pasted_or_inlined_image_stays_an_image():
    assert untrusted.link_outside_images("![x](attachment:a.png)") == "![x](attachment:a.png)"
    assert untrusted.link_outside_images("![x](data:image/png;base64,AA)") == "![x](data:image/png;base64,AA)"
    assert untrusted.link_outside_images("![x](https://t.example/p.png)") == "[x](https://t.example/p.png)"
    assert untrusted.link_outside_images("!![x](https://t.example/p.png)") == "[x](https://t.example/p.png)"


def test_an_image_of_a_missing_or_oddly_named_attachment_becomes_a_link():
    text = "![a](attachment:a.png) ![b](attachment:b.png) ![c](attachment:c%20d.png)"
    assert untrusted.link_missing_attachments(text, {"a.png", "c%20d.png"}) == (
        "![a](attachment:a.png) [b](attachment:b.png) [c](attachment:c%20d.png)")


def test_a_quoted_text_is_one_line_of_at_most_its_limit():
    assert untrusted.one_line("a\n b\t c", 5) == "a b c"
    assert untrusted.one_line("abcdef", 5) == "abcd…"
    assert untrusted.one_line("abcde", 5) == "abcde"
    assert untrusted.note_markdown("<b>x</b>\n[a](javascript:x)") == "- < b>x< /b> [a](#blocked-link)"


def test_storable_replaces_only_what_cannot_be_written():
    assert untrusted.storable("a\x00b\ud800c\U0001F600") == "a\ufffdb\ufffdc\U0001F600"


# ---- pasted images ------------------------------------------------------------------------------

def test_only_png_jpeg_and_gif_under_a_plain_name_are_kept():
    kept, dropped = untrusted.safe_attachments({
        "a.png": {"image/png": "AAAA", "image/svg+xml": "PHN2Zz4="},
        "b.gif": {"image/gif": "AA\nAA"},
        "c.svg": {"image/svg+xml": "PHN2Zz4="},
        "d.png": {"image/png": "not base64!"},
        "e.png": {"image/png": "AAAA!"},
        "../e.png": {"image/png": "AAAA"},
        "f.png": "AAAA",
    })
    assert kept == {"a.png": {"image/png": "AAAA"}, "b.gif": {"image/gif": "AA\nAA"}}
    assert len(dropped) == 5 and sum("unusable name" in d for d in dropped) == 2, dropped
    assert untrusted.safe_attachments(None) == ({}, [])
    assert untrusted.safe_attachments([1]) == ({}, ["attachments that were not a mapping were dropped"])


# ---- stored outputs, cut from the bytes ---------------------------------------------------------

_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(alphabet='"\\[]{}:, o\n\u00e9', max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["outputs", "source", "x"]), inner,
                                                                max_size=3),
    max_leaves=8)
_CELL = st.fixed_dictionaries({"cell_type": st.sampled_from(["code", "markdown"]), "source": _VALUE},
                              optional={"outputs": _VALUE, "metadata": _VALUE})


@given(st.lists(_CELL, max_size=3), _VALUE, st.sampled_from([None, 1]))
def test_stored_outputs_are_cut_from_the_bytes_as_from_the_parsed_notebook(cells, metadata, indent):
    raw = json.dumps({"metadata": {"outputs": metadata}, "cells": cells, "outputs": [1]}, indent=indent).encode()
    kept, dropped = without_outputs(raw)
    want = {"metadata": {"outputs": metadata}, "outputs": [1],
            "cells": [{**c, "outputs": []} if isinstance(c.get("outputs"), list) else c for c in cells]}
    assert json.loads(kept) == want
    assert len(kept) == len(raw) - dropped and dropped >= 0


def test_bytes_the_scan_cannot_follow_are_kept_as_they_are():
    for raw in (b'{"cells": [{"outputs": [1, 2', b'{"cells": [{"outputs": ["never ends', b"\xff\xfe[[[", b""):
        assert without_outputs(raw) == (raw, 0)


def test_the_scan_stops_after_its_token_budget_exactly(monkeypatch):
    tokens = b'{"cells": [{"outputs": ["a", "b"]}]}'  # 8 brackets and 4 strings
    monkeypatch.setattr(stored_outputs, "MAX_TOKENS", 12)
    assert without_outputs(tokens) == (b'{"cells": [{"outputs": []}]}', 8)
    monkeypatch.setattr(stored_outputs, "MAX_TOKENS", 11)
    with pytest.raises(stored_outputs.TooIntricate, match="more than 11 strings"):
        without_outputs(tokens)


@pytest.mark.parametrize(("spaces", "cut"), [(245, True), (246, False)])
def test_the_outputs_key_is_looked_for_within_256_bytes_of_its_bracket(spaces, cut):
    raw = b'{"cells": [{"outputs":' + b" " * spaces + b'[1, 2]}]}'  # 246: the window starts at the key's quote
    kept, dropped = without_outputs(raw)
    assert (kept, dropped) == ((raw.replace(b"[1, 2]", b"[]"), 4) if cut else (raw, 0))
    assert stored_outputs.kept_size(raw) == len(kept)
