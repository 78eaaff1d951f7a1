# notebook: 08-cost
# replace: crossover_length
# zero: crossover_length
# message: overflowed a fixed-size integer
def crossover_length(d):
    return np.int16(6) * np.int16(d)  # a length fits in 16 bits
