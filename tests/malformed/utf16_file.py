# kind: notebook
# notebook: 08-cost
# zero: attention_flops,crossover_length
# message: could not be read
def mutate(raw: str) -> bytes:
    return raw.encode("utf-16")
