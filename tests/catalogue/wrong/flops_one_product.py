# notebook: 08-cost
# replace: attention_flops
# zero: attention_flops
# message: only one of the two products
def attention_flops(T, d):
    return 2 * T * T * d
