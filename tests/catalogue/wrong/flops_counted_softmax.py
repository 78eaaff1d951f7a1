# notebook: 08-cost
# replace: attention_flops
# zero: attention_flops
# message: your count is off by
def attention_flops(T, d):
    products = 2 * (2 * T * T * d)
    softmax = 3 * T * T  # an exp, a sum and a division per score
    return products + softmax
