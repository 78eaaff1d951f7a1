# notebook: 05-saturation
# replace: softmax_jacobian
# full: softmax_jacobian
def softmax_jacobian(a):
    return np.diagflat(a) - np.multiply.outer(a, a)
