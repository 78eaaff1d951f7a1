# notebook: 09-problem-20
# replace: lookup_table_weights
# zero: lookup_table_weights
# message: W_V has shape
def lookup_table_weights(targets, values, beta):
    m = len(targets)
    return beta * np.eye(m)[targets], np.eye(m), np.asarray(values, dtype=float).T
