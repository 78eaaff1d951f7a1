# notebook: 09-problem-20
# replace: lookup_table_weights
# zero: lookup_table_weights
# message: not exact
def lookup_table_weights(targets, values, beta):
    m = len(targets)
    return np.eye(m)[targets], np.eye(m), np.asarray(values, dtype=float)
