"""The edges of the grader's JSON formats (autograder/outputs/json_files.py), without grading: data
holding a ``"format"`` key of its own, data of the wrong shape for its kind, an unknown kind, a
format that is not a version number, old files whose data happens to name the key. The round trips
and the refusal of a newer format are tests/test_results_as_data.py; docs/mutation.md holds this
file's score.
"""

from __future__ import annotations

import json

import pytest

from autograder.outputs import json_files
from autograder.outputs.json_files import FORMATS, KEY, dumps, loads, loads_versioned, read_versioned, write


def test_the_format_comes_first_and_data_cannot_name_its_own():
    assert dumps("verdict", {"a": 1, KEY: 99, "b": [2]}) == '{"format": 1, "a": 1, "b": [2]}'
    assert dumps("verdict", {"z": 1, "a": 2}, sort_keys=True) == '{"a": 2, "format": 1, "z": 1}'
    assert dumps("history", [{KEY: 5}]) == '{"format": 1, "items": [{"format": 5}]}'
    assert loads(dumps("taken", {KEY: 0, "k": "v"}), "taken", "t.json") == {"k": "v"}


def test_data_of_the_wrong_shape_or_an_unknown_kind_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(TypeError, match="a history file holds a list, not dict"):
        dumps("history", {"items": []})
    with pytest.raises(TypeError, match="a verdict file holds an object, not list"):
        dumps("verdict", [1])
    with pytest.raises(ValueError, match=r"no such kind of grader file: 'verdicts' \(one of answers, "):
        dumps("verdicts", {})
    with pytest.raises(ValueError, match="no such kind"):
        loads("{}", "nope", "x.json")
    with pytest.raises(TypeError):
        write(tmp_path / "v.json", "verdict", ["not", "an", "object"])
    assert not (tmp_path / "v.json").exists()


@pytest.mark.parametrize("found", ['"1"', "true", "false", "-1", "1.0", "null", "[1]"])
def test_a_format_that_is_not_a_version_number_is_refused_naming_the_file(found):
    with pytest.raises(ValueError) as caught:
        loads(f'{{"format": {found}, "cells": {{}}}}', "verdict", "some/v.json")
    assert str(caught.value) == f"some/v.json: its format is {json.loads(found)!r}, not a version number"


def test_an_old_file_reads_as_format_0_whatever_its_data_holds(tmp_path):
    assert loads_versioned('["format", {"items": 1}]', "history", "h.json") == (["format", {"items": 1}], 0)
    assert loads_versioned('{"items": [1]}', "history", "h.json") == ({"items": [1]}, 0)
    assert loads_versioned('{"cells": {}}', "verdict", "v.json") == ({"cells": {}}, 0)
    assert loads_versioned('{"format": 0, "cells": {}}', "verdict", "v.json") == ({"cells": {}}, 0)
    assert loads_versioned('{"format": 1}', "history", "h.json") == ([], 1)
    path = tmp_path / "t.json"
    write(path, "taken", {"a/b": "x"})
    assert read_versioned(path, "taken") == ({"a/b": "x"}, FORMATS["taken"])
    assert json_files.read(path, "taken") == {"a/b": "x"}
