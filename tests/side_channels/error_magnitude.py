# channel: the size of the error (the largest error a message would quote)
def leak(S, k, axis):
    return _right(S, axis) + k
