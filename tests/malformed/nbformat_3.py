# kind: notebook
# notebook: 08-cost
# zero: attention_flops,crossover_length
# message: nbformat 3
import json


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    cells = [{"cell_type": c["cell_type"], "input": c["source"], "metadata": c["metadata"]} for c in nb["cells"]]
    return json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": cells}]})
