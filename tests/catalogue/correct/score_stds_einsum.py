# notebook: 04-scaling
# replace: score_stds
# full: score_stds
def score_stds(q, k):
    dots = np.einsum("nd,nd->n", q, k)
    return float(np.sqrt(np.mean((dots - dots.mean()) ** 2))), float((dots / q.shape[1] ** 0.5).std())
