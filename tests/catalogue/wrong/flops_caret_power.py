# notebook: 08-cost
# replace: attention_flops
# zero: attention_flops
# message: ^ is bitwise xor
def attention_flops(T, d):
    return 4 * T ^ 2 * d
