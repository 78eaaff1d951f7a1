# kind: notebook
# notebook: 08-cost
# zero: attention_flops,crossover_length
# message: not a notebook
import json


def mutate(raw: str) -> str:
    return json.dumps([json.loads(raw)])
