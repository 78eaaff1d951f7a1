# notebook: 05-saturation
# replace: softmax_vjp
# full: softmax_vjp
def softmax_vjp(a, g):
    a, g = np.float32(a), np.float32(g)
    return a * (g - np.dot(a, g))
