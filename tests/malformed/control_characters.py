# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
import json

from grading_support import answer_cell


def mutate(raw: str) -> bytes:
    nb = json.loads(raw)
    answer_cell(nb, "attention_flops")["source"].append(
        "\n# \x1b[31mred\x1b[0m \x07 \x08 \x0b \x0c \x7f \x85 \u2028 \u2029 \ufeff \ufffe \uffff \U0010ffff\n")
    # a raw tab and a raw carriage return inside a JSON string (not allowed by strict JSON)
    answer_cell(nb, "crossover_length")["source"].append("\n# @T @R\n")
    return json.dumps(nb).encode().replace(b"@T", b"\t").replace(b"@R", b"\r")
