# kind: notebook
# notebook: 07-masking
# zero: causal_mask,padding_mask
# message: could not be read
def mutate(raw: str) -> str:
    return ""
