# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
# message: key given twice
import json

from grading_support import answer_cell


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    cell = answer_cell(nb, "attention_flops")
    answer = json.dumps(cell["source"])
    cell["source"] = "@SOURCE@"
    text = json.dumps(nb)
    # the stub first, the answer last: Jupyter (JSON.parse) shows the last one, and so does grading
    return text.replace('"@SOURCE@"', '"raise NotImplementedError()", "source": ' + answer)
