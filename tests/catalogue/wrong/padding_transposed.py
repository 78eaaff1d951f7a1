# notebook: 07-masking
# replace: padding_mask
# zero: padding_mask
# message: transposed
def padding_mask(lengths, T):
    return np.where(np.arange(T)[:, None] < np.asarray(lengths)[None, :], 0.0, -np.inf)
