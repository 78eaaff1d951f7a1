# notebook: 04-scaling
# replace: score_stds
# zero: score_stds
# message: used every pair
def score_stds(q, k):
    scores = q @ k.T
    return scores.std(), (scores / np.sqrt(q.shape[1])).std()
