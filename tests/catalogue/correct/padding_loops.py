# notebook: 07-masking
# replace: padding_mask
# full: padding_mask
def padding_mask(lengths, T):
    M = np.zeros((len(lengths), T))
    for b, n in enumerate(lengths):
        M[b, n:] = -np.inf
    return M
