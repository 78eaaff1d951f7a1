# kind: notebook
# notebook: 08-cost
# zero: attention_flops
# full: crossover_length
# message: more than the 100,000
import json

from grading_support import answer_cell


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    answer_cell(nb, "attention_flops")["source"].append("\n" + "# padding padding padding\n" * 10_000)
    return json.dumps(nb)
