# channel: how many results are returned
def leak(S, k, axis):
    return tuple(np.zeros(2) for _ in range(k % 5 + 2))
