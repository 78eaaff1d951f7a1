# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
# message: more cell(s) you added are not shown
import json


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    extra = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": f"x{i} = {i}"}
             for i in range(60_000)]
    nb["cells"][3:3] = extra
    return json.dumps(nb)
