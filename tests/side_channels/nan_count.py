# channel: how many entries of the result are NaN
def leak(S, k, axis):
    out = _right(S, axis).reshape(-1)
    out[: k % out.size + 1] = np.nan
    return out.reshape(np.shape(S))
