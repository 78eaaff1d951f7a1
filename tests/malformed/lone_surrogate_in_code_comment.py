# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
# message: cannot be stored
import json

from grading_support import answer_cell


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    answer_cell(nb, "attention_flops")["source"].append("\n# the reported payload: \udc80\n")
    return json.dumps(nb)  # "\udc80": valid JSON, no valid UTF-8
