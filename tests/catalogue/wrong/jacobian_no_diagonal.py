# notebook: 05-saturation
# replace: softmax_jacobian
# zero: softmax_jacobian
# message: missing the diagonal
def softmax_jacobian(a):
    return -np.outer(a, a)
