# notebook: 09-problem-20
# replace: lookup_table_weights
# zero: lookup_table_weights
# message: does not read
def lookup_table_weights(targets, values, beta):
    m = len(targets)
    inverse = np.argsort(targets)  # the type that targets each type: right only when targets is a permutation
    return beta * np.eye(m), np.eye(m)[inverse], np.asarray(values, dtype=float)
