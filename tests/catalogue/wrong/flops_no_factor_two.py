# notebook: 08-cost
# replace: attention_flops
# zero: attention_flops
# message: 2 FLOPs
def attention_flops(T, d):
    return T * T * d
