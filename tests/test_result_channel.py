"""What the grader reads of a sandboxed run's results (autograder/sandbox/channel.py) is checked as
untrusted data: a result frame whose lengths, members, types or sizes are not what it says is refused
before anything is inflated, an outcome of no known kind is refused, a hidden run's outcome and cell
errors keep only fixed words and built-in exception names, and only an integer errno says the disk was
full. The frames are built here as the harness writes them (a length-prefixed JSON header, then a
length-prefixed ``.npz``), then bent."""

from __future__ import annotations

import errno
import io
import json
import struct
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.sandbox import channel
from selfattn.checks.calling import BAD_RETURN, NOT_ANSWERED, RAISED, TIME_LIMIT


def _npy(array: np.ndarray, version: tuple[int, int] | None = None) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def _zip(members: list[tuple[str, bytes]], deflate: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED) as z:
        for name, data in members:
            z.writestr(name, data)
    return buf.getvalue()


def _frame(header: object, blob: bytes, extra: bytes = b"") -> bytes:
    head = json.dumps(header).encode()
    return struct.pack(">Q", len(head)) + head + struct.pack(">Q", len(blob)) + blob + extra


def _result(*keys: str) -> dict:
    return {"outcomes": [{"values": list(keys)}]}


_ARRAYS = hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                     elements=st.floats(allow_nan=False))


@given(st.lists(_ARRAYS, min_size=1, max_size=3), st.booleans(), st.sampled_from([(1, 0), (2, 0)]))
def test_a_frame_as_the_harness_writes_it_is_read_whole(arrays, fortran, version):
    keys = [f"a{i}" for i in range(len(arrays))]
    members = [(f"{k}.npy", _npy(np.array(a, order="F" if fortran else "C"), version))
               for k, a in zip(keys, arrays, strict=True)]
    header, read = channel.parse_frame(_frame(_result(*keys), _zip(members)))
    assert header == _result(*keys)
    assert set(read) == set(keys)
    for k, a in zip(keys, arrays, strict=True):
        np.testing.assert_array_equal(read[k], a)
        assert read[k].shape == a.shape


def test_an_outcome_that_is_not_an_object_announces_nothing():
    header = {"outcomes": [5, "a0", ["a0"], {"values": ["a1"]}]}
    frame = _frame(header, _zip([("a1.npy", _npy(np.ones(2)))]))
    assert set(channel.parse_frame(frame)[1]) == {"a1"}
    with pytest.raises(ValueError, match="did not announce"):
        channel.parse_frame(_frame(header, _zip([("a0.npy", _npy(np.ones(2)))])))


def test_a_header_that_is_not_an_object_is_refused():
    with pytest.raises(ValueError):
        channel.parse_frame(_frame([1, 2], _zip([])))


@pytest.mark.parametrize("cut", [-1, 1])
def test_a_frame_whose_lengths_do_not_add_up_is_refused(cut):
    good = _frame(_result("a0"), _zip([("a0.npy", _npy(np.ones(3)))]))
    with pytest.raises(ValueError):
        channel.parse_frame(good[:cut] if cut < 0 else good + b"\0" * cut)


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("members", [
    [("a0.npy", b""), ("a1.npy", b"")],  # a1 is not announced
    [("a0.npy", b""), ("a0.npy", b"")],  # the same name twice
    [("../a0.npy", b"")],
])
def test_an_array_the_header_did_not_announce_is_refused(members):
    members = [(n, _npy(np.ones(2))) for n, _ in members]
    with pytest.raises(ValueError):
        channel.parse_frame(_frame(_result("a0"), _zip(members)))


@pytest.mark.parametrize("array", [np.ones(3, np.float32), np.ones(3, np.int64), np.ones(3, ">f8"),
                                   np.array([b"x"]), np.ones(3, complex)])
def test_an_array_that_is_not_float64_is_refused(array):
    with pytest.raises(ValueError):
        channel.parse_frame(_frame(_result("a0"), _zip([("a0.npy", _npy(array))])))


@pytest.mark.parametrize("change", ["shorter", "longer"])
def test_an_array_whose_header_lies_about_its_size_is_refused(change):
    data = _npy(np.ones(4))
    data = data[:-8] if change == "shorter" else data + b"\0" * 8
    with pytest.raises(ValueError):
        channel.parse_frame(_frame(_result("a0"), _zip([("a0.npy", data)])))


def test_the_arrays_size_budget_holds_exactly_and_is_read_before_inflating(monkeypatch):
    data = [_npy(np.zeros(100)), _npy(np.zeros(50))]
    blob = _zip([("a0.npy", data[0]), ("a1.npy", data[1])], deflate=True)
    frame = _frame(_result("a0", "a1"), blob)
    monkeypatch.setattr(channel, "MAX_RESULT_ARRAY_BYTES", len(data[0]) + len(data[1]))
    assert set(channel.parse_frame(frame)[1]) == {"a0", "a1"}
    monkeypatch.setattr(channel, "MAX_RESULT_ARRAY_BYTES", len(data[0]) + len(data[1]) - 1)
    with pytest.raises(ValueError, match="larger"):
        channel.parse_frame(frame)


