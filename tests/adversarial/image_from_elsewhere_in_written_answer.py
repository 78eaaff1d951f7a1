# kind: notebook
# notebook: 04-scaling
# full: score_stds
# message: An image in the written answer `variance-derivation` that is not pasted into it is shown as a link
import json

# a tracking pixel: shown as an image, it would be fetched by the instructor's browser in formgrader
PAYLOAD = "The variance is d_k. ![pixel](https://tracker.example/p.png?student=x)"


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    for c in nb["cells"]:
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "variance-derivation":
            c["source"] = PAYLOAD
    return json.dumps(nb)
