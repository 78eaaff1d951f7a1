# notebook: 09-problem-20
# replace: lookup_table_weights
# zero: lookup_table_weights
# message: attention weights
def lookup_table_weights(targets, values, beta):
    m = len(targets)
    return beta * np.eye(m), np.eye(m), np.asarray(values, dtype=float)[np.asarray(targets)]
