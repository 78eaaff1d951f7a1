# notebook: 08-cost
# replace: attention_flops
# full: attention_flops
def attention_flops(T, d):
    return np.array(4 * T * T * d)
