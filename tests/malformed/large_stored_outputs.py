# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
import base64
import json
import random


def mutate(raw: str) -> str:
    # an honest notebook with big plots and a long printout: about 50 MB, nearly all of it outputs
    nb = json.loads(raw)
    image = base64.b64encode(random.Random(0).randbytes(6_000_000)).decode()
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "display_data", "metadata": {},
                                "data": {"image/png": image, "text/plain": ["<Figure size 640x480>"]}},
                               {"output_type": "stream", "name": "stdout", "text": ["step done\n"] * 20_000}]
    return json.dumps(nb, indent=1)
