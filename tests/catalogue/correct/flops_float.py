# notebook: 08-cost
# replace: attention_flops
# full: attention_flops
def attention_flops(T, d):
    return 4.0 * T ** 2 * d
