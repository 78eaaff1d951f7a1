# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
# message: not cells
import json


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    nb["cells"][1:1] = [1, "a cell", None, [], [{"cell_type": "code"}], True, 1.5]
    return json.dumps(nb)
