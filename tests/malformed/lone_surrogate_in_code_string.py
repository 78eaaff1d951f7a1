# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
# message: cannot be stored
import json

from grading_support import answer_cell


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    answer_cell(nb, "attention_flops")["source"].append('\n_LABEL = "\udc80\ud800 \ude00\ud83d"\n')
    return json.dumps(nb)
