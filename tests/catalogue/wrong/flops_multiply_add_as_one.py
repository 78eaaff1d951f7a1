# notebook: 08-cost
# replace: attention_flops
# zero: attention_flops
# message: a multiply-add counted as one FLOP
def attention_flops(T, d):
    scores = T * T * d   # Q K^T: T*T dot products of length d, one FLOP per multiply-add
    mixing = T * T * d   # A V: the same
    return scores + mixing
