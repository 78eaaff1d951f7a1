# notebook: 06-equivariance
# replace: permutation_matrix
# full: permutation_matrix
def permutation_matrix(perm):
    n = len(perm)
    return [[1.0 if j == perm[i] else 0.0 for j in range(n)] for i in range(n)]
