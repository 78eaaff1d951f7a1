# notebook: 06-equivariance
# replace: permutation_matrix
# full: permutation_matrix
def permutation_matrix(perm):
    n = len(perm)
    P = np.zeros((n, n))
    P[np.arange(n), perm] = 1
    return P
