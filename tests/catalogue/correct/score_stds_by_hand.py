# notebook: 04-scaling
# replace: score_stds
# full: score_stds
import math

def score_stds(q, k):
    dots = [float(np.dot(x, y)) for x, y in zip(q, k)]
    mean = sum(dots) / len(dots)
    std = math.sqrt(sum((s - mean) ** 2 for s in dots) / len(dots))
    return std, std / math.sqrt(q.shape[1])
