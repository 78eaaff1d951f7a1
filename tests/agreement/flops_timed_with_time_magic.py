# notebook: 08-cost
# replace: attention_flops
# full: attention_flops
%%time
def attention_flops(T, d):
    return 4 * T * T * d
