# notebook: 05-saturation
# replace: softmax_jacobian
# zero: softmax_jacobian
# message: not the outer product
def softmax_jacobian(a):
    a = np.asarray(a, dtype=float)
    return np.diag(a) - a @ a
