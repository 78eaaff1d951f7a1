# notebook: 07-masking
# replace: padding_mask
# full: padding_mask
def padding_mask(lengths, T):
    past_end = np.subtract.outer(np.asarray(lengths), np.arange(T)) <= 0  # (B, T)
    return np.where(past_end, -np.inf, 0.0)
