# kind: notebook
# notebook: 08-cost
# zero: attention_flops,crossover_length
# message: nested too deeply
import json


def mutate(raw: str) -> str:
    text = json.dumps(json.loads(raw))
    deep = '{"a":' * 100_000 + "1" + "}" * 100_000
    return text.replace('"metadata": {', '"metadata": {"deep": ' + deep + ", ", 1)
