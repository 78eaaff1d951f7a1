# notebook: 09-problem-20
# replace: lookup_table_weights
# full: lookup_table_weights
def lookup_table_weights(targets, values, beta):
    m = len(targets)
    W_Q = np.zeros((m, m))
    for t, u in enumerate(targets):
        W_Q[t, u] = 1.0
    return W_Q, beta * np.eye(m), np.array(values, dtype=float)
