"""Runs *inside* the grading sandbox: execute a student's cells, call one function on the
given cases, and send back plain arrays.

Protocol. stdin: an 8-byte big-endian length and a JSON header with the cells and the function's
name. The harness runs the cells, then writes one byte on the descriptor named by $RESULT_FD:
``R`` asks for the cases, which follow on stdin (a length-prefixed JSON header, then a
length-prefixed ``.npz`` with the array arguments); ``M`` says the function is missing. So the
cases exist in this process only after the student's cells have run. The results follow the
byte in the same framing. Only numbers and arrays cross; the caller checks every array's
declared size, loads them with ``allow_pickle=False`` and decides.

A run judged with the course's functions (fair blame) names them in the header's ``oracle``: their
cells come with no source, and the harness defines in their place a stand-in that sends its
arguments to the grader and returns the arrays it answers (see ``autograder/sandbox/oracle.py``); so
no code of the course's solutions is ever in this process. In such a run every message after the
greeting starts with ``Q`` (a request) or ``F`` (the final frame), and stdin stays open for the answers.

This file and ``calling.py`` (a copy of ``selfattn/checks/calling.py``) are the only course code in
the sandbox; the course package, the solutions and the hidden checks are not there.
"""

from __future__ import annotations

import io
import json
import os
import struct
import sys


def _read_exact(fd: int, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, min(n - len(data), 1 << 20))
        if not chunk:
            raise EOFError("the grader's input ended early")
        data += chunk
    return data


def _read_json(fd: int) -> dict:
    (n,) = struct.unpack(">Q", _read_exact(fd, 8))
    return json.loads(_read_exact(fd, n).decode())


def _read_arrays(fd: int) -> dict:
    import numpy as np

    (n,) = struct.unpack(">Q", _read_exact(fd, 8))
    return dict(np.load(io.BytesIO(_read_exact(fd, n)), allow_pickle=False))


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]


def _decode(value, arrays):
    if isinstance(value, dict) and "a" in value:
        return arrays[value["a"]]
    return value["v"]


def _encode_argument(value, store: dict):
    """One argument of a stand-in's call as JSON (arrays go to ``store``, sent as ``.npz``)."""
    import numpy as np

    if value is None or isinstance(value, (bool, int, float)):
        return {"v": value}
    if isinstance(value, np.generic):
        return {"v": value.item()}
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise TypeError("the course's functions take arrays of numbers and plain numbers here")
    key = f"a{len(store)}"
    store[key] = arr
    return {"a": key}


def stand_in(name: str, out_fd: int):
    """A function called ``name`` that asks the grader for the course's result (arrays only cross)."""
    import builtins

    import numpy as np

    def course_function(*args, **kwargs):
        store: dict = {}
        header = {"function": name, "args": [_encode_argument(a, store) for a in args],
                  "kwargs": {k: _encode_argument(v, store) for k, v in kwargs.items()}}
        buf = io.BytesIO()
        np.savez(buf, **store)
        head = json.dumps(header).encode()
        _write_all(out_fd, b"Q" + struct.pack(">Q", len(head)) + head + struct.pack(">Q", buf.tell())
                   + buf.getvalue())
        reply = _read_json(0)
        arrays = _read_arrays(0)
        if "error" in reply:
            kind = getattr(builtins, str(reply["error"]), None)
            kind = kind if isinstance(kind, type) and issubclass(kind, Exception) else ValueError
            raise kind(f"the course's {name} raised {kind.__name__} for these arguments")
        values = [arrays[k] for k in reply["values"]]
        return tuple(values) if reply.get("tuple") else values[0]

    course_function.__name__ = course_function.__qualname__ = name
    return course_function


def _capped_calls(call_cases, fn, cases: list, cap: int) -> tuple[list, bool]:
    """(outcomes, too large): ``fn`` called on each case in turn (``call_cases``, from ``calling``),
    stopping as soon as the results' arrays add up to more than ``cap`` bytes (the grader's size cap;
    ``0``: none). The run then ends at once, so how long a refused run lasts, and whether its time or
    memory limit ends it first, does not depend on how large the answer made its results."""
    outcomes, size = [], 0
    for case in cases:
        outcomes += call_cases(fn, [case])
        size += sum(v.nbytes for v in outcomes[-1].values or ())
        if cap and size > cap:
            return outcomes, True
    return outcomes, False


def main() -> int:
    sys.path.append(os.environ["SELFATTN_SITE"])  # NumPy's folder only: python runs with -I -S
    import numpy as np

    header = _read_json(0)
    out_fd = int(os.environ["RESULT_FD"])
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from calling import Case, allowed_imports_only, call_cases, exec_cells, fresh_namespace

    # what the student prints goes nowhere: grading looks only at returned values
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = open(os.devnull, "w")
    # the answer cells run as in the notebook's check(): only the standard library and NumPy
    namespace = fresh_namespace()
    oracle = set(header.get("oracle") or ())
    with allowed_imports_only():
        cell_errors = []
        for label, source in header["cells"]:
            if source is None and label in oracle:  # the course's function: a stand-in, never its code
                namespace[label] = stand_in(label, out_fd)
            else:
                cell_errors += exec_cells([(label, source)], namespace)
        fn = namespace.get(header["function"])
        if callable(fn):
            _write_all(out_fd, b"R")  # only now do the cases come
            request = _read_json(0)
            arrays = _read_arrays(0)
            if not oracle:
                os.close(0)
            cases = [Case(tuple(_decode(a, arrays) for a in c["args"]),
                          {k: _decode(v, arrays) for k, v in c["kwargs"].items()}) for c in request["cases"]]
            outcomes, too_large = _capped_calls(call_cases, fn, cases, int(header.get("max_result_bytes") or 0))
        else:
            _write_all(out_fd, b"M")
            reason = f"no function named {header['function']} was defined"
            if cell_errors:
                reason += " (" + "; ".join(map(str, cell_errors)) + ")"
            outcomes, too_large = None, False
    sys.stdout, sys.stderr = real_out, real_err

    result: dict = {"cell_errors": [e.to_json() for e in cell_errors]}
    store: dict[str, np.ndarray] = {}
    if outcomes is None:
        result["missing"] = reason
    elif too_large:
        result["too_large"] = True
    else:
        encoded = []
        for i, o in enumerate(outcomes):
            if o.error is not None:
                encoded.append({"error": o.error, "kind": o.kind, "exception": o.exception, "errno": o.errno})
            else:
                keys = []
                for j, v in enumerate(o.values):
                    key = f"r{i}_{j}"
                    store[key] = np.asarray(v, dtype=np.float64)
                    keys.append(key)
                encoded.append({"values": keys})
        result["outcomes"] = encoded
    buf = io.BytesIO()
    np.savez(buf, **store)
    head = json.dumps(result).encode()
    tag = b"F" if oracle and outcomes is not None else b""
    _write_all(out_fd, tag + struct.pack(">Q", len(head)) + head + struct.pack(">Q", buf.tell()) + buf.getvalue())
    os.close(out_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
