# notebook: 05-saturation
# replace: softmax_vjp
# zero: softmax_vjp
# message: only the diagonal of J
def softmax_vjp(a, g):
    a, g = np.asarray(a, dtype=float), np.asarray(g, dtype=float)
    return a * (1 - a) * g
