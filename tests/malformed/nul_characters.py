# kind: notebook
# notebook: 08-cost
# full: attention_flops
# zero: crossover_length
# message: cannot be stored
import json

from grading_support import answer_cell


def mutate(raw: str) -> bytes:
    nb = json.loads(raw)
    # a raw NUL byte inside a JSON string (a comment), an escaped NUL in code (not Python: zero)
    answer_cell(nb, "attention_flops")["source"].append("\n# raw @@ byte\n")
    answer_cell(nb, "crossover_length")["source"].append("\nx = 1\u0000\n")
    return json.dumps(nb).encode().replace(b"@@", b"\x00")
