# notebook: 05-saturation
# replace: softmax_vjp
# zero: softmax_vjp
# message: mean(g) is not the dot product
def softmax_vjp(a, g):
    a, g = np.asarray(a, dtype=float), np.asarray(g, dtype=float)
    return a * (g - g.mean())  # centre the gradient
