# notebook: 09-problem-20
# replace: lookup_table_weights
# full: lookup_table_weights
def lookup_table_weights(targets, values, beta):
    m = len(targets)
    root = np.sqrt(beta)
    return root * np.eye(m)[targets], root * np.eye(m), np.asarray(values, dtype=np.float64)
