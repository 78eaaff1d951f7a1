# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
import json


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["execution_count"] = "@BIG@"
    nb["metadata"]["numbers"] = ["@NEG@", "@FLOAT@", "@NAN@"]
    text = json.dumps(nb)
    return (text.replace('"@BIG@"', "9" * 20_000).replace('"@NEG@"', "-" + "1" * 5_000)
            .replace('"@FLOAT@"', "1e999999").replace('"@NAN@"', "NaN, Infinity, -Infinity"))
