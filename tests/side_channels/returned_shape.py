# channel: the shape of the returned array
def leak(S, k, axis):
    return np.zeros((k, 7))
