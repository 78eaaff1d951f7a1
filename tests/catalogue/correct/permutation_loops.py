# notebook: 06-equivariance
# replace: permutation_matrix
# full: permutation_matrix
def permutation_matrix(perm):
    n = len(perm)
    P = np.zeros((n, n))
    for i, p in enumerate(perm):
        P[i, p] = 1
    return P
