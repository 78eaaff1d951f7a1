# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
import json


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["\udc80 printed\n"]},
                               {"output_type": "error", "ename": "\ud800", "evalue": "\udc80", "traceback": ["\udfff"]},
                               {"output_type": "display_data", "data": {"text/html": "<b>\udc80</b>"},
                                "metadata": {"\udc80": 1}}]
    return json.dumps(nb)
