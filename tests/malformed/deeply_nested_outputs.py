# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
import json


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    text = json.dumps(nb)
    deep = "[" * 200_000 + "]" * 200_000  # far beyond any JSON reader's recursion
    return text.replace('"outputs": []', '"outputs": [' + deep + "]", 1)
