# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
# message: levels deep
import json


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    text = json.dumps(nb)
    deep = "[" * 500 + "]" * 500  # within what Python's JSON reader takes, far beyond a notebook
    return text.replace('"metadata": {', '"metadata": {"deep": ' + deep + ", ", 3)
