# kind: notebook
# notebook: 04-scaling
# full: score_stds
# message: shown as a link
import json

from grading_support import answer_cell


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    # nbconvert stops on an image of an attachment the cell does not hold (no feedback page at all)
    answer_cell(nb, "variance-derivation")["source"] = "My sketch: ![sketch](attachment:sketch.png)"
    return json.dumps(nb)
