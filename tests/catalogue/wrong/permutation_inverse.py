# notebook: 06-equivariance
# replace: permutation_matrix
# zero: permutation_matrix
# message: inverse permutation
def permutation_matrix(perm):
    return np.eye(len(perm))[perm].T