def test_a_deflated_bomb_is_refused_unread(monkeypatch):
    monkeypatch.setattr(channel, "MAX_RESULT_ARRAY_BYTES", 1 << 20)
    bomb = _npy(np.zeros((1 << 20) // 8 + 1))
    blob = _zip([("a0.npy", bomb)], deflate=True)
    assert len(blob) < len(bomb) // 100
    inflated: list[int] = []
    real_read = zipfile.ZipExtFile.read
    monkeypatch.setattr(zipfile.ZipExtFile, "read", lambda self, n=-1: inflated.append(n) or real_read(self, n))
    with pytest.raises(ValueError, match="larger"):
        channel.parse_frame(_frame(_result("a0"), blob))
    assert inflated == []


# ---- one call's outcome -------------------------------------------------------------------------

def test_an_outcome_with_values_is_read_as_float64():
    outcome = channel.read_outcome({"values": ["a0", "a1"]}, {"a0": np.ones(2), "a1": np.zeros((1, 2))}, True)
    assert [v.dtype for v in outcome.values] == [np.float64, np.float64]
    assert [v.shape for v in outcome.values] == [(2,), (1, 2)]


@pytest.mark.parametrize("enc", [
    {"error": "x", "kind": "value"}, {"error": "x", "kind": "made up"}, {"error": "x", "exception": "a b"},
    {"error": "x", "exception": 5}, {"error": "x", "exception": "x" * 70}, {"error": "x", "exception": "1Error"},
])
def test_an_outcome_of_no_known_kind_or_exception_is_refused(enc):
    for hidden in (True, False):
        with pytest.raises(ValueError):
            channel.read_outcome(enc, {}, hidden)


def test_a_public_outcome_keeps_its_text_cut_to_500_characters():
    outcome = channel.read_outcome({"error": "e" * 900, "kind": RAISED, "exception": "MyError"}, {}, False)
    assert outcome.error == "e" * 500 and outcome.kind == RAISED and outcome.exception == "MyError"
    plain = channel.read_outcome({"error": "boom"}, {}, False)
    assert plain.kind == RAISED and plain.exception is None and plain.error == "boom"


@pytest.mark.parametrize(("kind", "exception", "words", "kept"), [
    (NOT_ANSWERED, "NotImplementedError", "NotImplementedError", "NotImplementedError"),
    (BAD_RETURN, None, "returned something that is not numbers", None),
    (TIME_LIMIT, None, "gave no result in time", None),
    (RAISED, "ValueError", "ValueError", "ValueError"),
    (RAISED, "Secret_0_12", "an exception", None),
    (RAISED, None, "an exception", None),
])
def test_a_hidden_outcome_keeps_fixed_words_and_only_a_builtin_name(kind, exception, words, kept):
    enc = {"error": "the hidden input was 0.1234", "kind": kind, "exception": exception}
    outcome = channel.read_outcome(enc, {}, True)
    assert (outcome.error, outcome.kind, outcome.exception) == (words, kind, kept)


# ---- cell errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("sent", [None, "x", {"label": "f"}, 3])
def test_cell_errors_that_are_not_a_list_are_none(sent):
    assert channel.read_cell_errors(sent, ["f"], False) == []


def test_a_cell_error_naming_no_sent_cell_or_no_plain_exception_is_dropped():
    sent = [{"label": "g", "exception": "ValueError"}, {"label": "f", "exception": 3}, {"label": "f"},
            {"label": "f", "exception": "no name"}, "f", ["f", "ValueError"],
            {"label": "f", "exception": "ValueError", "text": "t" * 600}]
    for hidden in (False, True):
        errors = channel.read_cell_errors(sent, ["f"], hidden)
        assert [(e.label, e.exception) for e in errors] == [("f", "ValueError")]
    assert str(channel.read_cell_errors(sent, ["f"], False)[0]) == "t" * 500


@pytest.mark.parametrize(("exception", "kept"), [("ZeroDivisionError", "ZeroDivisionError"),
                                                 ("Input_0_5", "an exception")])
def test_a_hidden_cell_error_keeps_fixed_words_and_only_a_builtin_name(exception, kept):
    sent = [{"label": "f", "exception": exception, "text": "the hidden input was 0.1234"}]
    (error,) = channel.read_cell_errors(sent, ["f"], True)
    assert (str(error), error.exception, error.label) == (f"the cell of f raised {kept}", kept, "f")


# ---- a full disk, by number only ----------------------------------------------------------------

@pytest.mark.parametrize(("result", "full"), [
    ({"cell_errors": [{"errno": errno.ENOSPC}]}, True),
    ({"outcomes": [{"values": []}, {"errno": errno.EFBIG}]}, True),
    ({"cell_errors": [{"errno": errno.EACCES}], "outcomes": [{"errno": str(errno.ENOSPC)}]}, False),
    ({"cell_errors": [{"errno": float(errno.ENOSPC)}]}, False),
    ({"cell_errors": {"errno": errno.ENOSPC}, "outcomes": "ENOSPC"}, False),
    ({"cell_errors": ["No space left on device"]}, False),
    ({}, False),
])
def test_a_full_disk_is_read_from_an_integer_errno_only(result, full):
    assert channel.disk_full(result) is full
