# notebook: 08-cost
# replace: attention_flops
# zero: attention_flops
# message: overflowed a fixed-size integer
def attention_flops(T, d):
    T, d = np.int32(T), np.int32(d)  # sizes are small integers
    return 4 * T * T * d
