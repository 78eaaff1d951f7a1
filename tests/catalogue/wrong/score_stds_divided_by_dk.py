# notebook: 04-scaling
# replace: score_stds
# zero: score_stds
# message: divides by d_k
def score_stds(q, k):
    dots = np.sum(q * k, axis=1)
    return dots.std(), (dots / q.shape[1]).std()
