# kind: notebook
# notebook: 04-scaling
# full: score_stds
# message: was dropped
import json

from grading_support import answer_cell

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP4z8DwHwAFAAH/q842iQAAAABJRU5ErkJggg==")


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    cell = answer_cell(nb, "variance-derivation")
    cell["source"] = "See ![x](attachment:\udc80.png) and ![y](attachment:ok.png)"
    cell["attachments"] = {"\udc80.png": {"image/png": PNG}, "ok.png": {"image/png": PNG + "\udc80"},
                           "fine.png": {"image/png": PNG}}
    return json.dumps(nb)
