# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
# message: cannot be stored
import json


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    nb["metadata"]["kernelspec"] = {"name": "python3\udc80", "display_name": "\ud800", "\udc81": "key"}
    for i, cell in enumerate(nb["cells"]):
        cell["id"] = f"cell-{i}-\udc80"
        cell["metadata"]["tags"] = ["\udcff", "ok"]
        cell["metadata"]["\udc82"] = {"\udc83": "\udc84"}
    return json.dumps(nb)
