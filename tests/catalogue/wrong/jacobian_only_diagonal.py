# notebook: 05-saturation
# replace: softmax_jacobian
# zero: softmax_jacobian
# message: only the diagonal
def softmax_jacobian(a):
    return np.diag(a * (1 - a))
