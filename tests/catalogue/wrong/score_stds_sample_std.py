# notebook: 04-scaling
# replace: score_stds
# zero: score_stds
# message: divides by n-1
def score_stds(q, k):
    dots = (q * k).sum(axis=1)
    d_k = q.shape[1]
    return np.std(dots, ddof=1), np.std(dots / np.sqrt(d_k), ddof=1)  # unbiased, as in statistics class
