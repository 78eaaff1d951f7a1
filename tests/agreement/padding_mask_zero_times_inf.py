# notebook: 07-masking
# replace: padding_mask
# zero: padding_mask
# message: 0 · (-inf) = NaN
def padding_mask(lengths, T):
    return (np.arange(T)[None, :] >= np.asarray(lengths)[:, None]) * -np.inf
