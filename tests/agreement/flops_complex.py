# notebook: 08-cost
# replace: attention_flops
# zero: attention_flops
# message: complex numbers
def attention_flops(T, d):
    return complex(4 * T * T * d)
