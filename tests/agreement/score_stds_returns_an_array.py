# notebook: 04-scaling
# replace: score_stds
# zero: score_stds
# message: separate results are expected
def score_stds(q, k):
    dots = np.sum(q * k, axis=1)
    return np.array([dots.std(), (dots / np.sqrt(q.shape[1])).std()])
