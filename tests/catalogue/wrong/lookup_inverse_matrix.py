# notebook: 09-problem-20
# replace: lookup_table_weights
# zero: lookup_table_weights
# message: raised LinAlgError
def lookup_table_weights(targets, values, beta):
    m = len(targets)
    P = np.eye(m)[targets]  # row t selects targets[t]
    # the key of type u advertises the type that targets it: the inverse map, which exists only
    # when targets is a permutation (repeated targets make P singular)
    return beta * np.eye(m), np.linalg.inv(P), np.asarray(values, dtype=float)
