# notebook: 09-problem-20
# replace: lookup_table_weights
# zero: lookup_table_weights
# message: rounded to float16 (half precision)
def lookup_table_weights(targets, values, beta):
    # half precision saves memory, and the lookup is exact anyway
    m = len(targets)
    W_Q = (beta * np.eye(m)[targets]).astype(np.float16)
    W_K = np.eye(m, dtype=np.float16)
    W_V = np.asarray(values).astype(np.float16)
    return W_Q, W_K, W_V
