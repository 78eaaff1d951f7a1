# notebook: 05-saturation
# replace: softmax_jacobian
# zero: softmax_jacobian
# message: .T does nothing to a 1-D array
def softmax_jacobian(a):
    a = np.asarray(a, dtype=float)
    return np.diag(a) - a * a.T  # a aᵀ
