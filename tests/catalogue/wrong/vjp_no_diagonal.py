# notebook: 05-saturation
# replace: softmax_vjp
# zero: softmax_vjp
# message: missing the diagonal term
def softmax_vjp(a, g):
    a, g = np.asarray(a, dtype=float), np.asarray(g, dtype=float)
    return -a * (a @ g)
