# kind: notebook
# notebook: 04-scaling
# full: score_stds
# message: Markup in the written answer `variance-derivation` is shown as text
from grading_support import with_answers

PAYLOAD = '<img src=x onerror="fetch(\'/api/kernels\', {method: \'POST\'})"> <script>alert(1)</script>'


def mutate(raw: str) -> str:
    return with_answers(raw, {"variance-derivation": PAYLOAD})
