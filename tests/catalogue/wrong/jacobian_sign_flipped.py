# notebook: 05-saturation
# replace: softmax_jacobian
# zero: softmax_jacobian
# message: sign flipped
def softmax_jacobian(a):
    return np.outer(a, a) - np.diag(a)
