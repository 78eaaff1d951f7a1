# notebook: 08-cost
# replace: attention_flops
# zero: attention_flops
# message: swapped
def attention_flops(T, d):
    return 4 * T * d * d
