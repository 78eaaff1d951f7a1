# kind: notebook
# notebook: 07-masking
# full: causal_mask,padding_mask
# message: the course's points were used
import json

def mutate(raw: str) -> str:
    nb = json.loads(raw)
    for c in nb["cells"]:
        meta = c["metadata"].get("nbgrader", {})
        if "points" in meta:
            meta["points"] = 1000
    return json.dumps(nb)
