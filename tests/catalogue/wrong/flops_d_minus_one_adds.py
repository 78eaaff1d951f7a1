# notebook: 08-cost
# replace: attention_flops
# zero: attention_flops
# message: off by 2T²
def attention_flops(T, d):
    per_dot = d + (d - 1)  # d multiplications, d - 1 additions
    return 2 * T * T * per_dot
