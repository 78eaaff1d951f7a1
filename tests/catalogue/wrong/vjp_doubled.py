# notebook: 05-saturation
# replace: softmax_vjp
# zero: softmax_vjp
# message: your values are the right ones times
def softmax_vjp(a, g):
    a, g = np.asarray(a, dtype=float), np.asarray(g, dtype=float)
    return 2 * a * (g - a @ g)  # the 2 from d(x²)/dx
