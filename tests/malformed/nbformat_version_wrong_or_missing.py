# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
# message: declares nbformat
import json


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    nb["nbformat"] = "5\udc80"
    del nb["nbformat_minor"]
    del nb["metadata"]
    return json.dumps(nb)
