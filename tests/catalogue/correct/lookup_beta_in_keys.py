# notebook: 09-problem-20
# replace: lookup_table_weights
# full: lookup_table_weights
def lookup_table_weights(targets, values, beta):
    m = len(targets)
    W_Q = np.eye(m)[targets]        # a query of type t asks for type targets[t]
    W_K = beta * np.eye(m)          # the margin sits in the keys
    W_V = np.array(values, dtype=float)
    return W_Q, W_K, W_V
