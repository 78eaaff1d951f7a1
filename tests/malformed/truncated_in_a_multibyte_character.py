# kind: notebook
# notebook: 08-cost
# zero: attention_flops,crossover_length
# message: could not be read
import json

from grading_support import answer_cell


def mutate(raw: str) -> bytes:
    nb = json.loads(raw)
    answer_cell(nb, "crossover_length")["source"].append("\n# √ and the rest\n")
    data = json.dumps(nb, ensure_ascii=False).encode()
    return data[: data.index("√".encode()) + 1]  # cut inside a three-byte character
