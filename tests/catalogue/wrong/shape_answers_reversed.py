# notebook: 02-queries-keys-values
# replace: shape_answers
# zero: shape_answers
# message: rows, columns
def shape_answers():
    return np.array([(64, 10), (64, 10), (64, 10), (10, 10), (64, 10)])
