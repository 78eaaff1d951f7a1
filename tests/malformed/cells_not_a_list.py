# kind: notebook
# notebook: 08-cost
# zero: attention_flops,crossover_length
# message: no list of cells
import json


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    nb["cells"] = {str(i): c for i, c in enumerate(nb["cells"])}
    return json.dumps(nb)
