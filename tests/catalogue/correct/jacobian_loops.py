# notebook: 05-saturation
# replace: softmax_jacobian
# full: softmax_jacobian
def softmax_jacobian(a):
    n = len(a)
    J = np.empty((n, n))
    for j in range(n):
        for l in range(n):
            J[j, l] = a[j] * ((1.0 if j == l else 0.0) - a[l])
    return J
