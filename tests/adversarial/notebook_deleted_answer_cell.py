# kind: notebook
# notebook: 07-masking
# zero: causal_mask
# full: padding_mask
# message: missing
import json

def mutate(raw: str) -> str:
    nb = json.loads(raw)
    nb["cells"] = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") != "causal_mask"]
    return json.dumps(nb)
