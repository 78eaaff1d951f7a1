"""Runs *inside* the grading sandbox: execute a student's cells, call one function on the
given cases, and send back plain arrays.

Protocol. stdin: 8-byte big-endian length, a JSON header, then an ``.npz`` archive holding the
array arguments. The descriptor named by $RESULT_FD: the same framing for the results. Only
numbers and arrays cross; the caller loads them with ``allow_pickle=False`` and decides.

This file and ``checking.py`` (a copy of ``selfattn/checking.py``) are the only course code in
the sandbox; the course package, the solutions and the hidden checks are not there.
"""

from __future__ import annotations

import io
import json
import os
import struct
import sys
import traceback


def _read_frame(fd: int) -> tuple[dict, dict]:
    import numpy as np

    data = b""
    while chunk := os.read(fd, 1 << 20):
        data += chunk
    (n,) = struct.unpack(">Q", data[:8])
    header = json.loads(data[8 : 8 + n].decode())
    arrays = dict(np.load(io.BytesIO(data[8 + n :]), allow_pickle=False)) if len(data) > 8 + n else {}
    return header, arrays


def _decode(value, arrays):
    if isinstance(value, dict) and "a" in value:
        return arrays[value["a"]]
    return value["v"]


def main() -> int:
    sys.path.append(os.environ["SELFATTN_SITE"])  # NumPy's folder only: python runs with -I -S
    import numpy as np

    header, arrays = _read_frame(0)
    os.close(0)
    out_fd = int(os.environ["RESULT_FD"])
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from checking import Case, call_cases

    cases = [
        Case(tuple(_decode(a, arrays) for a in c["args"]), {k: _decode(v, arrays) for k, v in c["kwargs"].items()})
        for c in header["cases"]
    ]
    # what the student prints goes nowhere: grading looks only at returned values
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = open(os.devnull, "w")
    namespace = {"__name__": "__student__", "np": np, "numpy": np}
    cell_errors: list[str] = []
    for label, source in header["cells"]:
        try:
            exec(compile(source, f"<{label}>", "exec"), namespace)
        except BaseException as exc:
            tb = traceback.extract_tb(exc.__traceback__)
            line = next((f.lineno for f in reversed(tb) if f.filename == f"<{label}>"), None)
            where = f" (line {line})" if line else ""
            cell_errors.append(f"the cell of {label} raised {type(exc).__name__}: {exc}{where}"[:500])
    fn = namespace.get(header["function"])
    if callable(fn):
        outcomes = call_cases(fn, cases)
    else:
        reason = f"no function named {header['function']} was defined"
        if cell_errors:
            reason += " (" + "; ".join(cell_errors) + ")"
        outcomes = None
    sys.stdout, sys.stderr = real_out, real_err

    result: dict = {"cell_errors": cell_errors}
    store: dict[str, np.ndarray] = {}
    if outcomes is None:
        result["missing"] = reason
    else:
        encoded = []
        for i, o in enumerate(outcomes):
            if o.error is not None:
                encoded.append({"error": o.error})
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
    payload = struct.pack(">Q", len(head)) + head + buf.getvalue()
    view = memoryview(payload)
    while view:
        view = view[os.write(out_fd, view) :]
    os.close(out_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
