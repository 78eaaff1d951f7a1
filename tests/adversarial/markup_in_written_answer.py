# kind: notebook
# notebook: 04-scaling
# full: score_stds
# message: Markup in the written answer `variance-derivation` is shown as text
import json

PAYLOAD = '<img src=x onerror="fetch(\'/api/kernels\', {method: \'POST\'})"> <script>alert(1)</script>'


def mutate(raw: str) -> str:
    nb = json.loads(raw)
    for c in nb["cells"]:
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "variance-derivation":
            c["source"] = PAYLOAD
    return json.dumps(nb)
