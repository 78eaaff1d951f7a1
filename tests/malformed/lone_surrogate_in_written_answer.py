# kind: notebook
# notebook: 04-scaling
# full: score_stds
# message: cannot be stored
import json

from grading_support import answer_cell


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    answer_cell(nb, "variance-derivation")["source"] = "The variance is d_k \udc80 because each term \udfff adds 1."
    return json.dumps(nb)
