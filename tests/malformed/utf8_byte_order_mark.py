# kind: notebook
# notebook: 08-cost
# full: attention_flops,crossover_length
def mutate(raw: str) -> bytes:
    return b"\xef\xbb\xbf" + raw.encode()
