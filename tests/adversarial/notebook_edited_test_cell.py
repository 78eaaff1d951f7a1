# kind: notebook
# notebook: 07-masking
# zero: causal_mask
# full: padding_mask
# message: was edited
import json

def mutate(raw: str) -> str:
    nb = json.loads(raw)
    for c in nb["cells"]:
        gid = c["metadata"].get("nbgrader", {}).get("grade_id")
        if gid == "causal_mask":
            c["source"] = "def causal_mask(T):\n    return np.zeros((T, T))\n"
        if gid in ("causal_mask-public", "causal_mask-hidden"):
            c["source"] = "pass"
    return json.dumps(nb)
