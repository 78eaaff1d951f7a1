# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
import json


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    nb["cells"][2:2] = [{}, {"cell_type": "code"}, {"source": 42}, {"source": {"a": 1}},
                        {"source": ["x = 1\n", 2, None, ["y"]], "metadata": []},
                        {"cell_type": ["code"], "metadata": {"nbgrader": []}, "source": "z = 3"},
                        {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": ["attention_flops"]}},
                         "source": "w = 4"}]
    for cell in nb["cells"]:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
        cell.pop("id", None)
    return json.dumps(nb)
